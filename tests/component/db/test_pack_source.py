"""The pack resolver's database adapter (queries/packs.py): public versions only, per-file loader
and game-version matching, the ownership rules (never an impostor), round-by-round reads, and the
player's own choice by slug, project id or hash."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from indexium_db.queries import mods as mods_q, packs as packs_q, versions as versions_q
from indexium_jar.deps import Requested

T0 = datetime(2025, 3, 1, tzinfo=UTC)
GAME = "1.21.4"
_n = itertools.count(1)


async def mod(db, manifest_id: str, *, owner_id: int = 100, name: str | None = None):
    repo = next(_n)
    await mods_q.upsert_author(db, owner_id, f"owner{owner_id}")
    card = mods_q.Card(name=name or manifest_id.title(), summary="", description="", authors=[], licenses=[],
                       links={}, environment="both")
    row = await mods_q.create(db, github_repo_id=repo, repo_full_name=f"owner{owner_id}/{manifest_id}-{repo}",
                              owner_id=owner_id, owner_login=f"owner{owner_id}", manifest_id=manifest_id,
                              default_branch="main", categories=[], card=card)
    return dict(await db.fetchrow("SELECT id, slug, public_id, manifest_id FROM mods WHERE id = $1", row["id"]))


async def version(db, m, number: str, *deps, loaders=("fabric",), games=(GAME,), status="public", days=0,
                  mod_id: str | None = None, sha1: str | None = None, environment: str | None = None):
    """deps: (mod_id, range, kind)."""
    vid = await versions_q.upsert_version(
        db, mod_id=m["id"], version_number=number, github_release_id=next(_n), tag_name=number, name=number,
        changelog="", version_type="release", published_at=T0 + timedelta(days=days), status=status,
        game_versions=list(games), loaders=list(loaders))
    rec = {"loader": loaders[0], "mod_id": mod_id or m["manifest_id"], "version": number,
           "dependencies": [{"mod_id": d[0], "version_range": d[1], "kind": d[2] if len(d) > 2 else "required"}
                            for d in deps]}
    if environment:
        rec["environment"] = environment
    n = next(_n)
    await versions_q.replace_files(db, vid, [versions_q.FileRow(
        github_asset_id=n, filename=f"{m['slug']}-{number}.jar", url=f"https://github.com/o/r/releases/download/{number}/a.jar",
        size=100 + n, content_type=None, github_digest=f"sha256:{n:064x}", sidecar_url=None, loaders=list(loaders),
        game_versions=list(games), manifests=[rec], is_primary=True, download_count=0, asset_created_at=T0)])
    if sha1:
        await db.execute("UPDATE version_files SET sha1 = $2 WHERE version_id = $1", vid, sha1)
    await mods_q.refresh_rollup(db, m["id"])
    return vid


def picked(answer):
    return {p.mod_id: p.version for p in answer.picks}


async def test_dependencies_resolve_round_by_round_to_public_fitting_versions(db):
    app, lib, base = await mod(db, "app"), await mod(db, "lib"), await mod(db, "base")
    await version(db, app, "1.0", ("lib", ">=1.0"), ("fabricloader", ">=0.16"), ("minecraft", "1.21.x"))
    await version(db, lib, "1.2", ("base", "*"))
    await version(db, lib, "1.3", ("base", "*"), status="quarantined")  # not public: never a candidate
    await version(db, lib, "1.4", ("base", "*"), games=("1.21.1",))  # another game version
    await version(db, lib, "1.5", ("base", "*"), loaders=("neoforge",))  # another loader
    await version(db, base, "2.0")
    answer, source = await packs_q.resolve(db, "fabric", GAME, [Requested("app")])
    assert answer.ok, answer.problem
    assert picked(answer) == {"app": "1.0", "lib": "1.2", "base": "2.0"}
    assert source.queries == 3  # app; lib; base: one query per round of new ids
    (lo,) = answer.platform
    assert lo.mod_id == "fabricloader" and lo.text == "Fabric Loader 0.16 or newer"
    # Quilt runs Fabric files.
    answer, _ = await packs_q.resolve(db, "quilt", GAME, [Requested("app")])
    assert picked(answer) == {"app": "1.0", "lib": "1.2", "base": "2.0"}


async def test_the_read_ahead_follows_only_what_the_resolver_reads(db):
    # An optional dependency without a range becomes no requirement: its id (and what it needs) is
    # read only when the player asks for optional dependencies. One with a range is a limit: read.
    app, lib, extra, deep, capped = [await mod(db, n) for n in ("app", "lib", "extra", "deep", "capped")]
    await version(db, app, "1.0", ("lib", ">=1.0"), ("extra", None, "optional"), ("capped", "<2", "optional"))
    await version(db, lib, "1.2")
    await version(db, extra, "3.0", ("deep", "*"))
    await version(db, deep, "1.0")
    await version(db, capped, "1.0")
    answer, source = await packs_q.resolve(db, "fabric", GAME, [Requested("app")])
    assert answer.ok and picked(answer) == {"app": "1.0", "lib": "1.2"}
    assert source.queries == 2 and set(source.versions) == {"app", "lib", "capped"}  # app; lib and capped
    answer, source = await packs_q.resolve(db, "fabric", GAME, [Requested("app")], include_optional=True)
    # (asked for, the ranged optional one is added too, in range)
    assert picked(answer) == {"app": "1.0", "lib": "1.2", "extra": "3.0", "deep": "1.0", "capped": "1.0"}
    assert source.queries == 3 and not source.missed  # app; lib, extra, capped; deep


async def test_a_dependency_means_the_holder_never_an_impostor(db):
    original, impostor = await mod(db, "sodium", owner_id=1), await mod(db, "sodium-copy", owner_id=2)
    app = await mod(db, "app", owner_id=3)
    await version(db, original, "0.5.0")
    await version(db, impostor, "9.9.9", mod_id="sodium")  # newer, declares the same id
    await version(db, app, "1.0", ("sodium", "*"))
    for project, state, holder in ((original, "holder", None), (impostor, "approved", original["id"])):
        await db.execute("INSERT INTO mod_id_claims (mod_id, loader, manifest_mod_id, state, holder_mod_id,"
                         " asset_created_at) VALUES ($1, 'fabric', 'sodium', $2, $3, $4)",
                         project["id"], state, holder, T0 + timedelta(days=0 if holder is None else 1))
    answer, _ = await packs_q.resolve(db, "fabric", GAME, [Requested("app")])
    assert picked(answer) == {"app": "1.0", "sodium": "0.5.0"}
    assert {p.project_id for p in answer.picks if p.mod_id == "sodium"} == {original["public_id"]}
    # The player may choose the other project themselves (by slug): it then stands for the id.
    asked = await packs_q.requested(db, [impostor["slug"]])
    chosen = asked[impostor["slug"]]
    answer, _ = await packs_q.resolve(db, "fabric", GAME, [Requested("sodium"), Requested("app")],
                                      pinned={"sodium": chosen.project})
    assert picked(answer)["sodium"] == "9.9.9"


async def test_not_indexed_unlisted_and_no_fitting_version_are_said(db):
    app, old = await mod(db, "app"), await mod(db, "oldlib", name="Old Lib")
    await version(db, app, "1.0", ("flywheel", "[1.0,2.0)"))
    await version(db, old, "0.15", games=("1.21.1", "1.21"))
    answer, _ = await packs_q.resolve(db, "fabric", GAME, [Requested("app")])
    assert answer.ok and [n.text for n in answer.not_indexed] == [
        "not on Indexium: flywheel [1.0,2.0), needed by App 1.0"]
    answer, _ = await packs_q.resolve(db, "fabric", GAME, [Requested("oldlib")])
    assert not answer.ok
    assert answer.problem == "no version of Old Lib supports 1.21.4 on Fabric; its newest is 0.15 for 1.21.1, 1.21"


async def test_requested_by_slug_public_id_and_sha1(db):
    app = await mod(db, "app")
    vid = await version(db, app, "1.0", sha1="a" * 40)
    await version(db, app, "2.0", days=1)
    refs = [app["slug"], app["public_id"], "a" * 40, "b" * 40, "nothing-here"]
    asked = await packs_q.requested(db, refs)
    assert set(asked) == {app["slug"], app["public_id"], "a" * 40}
    assert {a.project for a in asked.values()} == {app["id"]}
    assert asked["a" * 40].version_id == vid and asked[app["slug"]].version_id is None
    answer, _ = await packs_q.resolve(db, "fabric", GAME, [Requested("app", str(vid))])
    assert picked(answer) == {"app": "1.0"}  # a version asked for by hash stays as asked


async def test_files_for_export_carry_hashes_sizes_and_sides(db):
    app = await mod(db, "app")
    vid = await version(db, app, "1.0", environment="client", sha1="c" * 40)
    fid = await db.fetchval("SELECT id FROM version_files WHERE version_id = $1", vid)
    row = (await packs_q.files(db, [fid]))[fid]
    assert row["sha1"] == "c" * 40 and row["url"].startswith("https://github.com/")
    assert list(row["environments"]) == ["client"]
