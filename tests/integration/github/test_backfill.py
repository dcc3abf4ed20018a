"""Backfill of existing releases: all of them, oldest first, exactly once, through the real
indexer; surviving an expired token mid-way and waiting out an exhausted quota."""

from __future__ import annotations

import json
import time

from indexium_contracts import ingest
from indexium_devstack import jars
from indexium_indexer.github.app import CLIENT

MANIFEST = ("src/main/resources/fabric.mod.json",
            json.dumps({"schemaVersion": 1, "id": "bulk", "version": "${version}", "name": "Bulk"}))


def bulk_repo(gh, n: int, name="alice/bulk"):
    repo = gh.add_repo(name)
    gh.set_file(repo, *MANIFEST)
    jar = jars.fabric_jar("bulk", "1.0.0", "Bulk", extra_entries=2)
    for i in range(n):
        gh.add_release(repo, f"v{i}.0.0", [(f"bulk-{i}.jar", jar)], created_at=1_600_000_000 + i * 3600)
    return repo


async def test_250_releases_three_pages_indexed_exactly_once_despite_token_expiry(gh, stack, db, eventually):
    repo = bulk_repo(gh, 250)
    inst = gh.add_installation([repo])
    listed = gh.api._visible_releases

    def expire_after_first_page(request, r):
        out = listed(request, r)
        if gh.api_calls.get("GET /repos/{owner}/{repo}/releases", 0) == 1 and "page" not in request.query:
            gh.expire_tokens()  # the token dies between page 1 and page 2
        return out

    gh.api._visible_releases = expire_after_first_page
    started = time.monotonic()
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 250 FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.github_repo_id = $1",
        repo.id), timeout=60)
    elapsed = time.monotonic() - started

    row = await db.fetchrow("SELECT * FROM github_repositories WHERE github_repo_id = $1", repo.id)
    assert row["backfill_state"] == "done" and row["backfill_published"] == 250
    # three pages of releases; page 2 answered 401 once, and a new token was minted for it
    pages = [p for _, p, t in gh.api_log if t == "GET /repos/{owner}/{repo}/releases"]
    assert sorted(set(pages)) == [f"/repos/alice/bulk/releases?per_page=100{q}" for q in ("", "&page=2", "&page=3")]
    assert pages.count("/repos/alice/bulk/releases?per_page=100&page=2") == 2
    assert gh.api_calls["POST /app/installations/{installation_id}/access_tokens"] == 2

    msgs = await stack.release_messages()
    ids = [m.headers["Nats-Msg-Id"] for m in msgs]
    assert len(ids) == 250 and len(set(ids)) == 250
    events = [ingest.decoder.decode(m.data) for m in msgs]
    tags = [e.webhook.release.tag_name for e in events]
    assert tags == [f"v{i}.0.0" for i in range(250)]  # oldest first
    assert all(e.delivery_id.startswith("backfill:") for e in events)
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 250
    assert await db.fetchval("SELECT count(DISTINCT version_number) FROM mod_versions") == 250
    assert await db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id)

    # Installing again (or a redelivered event) sends nothing twice.
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' AND backfill_published = 0 FROM github_repositories "
        "WHERE github_repo_id = $1", repo.id))
    assert len(await stack.release_messages()) == 250
    print(f"backfill of 250 releases through the indexer: {elapsed:.1f}s")


async def test_backfill_waits_for_an_exhausted_quota_instead_of_failing(gh, stack, db, eventually):
    repo = bulk_repo(gh, 3)
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    # Registered; now the quota is gone for a second, before the backfill lists releases.
    # (The backfill may already be done on a fast machine: then run it once more.)
    gh.set_rate_limit(5000, remaining=0, reset_in_seconds=1)
    gh.add_release(repo, "v9.0.0", [("bulk-9.jar", jars.fabric_jar("bulk", "9.0.0", "Bulk"))],
                   created_at=1_700_000_000)
    await db.execute("UPDATE github_repositories SET backfill_state = 'pending' WHERE github_repo_id = $1",
                     repo.id)
    stack.role_wake()
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 4 FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.github_repo_id = $1",
        repo.id), timeout=30)
    row = await db.fetchrow("SELECT * FROM github_repositories WHERE github_repo_id = $1", repo.id)
    assert row["backfill_state"] == "done" and row["backfill_error"] is None
    assert len(await stack.release_messages()) == 4
    client = stack.role[CLIENT]
    assert client.counters.waits >= 1 and client.counters.waited_s > 0.5  # it waited, it did not fail


async def test_backfill_paces_releases_per_installation(gh, stack, db, eventually):
    """At 20 releases/s, 10 releases take about half a second to send, not 10 ms."""
    role = await stack.restart_role(INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND="20")
    repo = bulk_repo(gh, 10)
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", repo.id), timeout=30)
    row = await db.fetchrow("SELECT backfill_started_at, backfill_finished_at FROM github_repositories "
                            "WHERE github_repo_id = $1", repo.id)
    took = (row["backfill_finished_at"] - row["backfill_started_at"]).total_seconds()
    assert len(await stack.release_messages()) == 10
    assert took >= 9 / 20 - 0.05, took
    assert role is stack.role
