"""The hourly aggregator: partitions ahead, retention, and per-day stats for changed days.

Any number of replicas may run this role; a PostgreSQL session advisory lock lets
one run at a time (the others skip that round). A day is recomputed whole from its
raw pings in one transaction whenever the writer has touched it since its last
aggregation, so a re-run gives identical rows and a run killed part-way leaves the
previous stats in place and is simply done again next time.
"""

from __future__ import annotations

import contextlib
import time
from datetime import date, timedelta

import asyncpg

from indexium_contracts.telemetry import utc_day
from indexium_db.queries import telemetry as telemetry_q
from indexium_platform import logs

from .metrics import TelemetryMetrics
from .salt import Clock

log = logs.get(__name__)


class Aggregator:
    def __init__(self, pool: asyncpg.Pool, metrics: TelemetryMetrics, clock: Clock, *,
                 retention_days: int, ahead_days: int, qualifying_span_s: float | None = None):
        self._pool, self._metrics, self._clock = pool, metrics, clock
        self._retention, self._ahead = retention_days, ahead_days
        self._span = telemetry_q.QUALIFYING_SPAN if qualifying_span_s is None else timedelta(seconds=qualifying_span_s)

    def first_kept_day(self, today: date) -> date:
        """Raw pings are kept for today and the ``retention_days`` complete days before it."""
        return today - timedelta(days=self._retention)

    async def run_once(self) -> list[dict] | None:
        """One round; None when another replica holds the lock."""
        async with self._pool.acquire() as conn:
            if not await telemetry_q.try_aggregator_lock(conn):
                self._metrics.aggregation_runs.labels("locked_elsewhere").inc()
                return None
            try:
                done = await self._round(conn)
            except Exception:
                self._metrics.aggregation_runs.labels("failed").inc()
                raise
            finally:
                # The pool's reset would release it too; this keeps the hand-over prompt.
                with contextlib.suppress(Exception):
                    await telemetry_q.release_aggregator_lock(conn)
        self._metrics.aggregation_runs.labels("done").inc()
        return done

    async def _round(self, conn: asyncpg.Connection) -> list[dict]:
        today = utc_day(self._clock())
        await self.maintain_partitions(conn, today)
        done = []
        for row in await telemetry_q.pending_days(conn, self.first_kept_day(today)):
            started = time.perf_counter()
            result = await telemetry_q.aggregate_day(conn, row["day"], qualifying_span=self._span)
            elapsed = time.perf_counter() - started
            self._metrics.aggregation_seconds.observe(elapsed)
            self._metrics.aggregated_days.inc()
            log.info("day_aggregated", day=row["day"].isoformat(), pings=result["pings"],
                     mods=result["mods"], duration_ms=round(elapsed * 1000, 1))
            done.append(result)
        return done

    async def maintain_partitions(self, conn: asyncpg.Connection, today: date) -> None:
        wanted = [today + timedelta(days=n) for n in range(-1, self._ahead + 1)]
        created = await telemetry_q.ensure_partitions(conn, wanted)
        dropped = await telemetry_q.drop_partitions_before(conn, self.first_kept_day(today))
        self._metrics.partitions_created.inc(len(created))
        self._metrics.partitions_dropped.inc(len(dropped))
        if created or dropped:
            log.info("partitions_maintained", created=[d.isoformat() for d in created],
                     dropped=[d.isoformat() for d in dropped])
