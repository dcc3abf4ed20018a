"""Nothing a release carries is lost silently: .litemod assets and 1.7.10 coremods are indexed,
and every asset that still is not gets a stored reason that operators and the author see."""

from __future__ import annotations

import asyncio
import json

import pytest

from indexium_db.queries import skips as skips_q
from indexium_devstack import jars
from indexium_indexer.release.job import PermanentJobError
from indexium_ops import cli


async def mod_page(api, slug):
    async with api.get(f"/api/v1/mods/{slug}") as resp:
        return resp.status, await resp.json()


async def test_a_litemod_release_is_indexed(gh, releases, db, api):
    repo = gh.add_repo("mamiyaotaru", "voxelmap")
    rel = gh.add_release(repo, "1.9.10", [("VoxelMap-1.9.10.litemod", jars.litemod_jar("VoxelMap", "1.9.10", "1.12.2"))])
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and result.skipped == []
    row = await db.fetchrow("SELECT filename, loaders, game_versions FROM version_files")
    assert (row["filename"], row["loaders"], row["game_versions"]) == ("VoxelMap-1.9.10.litemod", ["liteloader"],
                                                                       ["1.12.2"])
    status, card = await mod_page(api, "voxelmap")
    assert status == 200 and card["loaders"] == ["liteloader"]
    assert await db.fetchval("SELECT count(*) FROM release_asset_skips") == 0


async def test_notenoughitems_for_1_7_10_is_indexed_with_inferred_confidence(gh, releases, db, api):
    repo = gh.add_repo("chickenbones", "NotEnoughItems")
    rel = gh.add_release(repo, "1.0.5.120", [("NotEnoughItems-1.7.10-1.0.5.120-universal.jar", jars.coremod_jar())])
    assert (await releases.handle(rel)).outcome == "indexed"
    row = await db.fetchrow("SELECT loaders, game_versions, manifests FROM version_files")
    assert (row["loaders"], row["game_versions"]) == (["forge"], ["1.7.10"])
    (manifest,) = json.loads(row["manifests"]) if isinstance(row["manifests"], str) else row["manifests"]
    assert manifest["manifest_path"] == "neimod.info"
    assert manifest["game_versions"] == {"source": "neimod.info:mcversion", "raw": "1.7.10",
                                         "versions": ["1.7.10"], "inferred": True}
    status, card = await mod_page(api, "notenoughitems")
    assert status == 200 and card["name"] == "Not Enough Items"


async def test_every_asset_left_out_has_a_reason_for_operators_and_the_author(gh, releases, db, monkeypatch,
                                                                              capsys, database_url):
    repo = gh.add_repo("alice", "lumen")
    library = jars.build_jar([("META-INF/MANIFEST.MF", jars.manifest({"Implementation-Version": "1"})),
                              ("com/example/Lib.class", b"\xca\xfe\xba\xbe")])
    rel = gh.add_release(repo, "v1.0.0", [
        ("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0")),
        ("lumen-lib-1.0.0.jar", library),
        ("lumen-1.0.0-sources.jar", jars.fabric_jar("lumen", "1.0.0")),
        ("lumen-1.0.0.jar.sha256", b"0" * 64),
        ("CHANGELOG.md", b"# 1.0.0"),
    ])
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and result.skipped == [("lumen-lib-1.0.0.jar", "no_manifest")]
    rows = await skips_q.left_out(db, owner_github_id=repo.owner.id)
    assert sorted((r["asset_name"], r["code"], r["release_indexed"]) for r in rows) == [
        ("CHANGELOG.md", "not_a_mod_file", True),
        ("lumen-1.0.0-sources.jar", "build_by_product", True),
        ("lumen-lib-1.0.0.jar", "no_manifest", True),
    ]
    lib = next(r for r in rows if r["asset_name"] == "lumen-lib-1.0.0.jar")
    assert lib["reason"].startswith("no mod manifest") and "FMLCorePlugin" in lib["reason"]
    assert (lib["repo_full_name"], lib["tag_name"]) == ("alice/lumen", "v1.0.0")
    assert [r["asset_name"] for r in await skips_q.left_out(db, github_repo_ids=[repo.id])] == [r["asset_name"] for r in rows]
    # The author's dashboard: by the repositories GitHub lists, plain non-mod files left out.
    other = gh.add_repo("alice", "other")
    assert [r["asset_name"] for r in await skips_q.left_out(db, github_repo_ids=[repo.id, other.id], include_non_mod_files=False)] == [
        "lumen-lib-1.0.0.jar"]
    assert len(await skips_q.left_out(db, github_repo_ids=[repo.id])) == 3
    assert await skips_q.left_out(db, github_repo_ids=[other.id], include_non_mod_files=False) == []

    # The operators' view: the mod-file reasons by default, everything with --all; a count per
    # code in the GitHub App status.
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("NATS_URL", "nats://127.0.0.1:1")
    await asyncio.to_thread(cli.main, ["skipped"])
    out = capsys.readouterr().out
    assert "alice/lumen v1.0.0  lumen-lib-1.0.0.jar  [no_manifest] no mod manifest" in out
    assert "CHANGELOG.md" not in out
    await asyncio.to_thread(cli.main, ["skipped", "--all", "--repo", "alice/lumen"])
    assert "CHANGELOG.md  [not_a_mod_file]" in capsys.readouterr().out
    await asyncio.to_thread(cli.main, ["github", "status"])
    assert "assets left out of releases: " in (status := capsys.readouterr().out)
    assert "no_manifest=1" in status and "not_a_mod_file=1" in status

    # Fixed by a re-upload: the release's reasons are replaced, the stale one is gone.
    gh.remove_asset(next(a for a in rel.assets if a.name == "lumen-lib-1.0.0.jar"))
    await releases.handle(rel, action="edited")
    assert {r["asset_name"] for r in await skips_q.left_out(db, owner_github_id=repo.owner.id)} == {
        "CHANGELOG.md", "lumen-1.0.0-sources.jar"}


async def test_a_release_nothing_of_which_is_indexed_still_says_why_per_asset(gh, releases, db):
    repo = gh.add_repo("bob", "tools")
    plain = jars.build_jar([("META-INF/MANIFEST.MF", jars.manifest()), ("a/B.class", b"\xca\xfe\xba\xbe")])
    rel = gh.add_release(repo, "v2", [("tools-2.jar", plain), ("tools-2.zip", b"PK")])
    with pytest.raises(PermanentJobError):
        await releases.handle(rel)
    rows = await skips_q.left_out(db, owner_github_id=repo.owner.id)
    assert sorted((r["asset_name"], r["code"], r["release_indexed"]) for r in rows) == [
        ("tools-2.jar", "no_manifest", False), ("tools-2.zip", "corrupt_zip", False)]  # a .zip is read: a pack?
    # and a release with no mod file at all is recorded the same way
    only_docs = gh.add_release(repo, "v3", [("README.txt", b"hi")])
    assert (await releases.handle(only_docs)).outcome == "ignored"
    assert [(r["tag_name"], r["code"]) for r in await skips_q.left_out(db, github_repo_ids=[repo.id])
            if r["tag_name"] == "v3"] == [("v3", "not_a_mod_file")]


async def test_names_postgresql_cannot_hold_are_stored_readably(db):
    await skips_q.replace_for_release(
        db, github_release_id=1, github_repo_id=2, owner_github_id=3, repo_full_name="o/r", tag_name="v\x001" + "x" * 5005,
        skips=[skips_q.Skip(4, "bad\x00name.jar", "no_manifest", "r" * 900)], release_indexed=False)
    (row,) = await skips_q.left_out(db, owner_github_id=3)
    assert row["asset_name"] == "bad\ufffdname.jar" and len(row["tag_name"]) == 1000 and len(row["reason"]) == 500
