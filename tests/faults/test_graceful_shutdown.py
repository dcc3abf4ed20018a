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
    assert not await h.unindexed_after_waiting(accepted, timeout=120)
    assert await h.duplicated_versions() == 0
    for name in ("api", "telemetry"):
        assert await asyncio.to_thread(h.procs[name][0].stop, GRACE_S + 5) == 0


async def test_scan_stage_stops_within_grace_while_its_slots_wait_on_a_slow_cdn(make_harness):
    """Versions keep arriving while both scan slots download from a CDN slower than the grace
    period: SIGTERM must not wait for a slot, nor leave the pull subscription open (the
    connection's drain then waited 30 s for it, past Kubernetes' kill: ~36 s in all), and
    nothing is lost."""
    grace = 3.0
    h = await make_harness(services={"ingest": 1, "indexer": 1, "scan": 1},
                           env_extra={"INDEXIUM_SHUTDOWN_GRACE_SECONDS": str(grace)})
    h.gh.faults.latency["cdn"] = 3.0  # every CDN answer (range reads and whole downloads) is slow
    releases = h.make_releases(30)
    sent = await h.burst(releases)
    accepted = {s.delivery_id for s in sent if s.status == 202}
    assert len(accepted) == 30
    await asyncio.sleep(12.0)  # versions trickle in as the indexer finishes; scan slots are busy
    scan = h.procs["scan"][0]
    started = time.monotonic()
    scan.signal(signal.SIGTERM)
    code = await asyncio.to_thread(scan.proc.wait, 60)
    took = time.monotonic() - started
    assert code == 0, h.logs("scan", 0)
    assert took < grace + 5, took

    h.gh.faults.latency["cdn"] = 0.0
    scan.start()
    await asyncio.to_thread(scan.wait_ready, 60)
    assert not await h.unindexed_after_waiting(accepted, timeout=120)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        pending = await h.query("SELECT count(*) AS n FROM version_files WHERE scan_status = 'pending'")
        if pending[0]["n"] == 0:
            break
        await asyncio.sleep(0.5)
    rows = await h.query("SELECT scan_status, count(*) AS n FROM version_files GROUP BY 1")
    assert {r["scan_status"]: r["n"] for r in rows} == {"clean": 30}
    assert await h.dead_letters() == []
