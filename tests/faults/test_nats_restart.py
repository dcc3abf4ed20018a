"""Scenario 3: nats-server restarted (file storage) during a burst of 1,000 webhooks."""

import asyncio


async def test_nats_restart_during_burst_never_acknowledges_what_it_loses(make_harness):
    h = await make_harness()
    releases = h.make_releases(1000, per_repo=20)
    burst = asyncio.create_task(h.burst(releases, concurrency=10))
    for _ in range(400):
        if len(await h.indexed_deliveries()) >= 100:
            break
        await asyncio.sleep(0.05)
    await asyncio.to_thread(h.nats.stop)
    await asyncio.sleep(1.0)  # ingest must answer 503 (never 202) while NATS is away
    await asyncio.to_thread(h.nats.start)
    sent = await burst

    statuses = {s.status for s in sent}
    assert statuses <= {202, 503}, statuses
    accepted = {s.delivery_id for s in sent if s.status == 202}
    refused = [s for s in sent if s.status == 503]
    assert refused, "the outage should have refused some deliveries"
    missing = await h.wait_until_indexed(accepted, timeout=180)
    assert not missing, f"{len(missing)} deliveries answered 202 were never indexed"
    assert await h.duplicated_versions() == 0

    # GitHub shows the 503s as failed deliveries; redelivering them now indexes them too.
    by_id = {f"d-{r.id}": r for r in releases}
    again = [await h.send(by_id[s.delivery_id], delivery_id=s.delivery_id) for s in refused]
    assert {s.status for s in again} == {202}
    assert not await h.wait_until_indexed({s.delivery_id for s in refused}, timeout=120)
