"""Which assets become files, what each file records, and how facets match per file."""

from __future__ import annotations

import json

from indexium_devstack import jars


async def files_of(db):
    return await db.fetch(
        "SELECT filename, loaders, game_versions, manifests, is_primary, sidecar_url, size, github_digest "
        "FROM version_files ORDER BY filename")


async def test_one_file_per_loader_jar_and_facets_match_within_one_file(gh, releases, db, api):
    repo = gh.add_repo("bob", "glow")
    fabric = jars.fabric_jar("glow", "2.0.0", minecraft="1.21.1")
    forge = jars.forge_jar("glow", "2.0.0", minecraft="[1.20.1]")
    rel = gh.add_release(repo, "2.0.0", [
        ("glow-fabric-2.0.0.jar", fabric), ("glow-forge-2.0.0.jar", forge),
        ("glow-fabric-2.0.0.jar.sha256", b"0" * 64 + b"  glow-fabric-2.0.0.jar\n"),
        ("glow-fabric-2.0.0-sources.jar", fabric), ("glow-2.0.0-javadoc.jar", fabric),
        ("glow-forge-2.0.0-dev.jar", forge), ("CHANGELOG.md", b"# 2.0.0"),
    ])
    result = await releases.handle(rel)
    rows = await files_of(db)
    assert [(r["filename"], r["loaders"], r["game_versions"], r["is_primary"]) for r in rows] == [
        ("glow-fabric-2.0.0.jar", ["fabric"], ["1.21.1"], True),
        ("glow-forge-2.0.0.jar", ["forge"], ["1.20.1"], False),
    ]
    sidecar = next(a for a in rel.assets if a.name.endswith(".sha256"))
    assert rows[0]["sidecar_url"] == gh.download_url(sidecar) and rows[1]["sidecar_url"] is None
    assert rows[0]["size"] == len(fabric) and rows[0]["github_digest"].startswith("sha256:")
    assert [f.sidecar_url for f in result.events[0].files] == [rows[0]["sidecar_url"], None]
    # build by-products and non-jars are never fetched
    for asset in rel.assets[2:]:
        assert gh.stats(asset).requests == 0, asset.name
    version = await db.fetchrow("SELECT loaders, game_versions FROM mod_versions")
    assert (version["loaders"], version["game_versions"]) == (["fabric", "forge"], ["1.21.1", "1.20.1"])

    async def hits(**query):
        async with api.get("/api/v1/mods", params=query) as resp:
            assert resp.status == 200
            return [h["slug"] for h in (await resp.json())["hits"]]

    assert await hits(loader="fabric", game_version="1.21.1") == ["glow"]
    assert await hits(loader="forge", game_version="1.20.1") == ["glow"]
    # each exists in some file, but no single file has both
    assert await hits(loader="forge", game_version="1.21.1") == []
    assert await hits(loader="fabric", game_version="1.20.1") == []


async def test_multi_loader_jar_is_one_file_with_every_loader_and_record(gh, releases, db):
    repo = gh.add_repo("carol", "walljump")
    rel = gh.add_release(repo, "1.4.0", [("walljump-1.4.0.jar", jars.multiloader_jar("walljump", "1.4.0"))])
    await releases.handle(rel)
    (row,) = await files_of(db)
    assert row["loaders"] == ["fabric", "forge", "neoforge", "quilt"]
    manifests = json.loads(row["manifests"]) if isinstance(row["manifests"], str) else row["manifests"]
    assert [(m["loader"], m["manifest_path"]) for m in manifests] == [
        ("fabric", "fabric.mod.json"), ("quilt", "quilt.mod.json"), ("forge", "META-INF/mods.toml"),
        ("neoforge", "META-INF/neoforge.mods.toml")]
    assert all(m["mod_id"] == "walljump" and m["version"] == "1.4.0" for m in manifests)


async def test_game_versions_are_newest_first_by_the_version_table(gh, releases, db):
    repo = gh.add_repo("dave", "spread")
    a = gh.add_release(repo, "1.0", [("spread-a.jar", jars.fabric_jar("spread", "1.0", minecraft=">=1.21.2 <=1.21.10"))])
    b = gh.add_release(repo, "0.9", [("spread-b.jar", jars.forge_jar("spread", "0.9", minecraft="[1.9,1.9.4]"))])
    await releases.handle(a)
    await releases.handle(b)
    expected_a = ["1.21.10", "1.21.9", "1.21.8", "1.21.7", "1.21.6", "1.21.5", "1.21.4", "1.21.3", "1.21.2"]
    file_a = await db.fetchval("SELECT game_versions FROM version_files WHERE filename = 'spread-a.jar'")
    assert [v for v in file_a if "-" not in v and "w" not in v] == expected_a  # releases, in table order
    assert file_a.index("1.21.10") < file_a.index("1.21.2")  # not "1.21.10" < "1.21.2" by name
    rollup = await db.fetchval("SELECT game_versions FROM mods")
    releases_only = [v for v in rollup if "-" not in v and "w" not in v]
    assert releases_only == expected_a + ["1.9.4", "1.9.3", "1.9.2", "1.9.1", "1.9"]
    assert await db.fetchval("SELECT game_versions FROM mod_versions WHERE version_number = '1.0'") == file_a
