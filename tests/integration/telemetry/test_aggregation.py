"""Aggregation against real PostgreSQL: correctness, idempotence, kill mid-run, one at a time."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter, defaultdict
from datetime import UTC, date, datetime, timedelta

import asyncpg
import pytest

from indexium_db.queries import telemetry as telemetry_q
from indexium_platform.metrics import ServiceMetrics
from indexium_devstack import telemetry_samples as samples
from indexium_telemetry.aggregator import Aggregator
from indexium_telemetry.metrics import TelemetryMetrics

from .conftest import insert_events

DAY = date(2025, 3, 14)
DIMS = {"game_version": "game_version", "loader": "loader", "java": "java_version", "os": "os",
        "arch": "arch"}


def at(day: date, seconds: int) -> str:
    return (datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(seconds=seconds)).isoformat()


def make_events(mods: dict, day: date, *, servers=60, pings_per_server=4, seed=7) -> list:
    rng = random.Random(seed)
    ids = list(mods.values())
    events = []
    for s in range(servers):
        chosen = rng.sample(ids, rng.randint(1, len(ids)))
        for p in range(pings_per_server):
            events.append(samples.event(
                server=s + 1, received_at=at(day, (s * 600 + p * 1800 + rng.randint(0, 59)) % 86_000),
                mods=[(m, rng.choice(["1.0", "1.1", None])) for m in chosen],
                game_version=rng.choice(["1.20.1", "1.21.1"]), loader=rng.choice(["fabric", "neoforge"]),
                java_version=rng.choice(["17", "21"]), os=rng.choice(["linux", "windows"]),
                arch=rng.choice(["x86_64", "aarch64"])))
    return events


def reference(events: list, day: date) -> dict:
    """The same numbers computed in Python: per (mod, server) the latest ping decides."""
    latest = {}
    inside = [e for e in events if at(day, 0) <= e.received_at < at(day + timedelta(days=1), 0)]
    seen: dict = defaultdict(list)
    for e in inside:
        seen[e.server_hash].append(datetime.fromisoformat(e.received_at))
    qualified = {h for h, times in seen.items() if max(times) - min(times) >= telemetry_q.QUALIFYING_SPAN}
    for e in inside:
        if e.server_hash not in qualified:
            continue
        for mod_id, version in ((m.mod_id, m.version) for m in e.mods):
            key = (mod_id, e.server_hash)
            if key not in latest or (e.received_at, e.ping_id.bytes) > latest[key][0]:
                latest[key] = ((e.received_at, e.ping_id.bytes), e, version)
    out: dict = defaultdict(lambda: {"servers": 0, "breakdown": defaultdict(Counter)})
    for (mod_id, _), (_, e, version) in latest.items():
        stats = out[mod_id]
        stats["servers"] += 1
        for dim, attr in DIMS.items():
            stats["breakdown"][dim][getattr(e, attr)] += 1
        stats["breakdown"]["mod_version"][version or telemetry_q.UNKNOWN] += 1
    return {m: (s["servers"], {d: dict(c) for d, c in s["breakdown"].items()}) for m, s in out.items()}


async def stats(conn, day: date) -> dict:
    rows = await conn.fetch("SELECT mod_id, servers, breakdown FROM mod_daily_stats WHERE day = $1", day)
    # Plain connections (no pool codec) return jsonb as text.
    return {r["mod_id"]: (r["servers"], json.loads(r["breakdown"]) if isinstance(r["breakdown"], str)
                          else r["breakdown"]) for r in rows}


async def test_daily_stats_match_a_reference_computation(pool, mods):
    events = make_events(mods, DAY)
    # Pings of the day before and after must not leak into the day.
    events += make_events(mods, DAY - timedelta(days=1), servers=5, seed=1)
    events += make_events(mods, DAY + timedelta(days=1), servers=5, seed=2)
    async with pool.acquire() as conn:
        await insert_events(conn, events)
        result = await telemetry_q.aggregate_day(conn, DAY)
        got = await stats(conn, DAY)
    assert result["pings"] == 60 * 4 and result["mods"] == len(got)
    assert got == reference(events, DAY)
    for servers, breakdown in got.values():
        assert set(breakdown) == {"game_version", "loader", "mod_version", "java", "os", "arch"}
        assert all(sum(values.values()) == servers for values in breakdown.values())


async def test_distinct_servers_not_pings(pool, mods):
    sodium = mods["sodium"]
    events = [samples.event(server=1, mods=[(sodium, "1")], received_at=at(DAY, 60 * i)) for i in range(48)]
    events += [samples.event(server=2, mods=[(sodium, "1")], received_at=at(DAY, t)) for t in (100, 1700)]
    async with pool.acquire() as conn:
        await insert_events(conn, events)
        await telemetry_q.aggregate_day(conn, DAY)
        assert (await stats(conn, DAY))[sodium][0] == 2


async def test_a_server_counts_only_once_it_pinged_twice_25_minutes_apart(pool, mods):
    sodium, jei = mods["sodium"], mods["jei"]
    span = int(telemetry_q.QUALIFYING_SPAN.total_seconds())
    plan = {
        1: [1000],  # one ping: not counted
        2: [1000, 1000 + span - 1],  # 24:59 apart: not counted
        3: [1000, 1000 + span],  # exactly 25 minutes: counted
        4: [1000, 1300, 1600, 1000 + 3 * span],  # first and last far enough apart: counted
        5: [86_400 - 600],  # 23:50, then 00:20 the next day: neither day counts it
        6: [1000 + i for i in range(50)],  # a burst: never
    }
    events = [samples.event(server=s, mods=[(sodium, "1"), (jei, None)], received_at=at(DAY, t))
              for s, times in plan.items() for t in times]
    events.append(samples.event(server=5, mods=[(sodium, "1")], received_at=at(DAY + timedelta(days=1), 1200)))
    # A server that mentioned jei in only one of its pings still counts for it.
    events += [samples.event(server=7, mods=[(sodium, "1")], received_at=at(DAY, 2000)),
               samples.event(server=7, mods=[(sodium, "1"), (jei, None)], received_at=at(DAY, 2000 + span))]
    async with pool.acquire() as conn:
        await insert_events(conn, events)
        await telemetry_q.aggregate_day(conn, DAY)
        await telemetry_q.aggregate_day(conn, DAY + timedelta(days=1))
        got = await stats(conn, DAY)
        assert await stats(conn, DAY + timedelta(days=1)) == {}
    assert got[sodium][0] == 3 and got[jei][0] == 3
    assert got == reference(events, DAY)


async def test_breakdowns_keep_the_top_values_and_fold_the_rest(pool, mods):
    sodium = mods["sodium"]
    events = [samples.event(server=i + 1, mods=[(sodium, f"v{i:02d}")], received_at=at(DAY, i + t))
              for i in range(telemetry_q.BREAKDOWN_TOP + 5) for t in (0, 1800)]
    events += [samples.event(server=100 + i, mods=[(sodium, "v29")], received_at=at(DAY, 500 + i + t))
               for i in range(3) for t in (0, 1800)]
    async with pool.acquire() as conn:
        await insert_events(conn, events)
        await telemetry_q.aggregate_day(conn, DAY)
        servers, breakdown = (await stats(conn, DAY))[sodium]
    versions = breakdown["mod_version"]
    assert servers == telemetry_q.BREAKDOWN_TOP + 8
    assert len(versions) == telemetry_q.BREAKDOWN_TOP + 1 and versions["v29"] == 4
    assert versions[telemetry_q.OTHER] == 5 and sum(versions.values()) == servers


async def test_rerunning_a_day_gives_identical_rows(pool, mods):
    events = make_events(mods, DAY, servers=30)
    async with pool.acquire() as conn:
        await insert_events(conn, events)
        await telemetry_q.aggregate_day(conn, DAY)
        first = await stats(conn, DAY)
        for _ in range(2):
            await telemetry_q.aggregate_day(conn, DAY)
        assert await stats(conn, DAY) == first
        # A redelivered batch (same ping ids) changes nothing either.
        assert await insert_events(conn, events) == 0
        await telemetry_q.aggregate_day(conn, DAY)
        assert await stats(conn, DAY) == first


async def test_a_run_killed_mid_way_leaves_old_stats_and_the_rerun_is_exact(pool, mods, database_url):
    # Enough rows that the aggregate statement runs long enough to be killed from outside.
    events = make_events(mods, DAY, servers=3000, pings_per_server=2)
    async with pool.acquire() as conn:
        await insert_events(conn, events[: len(events) // 2])
        await telemetry_q.aggregate_day(conn, DAY)
        before = await stats(conn, DAY)
        await insert_events(conn, events[len(events) // 2:])
    victim = await asyncpg.connect(database_url)
    killer = await asyncpg.connect(database_url)
    try:
        pid = victim.get_server_pid()
        task = asyncio.create_task(telemetry_q.aggregate_day(victim, DAY, work_mem="64kB"))
        for _ in range(500):  # wait until the aggregate statement itself is running
            running = await killer.fetchval(
                "SELECT query FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", pid)
            if running and "DISTINCT ON" in running:
                break
            await asyncio.sleep(0.002)
        else:
            pytest.fail("the aggregation statement was never seen running")
        await killer.execute("SELECT pg_terminate_backend($1)", pid)
        with pytest.raises((asyncpg.PostgresError, asyncpg.InterfaceError, ConnectionError)):
            await task
        assert await stats(killer, DAY) == before  # rolled back: the old stats still stand
        pending = await telemetry_q.pending_days(killer, DAY)
        assert [r["day"] for r in pending] == [DAY]  # and the day is still due
        await telemetry_q.aggregate_day(killer, DAY)
        assert await stats(killer, DAY) == reference(events, DAY)
    finally:
        await killer.close()
        if not victim.is_closed():
            victim.terminate()


def aggregator(pool, day: date) -> tuple[Aggregator, TelemetryMetrics]:
    metrics = TelemetryMetrics(ServiceMetrics("telemetry"))
    clock = lambda: datetime(day.year, day.month, day.day, 13, tzinfo=UTC)  # noqa: E731
    return Aggregator(pool, metrics, clock, retention_days=30, ahead_days=3), metrics


async def test_only_changed_days_are_recomputed(pool, mods):
    agg, _ = aggregator(pool, DAY)
    async with pool.acquire() as conn:
        await insert_events(conn, make_events(mods, DAY - timedelta(days=1), servers=5))
        await insert_events(conn, make_events(mods, DAY, servers=5))
    assert [r["day"] for r in await agg.run_once()] == [DAY - timedelta(days=1), DAY]
    assert await agg.run_once() == []  # nothing written since: nothing to do
    async with pool.acquire() as conn:
        await insert_events(conn, make_events(mods, DAY, servers=3, seed=99))
    assert [r["day"] for r in await agg.run_once()] == [DAY]


async def test_one_aggregator_at_a_time_across_replicas(pool, mods, database_url):
    a, metrics_a = aggregator(pool, DAY)
    async with pool.acquire() as conn:
        await insert_events(conn, make_events(mods, DAY, servers=5))
    other = await asyncpg.connect(database_url)
    try:
        assert await telemetry_q.try_aggregator_lock(other)  # another replica mid-run
        assert await a.run_once() is None
        assert metrics_a.aggregation_runs.labels("locked_elsewhere")._value.get() == 1
        await other.close()  # that replica dies: its session lock goes with it
        assert [r["day"] for r in await a.run_once()] == [DAY]
    finally:
        if not other.is_closed():
            await other.close()
    # Many concurrent rounds: each day is aggregated by exactly one of them.
    async with pool.acquire() as conn:
        await insert_events(conn, make_events(mods, DAY, servers=5, seed=5))
    results = await asyncio.gather(*(a.run_once() for _ in range(4)))
    assert sum(len(r) for r in results if r) == 1
