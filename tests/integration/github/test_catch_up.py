"""The web site's "Check again": a CatchUpRequested on INGEST, acted on by the GitHub role."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime

import nats

from indexium_contracts import ingest
from indexium_devstack import jars

MANIFEST = "src/main/resources/fabric.mod.json"


async def _request(nats_url: str, repo, installation_id: int) -> None:
    event = ingest.CatchUpRequested(
        delivery_id=f"catch-up:{repo.id}:{secrets.token_hex(8)}",
        received_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        github_repo_id=repo.id, installation_id=installation_id, requested_by="alice")
    nc = await nats.connect(nats_url)
    try:
        await nc.jetstream().publish(ingest.CATCH_UP, ingest.encoder.encode(event),
                                     headers={"Nats-Msg-Id": event.delivery_id})
    finally:
        await nc.drain()


async def test_check_again_evaluates_a_repository_that_was_not_a_mod(gh, stack, db, eventually):
    repo = gh.add_repo("alice/lumen", description="Lights")
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'skipped' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    # The author adds a manifest and a release; GitHub sends no event we would act on.
    gh.set_file(repo, MANIFEST, json.dumps({"schemaVersion": 1, "id": "lumen", "version": "1.0.0", "name": "Lumen"}))
    gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0", "Lumen"))])
    await _request(stack.nats_url, repo, inst.id)
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    stack.role_wake()
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 1 FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.github_repo_id = $1",
        repo.id), timeout=30)


async def test_check_again_catches_a_mod_up_on_missed_releases(gh, stack, db, eventually):
    repo = gh.add_repo("alice/lumen", description="Lights")
    gh.set_file(repo, MANIFEST, json.dumps({"schemaVersion": 1, "id": "lumen", "version": "1.0.0", "name": "Lumen"}))
    gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0", "Lumen"))],
                   created_at=1_700_000_000)
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))

    def versions():
        return db.fetchval("SELECT count(*) FROM mod_versions v JOIN mods m ON m.id = v.mod_id "
                           "WHERE m.github_repo_id = $1", repo.id)

    assert await eventually(lambda: _eq(versions(), 1), timeout=30)
    # A release whose webhook never arrived.
    gh.add_release(repo, "v1.1.0", [("lumen-1.1.0.jar", jars.fabric_jar("lumen", "1.1.0", "Lumen"))],
                   created_at=1_700_000_100)
    await _request(stack.nats_url, repo, inst.id)
    assert await eventually(lambda: _eq(versions(), 2), timeout=30)
    assert await db.fetchval("SELECT count(*) FROM webhook_deliveries WHERE delivery_id LIKE 'catch-up:%'") == 1


async def _eq(value, expected) -> bool:
    return (await value) == expected
