"""One repository, several projects (issue 34): a project is (repository, identity key), so a
release publishing two mods, or a mod and its resource pack, makes one project of each, with its
own slug, page, versions, search card, type and hash answers; loader variants of one mod stay one
project; ownership, hiding and removal still follow the repository.

Before this, a project was its repository: the second mod's jar was a file of the first, could
not be found by its own name, and its hash answered with the first mod.
"""

from __future__ import annotations

import msgspec
import pytest

from indexium_contracts import github
from indexium_db.queries import github as github_q
from indexium_indexer.github import card
from indexium_jar.model import ModRecord
from indexium_devstack import jars, packs
from indexium_jar import formats

from .test_ownership import T0, DAY, answered_by, asset, lookups, publish, scan  # noqa: F401 (scan: a fixture)

ALPHA = jars.fabric_jar("mono_alpha", "1.0.0", "Mono Alpha", "Alpha does the first thing.")
BETA = jars.fabric_jar("mono_beta", "1.0.0", "Mono Beta", "Beta does another thing.")


async def projects(db):
    return [tuple(r) for r in await db.fetch(
        "SELECT slug, name, identity, project_type FROM mods ORDER BY created_at, slug")]


async def public_id(db, slug: str) -> str:
    return await db.fetchval("SELECT public_id FROM mods WHERE slug = $1", slug)


async def test_two_mods_in_one_release_are_two_projects_each_answering_for_its_own_jar(gh, releases, scan, api, db):
    await publish(gh, releases, scan, "mono/monorepo", "v1.0.0",
                  [asset("mono_alpha-1.0.0.jar", ALPHA, T0), asset("mono_beta-1.0.0.jar", BETA, T0)])
    assert await projects(db) == [("mono_alpha", "Mono Alpha", "mono_alpha", formats.MOD),
                                  ("mono_beta", "Mono Beta", "mono_beta", formats.MOD)]
    # Each hash answers with its own project, on /api/v1 and /v2 alike.
    assert await lookups(api, ALPHA) == answered_by(await public_id(db, "mono_alpha"), "mono_alpha")
    assert await lookups(api, BETA) == answered_by(await public_id(db, "mono_beta"), "mono_beta")
    # Each has its own page and version, with its own file.
    for slug, jar in (("mono_alpha", "mono_alpha-1.0.0.jar"), ("mono_beta", "mono_beta-1.0.0.jar")):
        async with api.get(f"/api/v1/mods/{slug}/versions") as resp:
            versions = await resp.json()
        assert resp.status == 200, versions
        assert [[f["filename"] for f in v["files"]] for v in versions] == [[jar]]
    # Each has its own page on the site.
    for slug, name in (("mono_alpha", "Mono Alpha"), ("mono_beta", "Mono Beta")):
        async with api.get(f"/mods/{slug}") as resp:
            assert resp.status == 200 and f"<h1>{name}" in await resp.text()
    # Each is found by its own name.
    for query, slug in (("mono alpha", "mono_alpha"), ("mono beta", "mono_beta")):
        async with api.get("/api/v1/mods", params={"q": query}) as resp:
            assert [h["slug"] for h in (await resp.json())["hits"]][:1] == [slug]
        async with api.get("/v2/search", params={"query": query}) as resp:
            assert [h["slug"] for h in (await resp.json())["hits"]][:1] == [slug]


async def test_a_later_release_of_the_second_mod_attaches_to_its_project(gh, releases, scan, api, db):
    await publish(gh, releases, scan, "mono/monorepo", "v1.0.0",
                  [asset("mono_alpha-1.0.0.jar", ALPHA, T0), asset("mono_beta-1.0.0.jar", BETA, T0)])
    beta2 = jars.fabric_jar("mono_beta", "1.1.0", "Mono Beta", "Beta does another thing.", seed=2)
    await publish(gh, releases, scan, "mono/monorepo", "beta-1.1.0", [asset("mono_beta-1.1.0.jar", beta2, T0 + DAY)])
    rows = await db.fetch("""SELECT m.slug, array_agg(v.version_number ORDER BY v.created_at) AS vs
                             FROM mods m JOIN mod_versions v ON v.mod_id = m.id GROUP BY m.slug ORDER BY m.slug""")
    assert [tuple(r) for r in rows] == [("mono_alpha", ["v1.0.0"]), ("mono_beta", ["v1.0.0", "beta-1.1.0"])]
    assert await lookups(api, beta2) == answered_by(await public_id(db, "mono_beta"), "mono_beta")
    assert await db.fetchval("SELECT latest_version FROM mods WHERE slug = 'mono_alpha'") == "v1.0.0"


async def test_loader_variants_of_one_mod_stay_one_project_with_a_file_per_loader(gh, releases, db):
    repo = gh.add_repo("multi", "mymod")
    rel = gh.add_release(repo, "1.0.0", [
        ("mymod-fabric-1.0.0.jar", jars.fabric_jar("mymod", "1.0.0", "My Mod")),
        ("mymod-forge-1.0.0.jar", jars.forge_jar("mymod_forge", "1.0.0", "My Mod")),
        ("mymod-neoforge-1.0.0.jar", jars.neoforge_jar("mymod_neoforge", "1.0.0", "My Mod (NeoForge)")),
        ("mymod-quilt-1.0.0.jar", jars.fabric_jar("mymod", "1.0.0", "Another Name, same id", seed=3)),
    ])
    result = await releases.handle(rel)
    assert len(result.events) == 1
    assert await projects(db) == [("mymod", "My Mod", "mymod", formats.MOD)]
    files = await db.fetch("SELECT filename, loaders, is_primary FROM version_files ORDER BY filename")
    assert [(f["filename"], f["loaders"], f["is_primary"]) for f in files] == [
        ("mymod-fabric-1.0.0.jar", ["fabric"], True), ("mymod-forge-1.0.0.jar", ["forge"], False),
        ("mymod-neoforge-1.0.0.jar", ["neoforge"], False), ("mymod-quilt-1.0.0.jar", ["fabric"], False)]
    assert sorted(await db.fetchval("SELECT loaders FROM mods")) == ["fabric", "forge", "neoforge"]


async def test_a_loader_suffixed_id_with_a_name_of_its_own_is_its_own_project(gh, releases, db):
    repo = gh.add_repo("multi", "bridge")
    await releases.handle(gh.add_release(repo, "1.0.0", [
        ("bridge-1.0.0.jar", jars.fabric_jar("bridge", "1.0.0", "Bridge")),
        ("bridge-forge-compat-1.0.0.jar", jars.forge_jar("bridge_forge", "1.0.0", "Bridge Compat Layer")),
    ]))
    assert await projects(db) == [("bridge", "Bridge", "bridge", formats.MOD),
                                  ("bridge_forge", "Bridge Compat Layer", "bridge_forge", formats.MOD)]


async def test_a_mod_and_its_resource_pack_are_two_projects_of_their_own_types(gh, releases, api, db):
    repo = gh.add_repo("ana", "lamps")
    rel = gh.add_release(repo, "v1", [("lamps-rp.zip", packs.resource_pack(15)),
                                      ("lamps-1.0.jar", jars.fabric_jar("lamps", "1.0", minecraft="1.20.1"))])
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and len(result.events) == 2
    assert await projects(db) == [("lamps", "Lamps", "lamps", formats.MOD),
                                  ("lamps-rp", "lamps-rp", "resourcepack:lamps-rp", formats.RESOURCEPACK)]
    primaries = await db.fetch("""SELECT m.slug, f.filename FROM version_files f JOIN mod_versions v ON v.id = f.version_id
                                  JOIN mods m ON m.id = v.mod_id WHERE f.is_primary ORDER BY m.slug""")
    assert [tuple(r) for r in primaries] == [("lamps", "lamps-1.0.jar"), ("lamps-rp", "lamps-rp.zip")]
    async with api.get("/v2/project/lamps-rp") as resp:
        assert (await resp.json())["project_type"] == formats.RESOURCEPACK
    async with api.get("/v2/project/lamps") as resp:
        assert (await resp.json())["project_type"] == formats.MOD
    # The next release's pack goes to the pack's project, its jar to the mod's.
    await releases.handle(gh.add_release(repo, "v2", [
        ("lamps-rp-2.zip", packs.resource_pack(18)),
        ("lamps-2.0.jar", jars.fabric_jar("lamps", "2.0", minecraft="1.20.2"))]))
    counts = await db.fetch("SELECT m.slug, count(*) FROM mod_versions v JOIN mods m ON m.id = v.mod_id "
                            "GROUP BY m.slug ORDER BY m.slug")
    assert [tuple(r) for r in counts] == [("lamps", 2), ("lamps-rp", 2)]


async def test_removing_the_repository_hides_every_project_of_it(gh, releases, db):
    repo = gh.add_repo("mono", "monorepo")
    await github_q.upsert_installation(db, 91, state="active", account_id=repo.owner.id, account_login="mono",
                                       account_type="User")
    await github_q.upsert_repository(db, github_repo_id=repo.id, installation_id=91, full_name="mono/monorepo",
                                     default_branch="main", description=None, homepage=None, topics=[],
                                     private=False, archived=False)
    await releases.handle(gh.add_release(repo, "v1", [("a.jar", ALPHA), ("b.jar", BETA),
                                                      ("mono-textures-1.0.zip", packs.resource_pack(15))]))
    assert [tuple(r) for r in await db.fetch("SELECT slug, listed FROM mods ORDER BY slug")] == [
        ("mono-textures", True), ("mono_alpha", True), ("mono_beta", True)]
    await github_q.set_flags(db, repo.id, removed=True)
    hidden = await github_q.sync_visibility(db, repo.id)
    assert len(hidden) == 3
    rows = await db.fetch("SELECT slug, hidden, listed FROM mods ORDER BY slug")
    assert [tuple(r) for r in rows] == [("mono-textures", True, False), ("mono_alpha", True, False),
                                        ("mono_beta", True, False)]
    # A release of the removed repository indexed now (queued before) makes nothing visible.
    result = await releases.handle(gh.add_release(repo, "v2", [("a2.jar", jars.fabric_jar("mono_alpha", "2.0")),
                                                               ("c.jar", jars.fabric_jar("mono_gamma", "1.0"))]))
    assert await db.fetchval("SELECT count(*) FROM mods WHERE listed") == 0
    assert await db.fetchval("SELECT hidden FROM mods WHERE slug = 'mono_gamma'") is True
    assert len(result.events) == 2


async def test_a_project_whose_files_left_an_edited_release_loses_its_version_of_it(gh, releases, db):
    repo = gh.add_repo("mono", "monorepo")
    rel = gh.add_release(repo, "v1", [("a.jar", ALPHA), ("b.jar", BETA)])
    await releases.handle(rel)
    gh.remove_asset(rel.assets[1])
    result = await releases.handle(rel, "edited")
    assert [(e.slug, type(e).__name__) for e in result.events if type(e).__name__ == "VersionHidden"] == [
        ("mono_beta", "VersionHidden")]
    rows = await db.fetch("SELECT m.slug, v.hidden, m.listed FROM mod_versions v JOIN mods m ON m.id = v.mod_id "
                          "ORDER BY m.slug")
    assert [tuple(r) for r in rows] == [("mono_alpha", False, True), ("mono_beta", True, False)]


async def test_projects_of_one_repository_whose_ids_make_one_slug_each_get_one(gh, releases, db):
    repo = gh.add_repo("dots", "twins")
    await releases.handle(gh.add_release(repo, "v1", [
        ("a.jar", jars.fabric_jar("twin-mod", "1.0", "Twin Dash")),
        ("b.jar", jars.mcmod_jar("Twin.Mod", "1.0", "Twin Dot")),
        ("c.jar", jars.mcmod_jar("Twin Mod", "1.0", "Twin Space", seed=2)),
        ("d.jar", jars.mcmod_jar("Twin+Mod", "1.0", "Twin Plus", seed=3))]))
    rows = await db.fetch("SELECT identity, slug FROM mods ORDER BY identity")
    assert [tuple(r) for r in rows] == [("twin mod", f"twin-mod-{repo.id}"), ("twin+mod", f"twin-mod-{repo.id}-2"),
                                        ("twin-mod", "twin-mod"), ("twin.mod", "twin-mod-dots")]


@pytest.mark.parametrize("tag_a, tag_b", [("v1", "v1")])
async def test_an_impostor_repository_still_takes_no_project_of_a_several_project_repository(
        gh, releases, scan, api, db, tag_a, tag_b):
    await publish(gh, releases, scan, "mono/monorepo", tag_a,
                  [asset("mono_alpha-1.0.0.jar", ALPHA, T0), asset("mono_beta-1.0.0.jar", BETA, T0)])
    await publish(gh, releases, scan, "mallory/mono-plus", tag_b, [asset("beta.jar", BETA, T0 + DAY)])
    assert await lookups(api, BETA) == answered_by(await public_id(db, "mono_beta"), "mono_beta")
    status = await db.fetchval("""SELECT v.status FROM mod_versions v JOIN mods m ON m.id = v.mod_id
                                  WHERE m.repo_full_name = 'mallory/mono-plus'""")
    assert status == "quarantined"


async def test_a_branch_manifest_renames_only_its_own_project_and_the_repository_topics_reach_all(gh, releases, db):
    repo = gh.add_repo("mono", "monorepo")
    await releases.handle(gh.add_release(repo, "v1", [("a.jar", ALPHA), ("b.jar", BETA)]))
    gh_repo = msgspec.convert({**gh.repo_json(repo), "topics": ["magic"]}, github.Repository)
    beta = ModRecord(loader="fabric", manifest_path="fabric.mod.json", mod_id="mono_beta", version="2",
                     name="Mono Beta Deluxe", description="Beta, better.")
    assert await card.refresh(db, gh_repo, beta)
    rows = await db.fetch("SELECT slug, name, summary, categories FROM mods ORDER BY slug")
    assert [tuple(r) for r in rows] == [("mono_alpha", "Mono Alpha", "Alpha does the first thing.", ["magic"]),
                                        ("mono_beta", "Mono Beta Deluxe", "Beta, better.", ["magic"])]
    # A manifest of neither project (another module of the repository) names none of them.
    other = ModRecord(loader="fabric", manifest_path="fabric.mod.json", mod_id="mono_gamma", version="1", name="G")
    await card.refresh(db, gh_repo, other)
    assert [r["name"] for r in await db.fetch("SELECT name FROM mods ORDER BY slug")] == ["Mono Alpha",
                                                                                         "Mono Beta Deluxe"]


async def test_a_renamed_pack_file_stays_the_pack_project_and_two_packs_stay_two(gh, releases, db):
    repo = gh.add_repo("ana", "crisp-textures")
    await releases.handle(gh.add_release(repo, "v1", [("Crisp-1.0.zip", packs.resource_pack(15))]))
    await releases.handle(gh.add_release(repo, "v2", [("CrispHD-2.0.zip", packs.resource_pack(18, "HD now"))]))
    rows = await db.fetch("SELECT m.slug, count(v.id) FROM mods m JOIN mod_versions v ON v.mod_id = m.id GROUP BY 1")
    assert [tuple(r) for r in rows] == [("crisp-textures", 2)]
    # A release of two resource packs: two projects, each after its file.
    await releases.handle(gh.add_release(repo, "v3", [("Crisp-3.0.zip", packs.resource_pack(18, "three")),
                                                      ("Dark-3.0.zip", packs.resource_pack(18, "dark"))]))
    rows = await db.fetch("SELECT slug, name, identity FROM mods ORDER BY created_at")
    assert [tuple(r) for r in rows] == [("crisp-textures", "Crisp", "resourcepack:crisp"),
                                        ("dark", "Dark", "resourcepack:dark")]
