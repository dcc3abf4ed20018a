"""Scenario 7: SIGTERM to each service under load: exits within the grace period, nothing lost."""

import asyncio
import signal
import time

GRACE_S = 20.0


async def test_sigterm_under_load_loses_nothing(make_harness):
    h = await make_harness(services={"ingest": 2, "indexer": 2, "api": 1, "telemetry": 1})
    releases = h.make_releases(300, per_repo=10)

    async def send_round_robin():
        out = []
        for i, rel in enumerate(releases):
            alive = [j for j, p in enumerate(h.procs["ingest"]) if p.alive()]
            out.append(await h.send(rel, ingest=alive[i % len(alive)]))
        return out

    burst = asyncio.create_task(send_round_robin())
    await asyncio.sleep(1.0)
    for name in ("indexer", "ingest"):  # one replica of each goes away mid-burst
        proc = h.procs[name][0]
        started = time.monotonic()
        code = await asyncio.to_thread(proc.stop, GRACE_S + 5)
        assert code == 0, h.logs(name, 0)
        assert time.monotonic() - started < GRACE_S
    sent = await burst
    accepted = {s.delivery_id for s in sent if s.status == 202}
    # A request in flight on the stopping ingest may fail to connect (GitHub sees a failed
    # delivery); none may be answered 202 and then lost.
    assert {s.status for s in sent} <= {202, 0, 503}
    assert not await h.wait_until_indexed(accepted, timeout=120)
    assert await h.duplicated_versions() == 0
    for name in ("api", "telemetry"):
        assert await asyncio.to_thread(h.procs[name][0].stop, GRACE_S + 5) == 0
