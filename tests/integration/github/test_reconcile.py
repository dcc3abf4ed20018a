"""Reconciliation: finds a release whose webhook never arrived, hides one deleted while we were
down, refreshes download counts; unchanged repositories cost only 304s; one pass at a time."""

from __future__ import annotations

import asyncio
import json

import pytest

from indexium_devstack import jars
from indexium_indexer.github.app import RECONCILER
from indexium_ops import cli
from indexium_platform.settings import load

MANIFEST = ("src/main/resources/fabric.mod.json",
            json.dumps({"schemaVersion": 1, "id": "lumen", "version": "${version}", "name": "Lumen"}))


@pytest.fixture
async def lumen(gh, stack, db, eventually):
    repo = gh.add_repo("alice/lumen")
    gh.set_file(repo, *MANIFEST)
    for i in range(2):
        gh.add_release(repo, f"v1.{i}.0", [(f"lumen-1.{i}.0.jar", jars.fabric_jar("lumen", f"1.{i}.0"))],
                       created_at=1_700_000_000 + i)
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    assert await eventually(lambda: db.fetchval("SELECT count(*) = 2 FROM mod_versions"))
    return repo


async def visible(db) -> list[str]:
    rows = await db.fetch("SELECT version_number FROM mod_versions WHERE NOT hidden ORDER BY version_number")
    return [r["version_number"] for r in rows]


async def test_reconciliation_catches_up_hides_and_counts(gh, stack, db, eventually, lumen, database_url, capsys):
    # While we were down: a release published (its webhook never arrived), one deleted,
    # and people downloaded the other.
    gh.add_release(lumen, "v1.2.0", [("lumen-1.2.0.jar", jars.fabric_jar("lumen", "1.2.0"))],
                   created_at=1_700_000_100)
    lumen.release("v1.2.0").assets[0].download_count = 5
    gh.remove_release(lumen, "v1.0.0")
    lumen.release("v1.1.0").assets[0].download_count = 42

    reconciler = stack.role[RECONCILER]
    run_id = await reconciler.maybe_run(force=True)
    assert run_id is not None
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert run["status"] == "ok" and run["repos_total"] == run["repos_done"] == 1
    assert (run["releases_published"], run["versions_hidden"], run["files_updated"]) == (1, 1, 1)

    assert await eventually(lambda: _visible_is(db, ["v1.1.0", "v1.2.0"]))
    hidden = await db.fetchrow("SELECT hidden_reason FROM mod_versions WHERE version_number = 'v1.0.0'")
    assert hidden["hidden_reason"] == "github: release gone (reconciliation)"
    # mods.downloads follows version_files.download_count (the v1.2.0 file came with 5)
    assert await eventually(lambda: db.fetchval("SELECT downloads = 47 FROM mods WHERE github_repo_id = $1", lumen.id))
    assert await db.fetchval("SELECT latest_version FROM mods") == "v1.2.0"

    # The indexer's own read of v1.2.0 counted as a download on GitHub (as it does there):
    # one more pass picks that up. After it nothing changes: every request is a 304, which
    # costs no quota, and nothing is sent.
    await reconciler.maybe_run(force=True)
    remaining = gh.limiter.remaining
    second = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", second)
    assert run["status"] == "ok" and run["repos_unchanged"] == 1
    assert (run["releases_published"], run["versions_hidden"], run["files_updated"]) == (0, 0, 0)
    assert run["not_modified"] == run["api_requests"] >= 2
    assert gh.limiter.remaining == remaining
    assert len(await stack.release_messages()) == 3

    # Operators see progress and the last result.
    settings = load(cli.Settings, {"DATABASE_URL": database_url})
    await cli.github(settings, _args(action="status", runs=5))
    out = capsys.readouterr().out
    assert "repositories:  registered=1" in out and "backfills:     done=1" in out
    assert f"#{second} " in out and "ok" in out and "releases sent 1, versions hidden 1" in out


def _args(**kw):
    import argparse

    return argparse.Namespace(**kw)


async def _visible_is(db, expected):
    return await visible(db) == expected


async def test_one_pass_at_a_time_not_too_often_and_out_of_quota_installations_skipped(gh, stack, db, lumen):
    reconciler = stack.role[RECONCILER]
    gh.set_latency(0.3, where="api")  # make the pass last long enough to overlap
    results = await asyncio.gather(reconciler.maybe_run(force=True), reconciler.maybe_run(force=True))
    assert sorted(r is None for r in results) == [False, True]
    gh.set_latency(0.0, where="api")
    # With a 1-hour cadence, the pass that just ran means none now (the test role runs none).
    object.__setattr__(reconciler, "_settings", _with_interval(reconciler._settings, 3600))
    assert await reconciler.maybe_run() is None
    assert await db.fetchval("SELECT count(*) FROM github_reconcile_runs") == 1

    # An installation out of quota for an hour: skipped for this pass, recorded, not waited for.
    gh.set_rate_limit(5000, remaining=0, reset_in_seconds=3600)
    run_id = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert run["status"] == "partial" and run["errors"] == 2  # its listing, then its one repository
    assert "rate limit" in run["last_error"] or "out of quota" in run["last_error"]
    assert await db.fetchval("SELECT reconcile_error FROM github_repositories") is not None


async def test_reconciliation_applies_installation_repositories_events_that_never_arrived(
        gh, stack, db, eventually, lumen):
    """While we were down the author gave the App a new mod repository and took lumen away."""
    inst = next(i for i in gh.state.installations.values() if lumen in i.repos)
    nova = gh.add_repo("alice/nova")
    gh.set_file(nova, "src/main/resources/fabric.mod.json",
                json.dumps({"schemaVersion": 1, "id": "nova", "version": "${version}", "name": "Nova"}))
    gh.add_release(nova, "v0.1.0", [("nova-0.1.0.jar", jars.fabric_jar("nova", "0.1.0"))], created_at=1_700_000_500)
    inst.repos.append(nova)
    inst.repos.remove(lumen)
    reconciler = stack.role[RECONCILER]

    run_id = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert run["status"] == "ok" and (run["repos_added"], run["repos_removed"]) == (1, 1)
    # lumen is no longer ours to reconcile. nova's backfill, which the membership step starts,
    # keeps it out of the pass while in flight; on a fast enough machine it has finished by the
    # time the pass lists its repositories, and nova is then reconciled with it.
    assert run["repos_total"] in (0, 1) and run["repos_done"] == run["repos_total"]
    state = await db.fetchrow("SELECT state, removed FROM github_repositories WHERE github_repo_id = $1", nova.id)
    assert (state["state"], state["removed"]) == ("registered", False)
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", nova.id))
    assert await db.fetchval("SELECT removed FROM github_repositories WHERE github_repo_id = $1", lumen.id)
    assert await eventually(lambda: db.fetchval(
        "SELECT NOT listed AND hidden FROM mods WHERE github_repo_id = $1", lumen.id))
    assert await db.fetchval("SELECT count(*) FROM mod_versions v JOIN mods m ON m.id = v.mod_id "
                             "WHERE m.github_repo_id = $1", lumen.id) == 2  # kept, not deleted

    # Given back (that webhook lost too): the next pass shows it again. Nothing else changed,
    # so the listing of the unchanged installation costs nothing on the pass after.
    inst.repos.append(lumen)
    run_id = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert (run["repos_added"], run["repos_removed"]) == (1, 0)
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", lumen.id))
    run_id = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert (run["repos_added"], run["repos_removed"], run["errors"]) == (0, 0, 0)


def _with_interval(settings, seconds):
    import msgspec

    return msgspec.structs.replace(settings, reconcile_interval_s=seconds)


async def test_a_stale_repository_event_is_corrected_even_when_github_answers_304(gh, stack, db, eventually, lumen):
    reconciler = stack.role[RECONCILER]
    await reconciler.maybe_run(force=True)  # the ETag cache now holds the repository
    inst = next(i for i in gh.state.installations.values() if lumen in i.repos)
    stale = {"action": "privatized", "repository": {**gh.repo_json(lumen), "private": True},
             "installation": {"id": inst.id}, "sender": {"login": lumen.owner.login, "id": lumen.owner.id}}
    await stack.send("repository", stale)  # arrives late, after the repository went public again
    assert await eventually(lambda: db.fetchval("SELECT hidden FROM mods WHERE github_repo_id = $1", lumen.id))
    run_id = await reconciler.maybe_run(force=True)
    run = await db.fetchrow("SELECT * FROM github_reconcile_runs WHERE id = $1", run_id)
    assert run["not_modified"] >= 1  # GitHub's answer did not change: a 304 ...
    assert await eventually(lambda: db.fetchval(  # ... and still the truth we set the row back to
        "SELECT listed AND NOT hidden FROM mods WHERE github_repo_id = $1", lumen.id))
    assert await db.fetchval("SELECT private FROM github_repositories WHERE github_repo_id = $1", lumen.id) is False
