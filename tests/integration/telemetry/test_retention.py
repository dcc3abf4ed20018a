"""Retention: whole day partitions dropped after 30 days; partitions created ahead; stats kept."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from indexium_db.queries import telemetry as telemetry_q
from indexium_platform.metrics import ServiceMetrics
from indexium_devstack import telemetry_samples as samples
from indexium_telemetry.aggregator import Aggregator
from indexium_telemetry.metrics import TelemetryMetrics

from .conftest import insert_events

TODAY = date(2025, 3, 14)


def noon(day: date, minute: int = 0) -> str:
    return datetime(day.year, day.month, day.day, 12, minute, tzinfo=UTC).isoformat()


async def test_old_partitions_are_dropped_and_aggregates_kept(pool, mods):
    metrics = TelemetryMetrics(ServiceMetrics("telemetry"))
    clock = lambda: datetime(2025, 3, 14, 0, 30, tzinfo=UTC)  # noqa: E731
    agg = Aggregator(pool, metrics, clock, retention_days=30, ahead_days=3)
    old_days = [TODAY - timedelta(days=n) for n in (45, 31)]
    kept_days = [TODAY - timedelta(days=n) for n in (30, 1)]
    async with pool.acquire() as conn:
        for day in old_days + kept_days:
            # Two pings half an hour apart: the server counts for that day.
            await insert_events(conn, [samples.event(server=1, mods=[(mods["sodium"], "1")],
                                                     received_at=noon(day, minute)) for minute in (0, 30)])
            await telemetry_q.aggregate_day(conn, day)
        await insert_events(conn, [samples.event(server=2, mods=[(mods["sodium"], "1")],
                                                 received_at=noon(old_days[0]))])  # written, never aggregated

    assert await agg.run_once() is not None
    async with pool.acquire() as conn:
        partitions = await telemetry_q.list_partitions(conn)
        assert not set(old_days) & set(partitions)
        assert set(kept_days) <= set(partitions)
        # Created ahead: yesterday .. today + 3.
        assert {TODAY + timedelta(days=n) for n in range(-1, 4)} <= set(partitions)
        tables = {r["relname"] for r in await conn.fetch(
            "SELECT relname FROM pg_class WHERE relname LIKE 'mod_telemetry_pings_p%' AND relkind = 'r'")}
        assert tables == {telemetry_q.partition_name(d) for d in partitions}
        raw_days = {r["d"] for r in await conn.fetch(
            "SELECT DISTINCT (received_at AT TIME ZONE 'UTC')::date AS d FROM mod_telemetry_pings")}
        assert raw_days == set(kept_days)
        # Aggregates outlive the raw pings, and dropped days are never recomputed to nothing.
        stat_days = {r["day"] for r in await conn.fetch("SELECT day FROM mod_daily_stats")}
        assert set(old_days) <= stat_days
        assert await telemetry_q.pending_days(conn, date(2000, 1, 1)) == []
    assert metrics.partitions_dropped._value.get() == 2
    assert metrics.partitions_created._value.get() >= 4


async def test_partition_maintenance_is_idempotent_and_safe_concurrently(pool):
    import asyncio
    days = [TODAY + timedelta(days=n) for n in range(5)]

    async def ensure():
        async with pool.acquire() as conn:
            return await telemetry_q.ensure_partitions(conn, days)

    created = await asyncio.gather(*(ensure() for _ in range(4)))
    assert sorted(d for c in created for d in c) == days  # each created exactly once
    async with pool.acquire() as conn:
        assert await telemetry_q.ensure_partitions(conn, days) == []
