"""Scenario 3: nats-server restarted (file storage) during a burst of 1,000 webhooks."""

import asyncio


async def test_nats_restart_during_burst_never_acknowledges_what_it_loses(make_harness):
    # A publish waits up to this long for its PubAck (the client buffers while reconnecting):
    # an outage longer than it must be answered 503, never 202.
    h = await make_harness(env_extra={"INDEXIUM_PUBLISH_TIMEOUT_SECONDS": "1"})
    releases = h.make_releases(1000, per_repo=20)
    third_sent = asyncio.Event()
    sent: list = []

    async def sender(chunk):
        for rel in chunk:
            sent.append(await h.send(rel))
            if len(sent) >= 200:
                third_sent.set()

    burst = asyncio.gather(*(sender(releases[i::10]) for i in range(10)))
    await third_sent.wait()  # kill NATS mid-burst, whatever the machine's speed
    await asyncio.to_thread(h.nats.kill)  # kill -9: no graceful flush; the file store must hold
    await asyncio.sleep(3.0)  # ingest must answer 503 (never 202) while NATS is away
    await asyncio.to_thread(h.nats.start)
    await burst
    assert len(sent) == 1000

    statuses = {s.status for s in sent}
    assert statuses <= {202, 503}, statuses
    accepted = {s.delivery_id for s in sent if s.status == 202}
    refused = [s for s in sent if s.status == 503]
    assert refused, "the outage should have refused some deliveries"
    missing = await h.unindexed_after_waiting(accepted, timeout=180)
    assert not missing, f"{len(missing)} deliveries answered 202 were never indexed"
    assert await h.duplicated_versions() == 0

    # GitHub shows the 503s as failed deliveries; redelivering them now indexes them too.
    by_id = {f"d-{r.id}": r for r in releases}
    again = [await h.send(by_id[s.delivery_id], delivery_id=s.delivery_id) for s in refused]
    assert {s.status for s in again} == {202}
    assert not await h.unindexed_after_waiting({s.delivery_id for s in refused}, timeout=120)
