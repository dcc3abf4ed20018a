"""The writer: TELEMETRY pings -> mod_telemetry_pings, a batch per transaction, ack after commit.

A batch is one multi-row INSERT ... ON CONFLICT DO NOTHING keyed by (received_at,
ping_id), so a redelivered batch adds nothing. Partitions for the batch's days are
ensured first (normally created ahead by the aggregator). A PostgreSQL outage naks
the batch with a delay (nothing is dropped); a row PostgreSQL refuses is isolated by
retrying the batch one ping at a time, and the culprit is dead-lettered.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import date, datetime

import asyncpg
import msgspec
import nats.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import telemetry
from indexium_contracts.telemetry import utc_day
from indexium_db.queries import telemetry as telemetry_q
from indexium_platform import logs
from indexium_platform.jobs import JobLedger

from .metrics import TelemetryMetrics

log = logs.get(__name__)
CONSUMER = telemetry.WRITER
RETRY_DELAY_S = 5.0
_json = msgspec.json.Encoder()


class _Row(msgspec.Struct):
    received_at: str
    ping_id: str
    server_hash: str
    mod_ids: list[str]
    mod_versions: list[str | None]
    game_version: str
    loader: str
    java_version: str
    os: str
    arch: str
    core_count: int
    player_count: int | None
    online_mode: bool | None


def to_row(event: telemetry.PingAccepted) -> _Row:
    return _Row(
        received_at=event.received_at, ping_id=str(event.ping_id), server_hash=event.server_hash.hex(),
        mod_ids=[str(m.mod_id) for m in event.mods], mod_versions=[m.version for m in event.mods],
        game_version=event.game_version, loader=event.loader, java_version=event.java_version,
        os=event.os, arch=event.arch, core_count=event.core_count,
        player_count=event.player_count, online_mode=event.online_mode,
    )


def _is_data_error(exc: BaseException) -> bool:
    """PostgreSQL refused the rows themselves (retrying the same rows cannot help)."""
    return isinstance(exc, (asyncpg.DataError, asyncpg.IntegrityConstraintViolationError))


class PingWriter:
    def __init__(self, js: JetStreamContext, pool: asyncpg.Pool, metrics: TelemetryMetrics, *,
                 batch: int, wait_s: float):
        self._js, self._pool, self._metrics = js, pool, metrics
        self._batch, self._wait = batch, wait_s
        # Only give_up is used: a batch never spends attempts (a refused row is isolated instead).
        self._ledger = JobLedger(pool, js, CONSUMER, max_attempts=1, retry_base_s=RETRY_DELAY_S,
                                 outage_retry_s=RETRY_DELAY_S)
        self._partitions: set[date] = set()
        self._stopping = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.bound = False

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="telemetry-writer")

    async def stop(self) -> None:
        """Stop fetching; the batch in hand is finished (it is small) or left unacked."""
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, timeout=self._wait + 10)

    async def _run(self) -> None:
        sub = None
        while sub is None and not self._stopping.is_set():
            try:
                sub = await self._js.pull_subscribe_bind(CONSUMER.durable, CONSUMER.stream)
                self.bound = True
            except Exception as exc:  # stream not set up yet, or NATS away: keep trying
                log.warning("consumer_bind_failed", consumer=CONSUMER.durable, error=str(exc))
                await asyncio.sleep(1.0)
        while sub is not None and not self._stopping.is_set():
            try:
                msgs = await sub.fetch(batch=self._batch, timeout=self._wait)
            except (asyncio.TimeoutError, nats.errors.TimeoutError):
                continue
            except Exception as exc:
                if not self._stopping.is_set():
                    log.warning("consumer_fetch_failed", consumer=CONSUMER.durable, error=str(exc))
                    await asyncio.sleep(0.5)
                continue
            try:
                await self.write(msgs)
            except Exception:
                log.exception("writer_batch_crashed")
                await self._nak_all(msgs)
        if sub is not None:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()

    async def write(self, msgs: list[Msg]) -> None:
        good: list[tuple[Msg, _Row]] = []
        for msg in msgs:
            try:
                event = telemetry.decoder.decode(msg.data)
                good.append((msg, to_row(event)))
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                await self._dead_letter(msg, "undecodable", str(exc))
        if not good:
            return
        started = time.perf_counter()
        try:
            await self._insert([row for _, row in good])
        except Exception as exc:
            if not _is_data_error(exc):
                log.warning("writer_batch_retry", pings=len(good), error=str(exc) or type(exc).__name__)
                self._metrics.writer_pings.labels("retried").inc(len(good))
                await self._nak_all([m for m, _ in good])
                return
            await self._isolate(good)
            return
        self._metrics.writer_batch_seconds.observe(time.perf_counter() - started)
        await self._ack_all([m for m, _ in good])

    async def _insert(self, rows: list[_Row]) -> int:
        days = sorted({utc_day(datetime.fromisoformat(r.received_at)) for r in rows})
        async with self._pool.acquire() as conn:
            missing = [d for d in days if d not in self._partitions]
            if missing:
                await telemetry_q.ensure_partitions(conn, missing)
                self._partitions.update(missing)
            async with conn.transaction():
                written = await telemetry_q.insert_pings(conn, _json.encode(rows).decode())
                await telemetry_q.mark_days_written(conn, days)
        self._metrics.writer_pings.labels("written").inc(written)
        self._metrics.writer_pings.labels("duplicate").inc(len(rows) - written)
        return written

    async def _isolate(self, good: list[tuple[Msg, _Row]]) -> None:
        for msg, row in good:
            try:
                await self._insert([row])
            except Exception as exc:
                if _is_data_error(exc):
                    await self._dead_letter(msg, "rejected_row", str(exc))
                else:
                    await self._nak_all([msg])
                continue
            await self._ack_all([msg])

    async def _dead_letter(self, msg: Msg, category: str, error: str) -> None:
        # A row + DEADLETTER copy, then term; if even the row cannot be written the ledger
        # naks the message so it comes back later.
        if await self._ledger.give_up(msg, category, error) == "dead_lettered":
            self._metrics.writer_pings.labels("dead_lettered").inc()

    @staticmethod
    async def _ack_all(msgs: list[Msg]) -> None:
        # An ack lost here means a redelivery, which the insert turns into a no-op.
        await asyncio.gather(*(m.ack() for m in msgs), return_exceptions=True)

    @staticmethod
    async def _nak_all(msgs: list[Msg]) -> None:
        await asyncio.gather(*(m.nak(delay=RETRY_DELAY_S) for m in msgs), return_exceptions=True)
