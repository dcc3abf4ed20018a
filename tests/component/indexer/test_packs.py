"""Packs through the release job (issue 34): resource, data and shader packs and .mrpack modpacks
read from a FakeGitHub over real HTTP within the Range budget, stored with their project type,
loaders and game versions; archives that are no pack skipped with their own reasons."""

from __future__ import annotations

import hashlib

import pytest

from indexium_db.queries import skips as skips_q
from indexium_devstack import jars, packs
from indexium_jar import formats
from indexium_jar.gameversions import default_table

MAX_REQUESTS = 3  # docs/indexer.md "Request budget": median <= 2 per archive, max 3


def releases_of(versions):
    """The full releases among game versions (a pack format also admits its snapshots)."""
    return [v for v in versions if default_table().by_id[v].type == "release"]


async def _file(db, name):
    return await db.fetchrow("""SELECT f.*, m.project_type AS mod_type, m.slug, v.status, v.id AS vid,
                                       v.game_versions_inferred AS v_inferred
                                FROM version_files f JOIN mod_versions v ON v.id = f.version_id
                                JOIN mods m ON m.id = v.mod_id WHERE f.filename = $1""", name)


async def test_a_resource_pack_is_indexed_with_its_game_versions(gh, releases, db):
    repo = gh.add_repo("ana", "crisp-textures")
    rel = gh.add_release(repo, "v1.0", [("Crisp-1.0.zip", packs.resource_pack(15, "Crisp and clean", filler=300))])
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and result.skipped == [] and result.requests <= MAX_REQUESTS
    f = await _file(db, "Crisp-1.0.zip")
    assert (f["project_type"], f["mod_type"], f["loaders"]) == (formats.RESOURCEPACK, formats.RESOURCEPACK,
                                                                ["minecraft"])
    assert releases_of(f["game_versions"]) == ["1.20.1", "1.20"]  # pack_format 15, the table's resource column
    assert f["pack"]["game_versions"]["source"].startswith("pack.mcmeta") and not f["game_versions_inferred"]
    assert f["manifests"] == [] and await db.fetchval("SELECT count(*) FROM mod_icons") == 1
    card = await db.fetchrow("SELECT name, summary, environment FROM mods")
    assert (card["name"], card["summary"], card["environment"]) == ("crisp-textures", "Crisp and clean", "client")


async def test_a_data_pack_uses_the_data_column(gh, releases, db):
    repo = gh.add_repo("ana", "more-loot")
    rel = gh.add_release(repo, "v2", [("more-loot.zip", packs.data_pack(15))])
    assert (await releases.handle(rel)).outcome == "indexed"
    f = await _file(db, "more-loot.zip")
    assert (f["project_type"], f["loaders"]) == (formats.DATAPACK, ["datapack"])
    assert releases_of(f["game_versions"]) == ["1.20.1", "1.20"]  # data pack format 15: the data column


@pytest.mark.parametrize("name, versions, inferred", [
    ("Lumina 2.1 for MC 1.20.1", ["1.20.1"], True),
    ("Lumina 2.1", [], False),  # "not stated": the archive carries none, the release names none
])
async def test_a_shader_packs_game_versions_come_from_the_release_marked_inferred(gh, releases, db, api, name,
                                                                                   versions, inferred):
    repo = gh.add_repo("ana", "lumina")
    rel = gh.add_release(repo, "v2.1", [("Lumina.zip", packs.shader_pack(filler=50))], name=name)
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and result.requests <= MAX_REQUESTS
    f = await _file(db, "Lumina.zip")
    assert (f["project_type"], f["loaders"]) == (formats.SHADER, ["iris", "optifine"])
    assert (f["game_versions"], f["game_versions_inferred"], f["v_inferred"]) == (versions, inferred, inferred)
    # Served marked: /api/v1's version and file, and the page's header and file table.
    resp = await api.get(f"/api/v1/mods/{f['slug']}/versions")
    (version,) = await resp.json()
    assert (version["game_versions"], version["game_versions_inferred"]) == (versions, inferred)
    assert version["files"][0]["game_versions_inferred"] is inferred
    page = await (await api.get(f"/mods/{f['slug']}")).text()
    assert ("(inferred: the files do not state it)" in page) is inferred
    assert ("game versions not stated" in page) is not inferred


async def test_a_modpack_lists_its_files_and_resolves_them_to_indexed_mods(gh, releases, db, api):
    mod_repo = gh.add_repo("caffeine", "sodium")
    jar = jars.fabric_jar("sodium", "0.5.0", minecraft="1.20.1")
    mod_rel = gh.add_release(mod_repo, "mc1.20.1-0.5.0", [("sodium-0.5.0.jar", jar)])
    assert (await releases.handle(mod_rel)).outcome == "indexed"
    jar_url = "https://github.com/caffeine/sodium/releases/download/mc1.20.1-0.5.0/sodium-0.5.0.jar"
    pack_repo = gh.add_repo("packer", "fast-pack")
    pack = packs.mrpack([packs.pack_file("mods/sodium-0.5.0.jar", jar, jar_url,
                                         env={"client": "required", "server": "unsupported"}),
                         packs.pack_file("mods/other.jar", b"not indexed", "https://cdn.modrinth.com/data/x/o.jar")],
                        name="Fast Pack", overrides={"mods/bundled.jar": jars.fabric_jar("bundled", "1.0")})
    pack_rel = gh.add_release(pack_repo, "1.0.0", [("FastPack-1.0.0.mrpack", pack)])
    result = await releases.handle(pack_rel)
    assert result.outcome == "indexed" and result.requests <= MAX_REQUESTS
    f = await _file(db, "FastPack-1.0.0.mrpack")
    assert (f["project_type"], f["mod_type"], f["loaders"], f["game_versions"]) == (
        formats.MODPACK, formats.MODPACK, ["fabric"], ["1.20.1"])
    assert f["pack"]["nested_jars"] == ["overrides/mods/bundled.jar"]  # scanned like nested jars
    assert (await db.fetchrow("SELECT name FROM mods WHERE id = (SELECT mod_id FROM mod_versions WHERE id = $1)",
                              f["vid"]))["name"] == "Fast Pack"
    rows = await db.fetch("SELECT path, sha512 FROM pack_files WHERE file_id = $1 ORDER BY path", f["id"])
    assert [r["path"] for r in rows] == ["mods/other.jar", "mods/sodium-0.5.0.jar"]
    # /v2 resolves the files by hash once the scan has the hashes of both files (here set as it would).
    for data, name in ((jar, "sodium-0.5.0.jar"), (pack, "FastPack-1.0.0.mrpack")):
        await db.execute("UPDATE version_files SET sha1 = $2, sha512 = $3, sha256 = $4 WHERE filename = $1", name,
                         hashlib.sha1(data).hexdigest(), hashlib.sha512(data).hexdigest(),
                         hashlib.sha256(data).hexdigest())
    async with api.get(f"/v2/project/{f['slug']}/version") as resp:
        assert resp.status == 200
        (version,) = await resp.json()
    sodium = await db.fetchrow("SELECT m.public_id, v.public_id AS vid FROM mods m JOIN mod_versions v ON v.mod_id = m.id"
                               " WHERE m.slug = 'sodium'")
    embedded = [d for d in version["dependencies"] if d["dependency_type"] == "embedded"]
    assert embedded == [{"version_id": sodium["vid"], "project_id": sodium["public_id"], "file_name": None,
                         "dependency_type": "embedded"}]
    async with api.get(f"/v2/project/{f['slug']}") as resp:
        assert (await resp.json())["project_type"] == formats.MODPACK


async def test_a_modpack_downloading_from_elsewhere_is_held_with_the_reason(gh, releases, db):
    repo = gh.add_repo("packer", "shady-pack")
    pack = packs.mrpack([packs.pack_file("mods/a.jar", b"a", "https://example.com/a.jar")])
    assert (await releases.handle(gh.add_release(repo, "1.0", [("shady.mrpack", pack)]))).outcome == "indexed"
    f = await _file(db, "shady.mrpack")
    assert f["status"] == "quarantined"
    reason = await db.fetchval("SELECT reason FROM quarantine_decisions WHERE version_id = $1", f["vid"])
    assert "outside the allowed hosts" in reason and "example.com" in reason


@pytest.mark.parametrize("name, body, code", [
    ("pack-cf.zip", packs.zip_of({"manifest.json": {"minecraft": {}}, "overrides/config/a.txt": "x"}),
     "curseforge_modpack"),
    ("mod-1.0-sources.zip", packs.zip_of({"src/A.java": "class A {}"}), "sources_archive"),
    ("old-texture-pack.zip", packs.zip_of({"pack.txt": "Old", "terrain.png": packs.PNG}), "legacy_texture_pack"),
    ("screenshots.zip", packs.zip_of({"a.txt": "x", "b/c.txt": "y"}), "not_a_pack"),
])
async def test_archives_that_are_no_pack_are_skipped_with_their_own_reason(gh, releases, db, name, body, code):
    repo = gh.add_repo("ana", "misc")
    result = await releases.handle(gh.add_release(repo, "v1", [(name, body)]))
    assert result.outcome == "ignored" and result.skipped == [(name, code)]
    (row,) = await skips_q.left_out(db, github_repo_ids=[repo.id])
    assert (row["asset_name"], row["code"]) == (name, code) and row["reason"]
    assert await db.fetchval("SELECT count(*) FROM mods") == 0


async def test_a_zip_carrying_a_mod_manifest_is_read_as_a_mod(gh, releases, db):
    repo = gh.add_repo("ana", "zipped-mod")
    rel = gh.add_release(repo, "v1", [("zipped-mod.zip", jars.fabric_jar("zipped", "1.0", minecraft="1.20.1"))])
    assert (await releases.handle(rel)).outcome == "indexed"
    f = await _file(db, "zipped-mod.zip")
    assert (f["project_type"], f["loaders"], f["pack"]) == (formats.MOD, ["fabric"], None)


async def test_forge_update_json_lists_mod_files_only(gh, releases, db, api):
    """A repository that releases its Forge mod and a Forge modpack together: the pack's loader
    is forge, but it is no update of the mod."""
    repo = gh.add_repo("ana", "forgey")
    pack = packs.mrpack([], name="Forgey Pack", minecraft="1.19.2", loader=("forge", "43.2.0"))  # not the mod's
    rel = gh.add_release(repo, "2.0.0", [("forgey-2.0.0.jar", jars.forge_jar("forgey", "2.0.0")),
                                         ("forgey-pack.mrpack", pack)])
    assert (await releases.handle(rel)).outcome == "indexed"
    # The modpack is a project of its own (issue 34); the mod's version has the mod's loader alone.
    rows = await db.fetch("SELECT m.project_type, v.loaders FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                          " ORDER BY m.project_type")
    assert [tuple(r) for r in rows] == [(formats.MOD, ["forge"]), (formats.MODPACK, ["forge"])]
    async with api.get("/updates/forgey/forge_updates.json") as resp:
        body = await resp.json()
    assert resp.status == 200 and body["promos"]["1.20.1-latest"] == "2.0.0"
    assert not any(k.startswith("1.19.2") for k in body["promos"])  # the pack's game version: not an update
    assert await db.fetchval("SELECT count(*) FROM version_files WHERE pack IS NOT NULL") == 1


async def test_a_sponge_plugin_is_indexed_as_a_plugin(gh, releases, db):
    repo = gh.add_repo("ana", "spongey")
    plugin = jars.build_jar([("META-INF/sponge_plugins.json", b'{"loader": {"name": "java_plain", "version": "1.0"},'
                              b' "plugins": [{"id": "spongey", "name": "Spongey", "version": "1.0.0",'
                              b' "entrypoint": "a.B", "dependencies": [{"id": "spongeapi", "version": "8.0.0"}]}]}')])
    assert (await releases.handle(gh.add_release(repo, "1.0.0", [("spongey-1.0.0.jar", plugin)]))).outcome == "indexed"
    f = await _file(db, "spongey-1.0.0.jar")
    assert (f["loaders"], f["project_type"], f["mod_type"]) == (["sponge"], formats.PLUGIN, formats.PLUGIN)
