"""Releases published before their jars are uploaded (release tools publish, then upload; GitHub
sends no webhook for an upload): the GitHub role re-reads such a release on a short schedule,
with conditional requests, and a jar uploaded later is searchable within 60 s of its upload.
The schedule is in PostgreSQL: it survives the role's restart, and the role catches up on
releases published while it was not running."""

from __future__ import annotations

import json
import time

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app as create_api
from indexium_api.settings import Settings as ApiSettings
from indexium_contracts import onboarding
from indexium_devstack import jars
from indexium_indexer.github.app import CLIENT
from indexium_platform.settings import load

MANIFEST = "src/main/resources/fabric.mod.json"
SEARCHABLE_WITHIN_S = 60.0  # the target, from the upload
# Shortened for the test (production: 15 s, 30 s, 1, 2, 3, 4, 5, 10 and 30 min).
SCHEDULE = {"INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS": "0.5,1,1.5,2,3,4,6,8,10,15,20,30,45,60",
            "INDEXIUM_GITHUB_REREAD_POLL_SECONDS": "0.2"}


@pytest.fixture
async def api(nats_url, database_url):
    client = TestClient(TestServer(create_api(load(ApiSettings, {
        "DATABASE_URL": database_url, "NATS_URL": nats_url, "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0"}))))
    await client.start_server()
    try:
        yield client
    finally:
        await client.close()


async def _searchable(api, term: str, tag: str) -> bool:
    async with api.get("/api/v1/mods", params={"q": term}) as resp:
        hits = (await resp.json())["hits"]
    if not hits:
        return False
    async with api.get(f"/api/v1/mods/{hits[0]['slug']}/versions") as resp:
        return resp.status == 200 and tag in [v["version_number"] for v in await resp.json()]


async def test_a_jar_uploaded_after_the_publish_is_searchable_within_60_s(gh, stack, db, api, eventually):
    repo = gh.add_repo("alice/lumen", description="Lights")
    gh.set_file(repo, MANIFEST, json.dumps({"schemaVersion": 1, "id": "lumen", "version": "1", "name": "Lumen"}))
    inst = gh.add_installation([repo])
    await stack.restart_role(**SCHEDULE)
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", repo.id))

    # The GitHub role is down when the release is published (a deploy, a crash): its events wait.
    await stack.stop_role()
    rel = gh.add_release(repo, "v1.0.0")  # published bare: the CI uploads the jar afterwards
    await stack.send("release", gh.release_payload(rel, "published"), delivery_id="published-bare")
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'ignored' FROM webhook_deliveries WHERE delivery_id = 'published-bare'"))
    # The role comes back, reads the release events it missed and schedules the re-reads.
    await stack.start_role(**SCHEDULE)
    assert await eventually(lambda: db.fetchval(
        "SELECT step >= 1 FROM github_release_rereads WHERE github_release_id = $1", rel.id))
    # Restarted again mid-schedule: the schedule is in PostgreSQL, another process goes on.
    await stack.restart_role(**SCHEDULE)
    role_client = stack.role[CLIENT]
    # Nothing uploaded yet: the re-reads are conditional requests answered 304 (no quota).
    assert await eventually(lambda: role_client.counters.not_modified >= 2, timeout=10)
    assert not [m for m in await stack.release_messages() if m.headers["Nats-Msg-Id"].startswith("backfill:")]

    uploaded = time.monotonic()
    gh.add_asset(rel, "lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0", "Lumen"))
    assert await eventually(lambda: _searchable(api, "lumen", "v1.0.0"), timeout=SEARCHABLE_WITHIN_S, interval=0.1)
    took = time.monotonic() - uploaded
    print(f"searchable {took:.2f} s after the upload")
    assert took < SEARCHABLE_WITHIN_S

    # Sent once, through the normal release path, and recorded as sent (reconciliation sends nothing).
    sent = [m for m in await stack.release_messages() if m.headers["Nats-Msg-Id"].startswith("backfill:")]
    assert len(sent) == 1
    assert await db.fetchval("SELECT count(*) FROM github_release_sync WHERE github_release_id = $1", rel.id) == 1
    # Later re-reads send nothing more (the jar is the indexer's; the indexer's read of it moved
    # the download count, so one more full answer, then 304s again).
    settled = role_client.counters.not_modified
    assert await eventually(lambda: role_client.counters.not_modified >= settled + 2, timeout=20)
    assert len([m for m in await stack.release_messages() if m.headers["Nats-Msg-Id"].startswith("backfill:")]) == 1


async def test_complete_and_immutable_releases_are_not_read_again(gh, stack, db, eventually):
    repo = gh.add_repo("alice/lumen", description="Lights")
    gh.set_file(repo, MANIFEST, json.dumps({"schemaVersion": 1, "id": "lumen", "version": "1", "name": "Lumen"}))
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    jar = jars.fabric_jar("lumen", "1.0.0", "Lumen")
    complete = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jar)])
    immutable = gh.add_release(repo, "v1.1.0", immutable=True)  # no jar, and never one: final
    short = gh.add_release(repo, "v1.2.0")
    for rel in (complete, immutable, short):
        await stack.send("release", gh.release_payload(rel, "published"))
    assert await eventually(lambda: _settled(stack.nats_url))  # the role looked at all three
    assert await db.fetchval("SELECT array_agg(github_release_id) FROM github_release_rereads") == [short.id]


async def _settled(nats_url: str) -> bool:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().consumer_info(onboarding.GITHUB_RELEASES.stream, onboarding.GITHUB_RELEASES.durable)
        return info.num_pending == 0 and info.num_ack_pending == 0
    finally:
        await nc.drain()
