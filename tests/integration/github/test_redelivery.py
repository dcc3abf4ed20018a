"""Failed deliveries come back: deliveries GitHub could not make while
ingest was down are redelivered by ingest's reconciler, and end up indexed exactly once."""

from __future__ import annotations

import json

from indexium_contracts import onboarding
from indexium_devstack import jars
from indexium_ingest.redeliver import REDELIVERER, KvLock

MANIFEST = ("src/main/resources/fabric.mod.json",
            json.dumps({"schemaVersion": 1, "id": "lumen", "version": "${version}", "name": "Lumen"}))


async def test_failed_deliveries_are_redelivered_and_indexed(gh, stack, db, eventually):
    repo = gh.add_repo("alice/lumen")
    gh.set_file(repo, *MANIFEST)
    inst = gh.add_installation([])
    rel = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))])
    other = gh.add_repo("bob/glow")
    other_rel = gh.add_release(other, "v2", [("glow-2.jar", jars.fabric_jar("glow", "2.0.0"))])

    # While ingest was down GitHub could not connect (0) or got a 503 ...
    inst.repos.append(repo)
    gh.record_delivery("installation_repositories",
                       gh.installation_repositories_payload(inst, added=[repo]), 0, guid="d-added")
    gh.record_delivery("release", gh.release_payload(rel), 503, guid="d-release")
    # ... one failed attempt was later redelivered successfully by hand,
    gh.record_delivery("release", gh.release_payload(other_rel), 0, guid="d-fixed")
    assert await stack.send("release", gh.release_payload(other_rel), delivery_id="d-fixed") == 202
    # ... a ping was lost (nothing to store, but nothing tells us so),
    gh.record_delivery("ping", {"zen": "Keep it logically awesome."}, 0, guid="d-ping")
    # ... one was stored although GitHub never saw our answer (timed out after the PubAck),
    stored = gh.release_payload(rel, "edited")
    assert await stack.post_unrecorded("release", stored, "d-stored") == 202
    gh.record_delivery("release", stored, 0, guid="d-stored")
    # ... and one we refused on purpose (a bad signature gets the same answer every time).
    gh.record_delivery("release", gh.release_payload(rel), 401, guid="d-refused")

    redeliverer = stack.ingest[REDELIVERER]
    redeliverer._client._mutation_interval = 0.0
    report = await redeliverer.run_once()
    await gh.flush()
    assert report.redelivered == ["d-added", "d-release", "d-ping"]  # oldest first
    assert report.already_stored == 1  # d-stored
    redelivered = [d for d in gh.deliveries if d.redelivery]
    assert sorted(d.guid for d in redelivered) == ["d-added", "d-ping", "d-release"]
    assert all(d.status_code in (200, 202) for d in redelivered)

    # Both came through ingest and were handled: the repository registered, the release indexed.
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 1 FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.github_repo_id = $1",
        repo.id))
    assert await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    # Every release delivery handled (they run concurrently: glow's, sent first, may end last) ...
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 3 FROM webhook_deliveries WHERE delivery_id IN ('d-fixed', 'd-release', 'd-stored')"
        " AND outcome IS NOT NULL"))
    # ... and lumen v1.0.0 and glow v2 are there once each.
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2

    # A second pass finds nothing left to ask for.
    again = await redeliverer.run_once()
    assert again.redelivered == [] and len([d for d in gh.deliveries if d.redelivery]) == 3


async def test_bounded_asks_for_a_delivery_that_keeps_failing_and_one_reconciler_at_a_time(gh, stack, nats_url):
    gh.configure_webhook("http://127.0.0.1:9/unreachable", "x")  # redeliveries fail too
    gh.record_delivery("ping", {"zen": "x"}, 0, guid="d-doomed")
    redeliverer = stack.ingest[REDELIVERER]
    redeliverer._client._mutation_interval = 0.0
    asked = []
    for _ in range(5):
        report = await redeliverer.run_once()
        await gh.flush()
        asked += report.redelivered
    assert asked == ["d-doomed"] * 3  # INDEXIUM_REDELIVER_MAX_REQUESTS

    import nats

    nc = await nats.connect(nats_url)
    kv = await nc.jetstream().key_value(onboarding.REDELIVERY_LOCK.name)
    a, b = KvLock(kv, "redeliver", "replica-a"), KvLock(kv, "redeliver", "replica-b")
    assert await a.acquire()
    assert not await b.acquire()
    assert await redeliverer.run_once() is None  # this replica waits its turn too
    assert await a.refresh()
    await a.release()
    assert await b.acquire()
    assert not await a.refresh()  # a's claim is gone
    await b.release()
    await nc.drain()


async def test_a_redelivered_old_event_counts_as_old(gh, stack, db, eventually):
    """A suspend GitHub could not deliver, then the unsuspend that followed it (delivered); the
    reconciler has the suspend sent again: it is older than the unsuspend and changes nothing."""
    import time

    repo = gh.add_repo("alice/lumen")
    gh.set_file(repo, *MANIFEST)
    gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))])
    inst = gh.add_installation([repo])
    assert await stack.send("installation", gh.installation_payload(inst, "created")) == 202
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id))

    gh.record_delivery("installation", gh.installation_payload(inst, "suspend"), 0, guid="d-suspend",
                       delivered_at=time.time() - 60)  # a minute ago, while ingest was down
    assert await stack.send("installation", gh.installation_payload(inst, "unsuspend"), delivery_id="d-unsuspend") == 202
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome IS NOT NULL FROM webhook_deliveries WHERE delivery_id = 'd-unsuspend'"))

    redeliverer = stack.ingest[REDELIVERER]
    redeliverer._client._mutation_interval = 0.0
    report = await redeliverer.run_once()
    await gh.flush()
    assert report.redelivered == ["d-suspend"]
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'stale' FROM webhook_deliveries WHERE delivery_id = 'd-suspend'"))
    assert await db.fetchval("SELECT state FROM github_installations WHERE id = $1", inst.id) == "active"
    assert await db.fetchval("SELECT listed AND NOT hidden FROM mods WHERE github_repo_id = $1", repo.id)
