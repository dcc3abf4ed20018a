"""Scenario 5: PostgreSQL stopped for 30 s while 300 jobs flow."""

import asyncio
import time

OUTAGE_S = 30


async def test_postgres_outage_dead_letters_nothing_and_recovers_without_restarts(make_harness):
    h = await make_harness()
    releases = h.make_releases(300, per_repo=10)
    first = await h.burst(releases[:50])
    await h.unindexed_after_waiting({s.delivery_id for s in first}, timeout=60)
    pids = {p.spec.name: p.proc.pid for p in h.all_procs()}

    await asyncio.to_thread(h.pg.stop)
    rest = await h.burst(releases[50:])  # ingest needs only NATS: still 202
    await asyncio.sleep(OUTAGE_S)
    await asyncio.to_thread(h.pg.start)
    back = time.monotonic()

    accepted = {s.delivery_id for s in first + rest if s.status == 202}
    assert len(accepted) == 300
    missing = await h.unindexed_after_waiting(accepted, timeout=90)
    recovery = time.monotonic() - back
    assert not missing, f"{len(missing)} not indexed within 90 s of PostgreSQL's return"
    assert await h.dead_letters() == []
    assert await h.duplicated_versions() == 0
    assert {p.spec.name: p.proc.pid for p in h.all_procs()} == pids  # no service restarted
    assert all(p.alive() for p in h.all_procs())
    print(f"recovered {len(accepted) - 50} jobs in {recovery:.1f} s after PostgreSQL returned")
