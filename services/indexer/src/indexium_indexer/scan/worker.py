"""The scan stage's JetStream handler: decode, scan the version, then ack / nak / dead-letter.

Order on success: commit (in the job) -> publish ``version.scanned`` -> ack; a crash
between steps redelivers and the job is idempotent. Retryable download failures
(network, 5xx, 429, truncated bodies) spend one of ``max_attempts`` counted in
``job_attempts``; when they run out the message is dead-lettered and the version stays
``pending_scan`` (invisible) until an operator replays it. Outages of PostgreSQL or
NATS spend no attempt.
"""

from __future__ import annotations

import time

import asyncpg
import msgspec
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import deadletter, versions as version_events
from indexium_db.queries import deadletters, deliveries
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat

from ..outages import is_outage
from .job import VersionScanner
from .metrics import ScanMetrics
from .settings import Settings

log = logs.get(__name__)
CONSUMER = version_events.SCAN


class Worker:
    def __init__(self, scanner: VersionScanner, pool: asyncpg.Pool, js: JetStreamContext,
                 settings: Settings, metrics: ScanMetrics):
        self._scanner, self._pool, self._js = scanner, pool, js
        self._settings, self._metrics = settings, metrics

    async def handle(self, msg: Msg) -> None:
        meta = msg.metadata
        msg_id = (msg.headers or {}).get("Nats-Msg-Id") or f"seq-{meta.sequence.stream}"
        job_key = f"{CONSUMER.durable}:{msg_id}"
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=meta.sequence.stream)
        started = time.perf_counter()
        try:
            event = version_events.decoder.decode(msg.data)
        except msgspec.DecodeError as exc:
            await self._dead_letter(msg, msg_id, "undecodable", str(exc), meta.num_delivered)
            return
        if not isinstance(event, version_events.VersionIndexed):
            await msg.term()  # the consumer filters on "indexed"; anything else is a setup mistake
            return
        try:
            async with heartbeat(msg, every_s=CONSUMER.ack_wait_s / 3):
                result = await self._scanner.handle(event)
                if result.event is not None:
                    await self._js.publish(
                        version_events.SCANNED, version_events.encoder.encode(result.event),
                        headers={"Nats-Msg-Id": f"VersionScanned:{event.version_id}:{msg_id}"},
                    )
            await msg.ack()
            self._metrics.jobs.labels(result.outcome).inc()
            log.info("scan_job", outcome=result.outcome, slug=event.slug, version=event.version_number,
                     status=result.event.status if result.event else None, files=len(result.verdicts),
                     reused=result.reused, bytes=result.bytes_scanned,
                     results=[v.status for v in result.verdicts],
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._clear_attempts(job_key)
        except JarReadError as exc:  # only retryable ones leave the job
            await self._retry(msg, msg_id, job_key, exc, event)
        except Exception as exc:
            if not is_outage(exc):
                raise  # a bug: the consumer loop logs it and naks
            self._metrics.jobs.labels("outage").inc()
            log.warning("scan_job_outage", error=str(exc) or type(exc).__name__)
            await msg.nak(delay=self._settings.outage_retry_s)

    async def _retry(self, msg: Msg, msg_id: str, job_key: str, exc: JarReadError, event) -> None:
        error = f"{exc.code}: {exc.message}"
        try:
            async with self._pool.acquire() as conn:
                attempts = await deliveries.add_attempt(conn, job_key, error)
        except Exception as db_exc:
            if not is_outage(db_exc):
                raise
            await msg.nak(delay=self._settings.outage_retry_s)
            return
        if attempts >= self._settings.max_attempts:
            await self._dead_letter(msg, msg_id, "retries_exhausted", error, attempts)
            return
        delay = self._settings.retry_base_s * 4 ** (attempts - 1)
        if exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        self._metrics.jobs.labels("retry").inc()
        log.info("scan_job_retry", code=exc.code, attempts=attempts, delay_s=delay, slug=event.slug)
        await msg.nak(delay=delay)

    async def _dead_letter(self, msg: Msg, msg_id: str, category: str, error: str, attempts: int) -> None:
        meta = msg.metadata
        try:
            async with self._pool.acquire() as conn:
                await deadletters.insert(
                    conn, consumer=CONSUMER.durable, subject=msg.subject, msg_id=msg_id,
                    stream_sequence=meta.sequence.stream, category=category, error=error[:2000],
                    attempts=attempts, payload=msg.data,
                )
            await self._js.publish(
                deadletter.subject_for(CONSUMER.durable),
                deadletter.encoder.encode(deadletter.DeadLetter(
                    consumer=CONSUMER.durable, subject=msg.subject, stream_sequence=meta.sequence.stream,
                    attempts=attempts, category=category, error=error[:2000], payload=msg.data, msg_id=msg_id,
                )),
                headers={"Nats-Msg-Id": f"dl:{CONSUMER.durable}:{meta.sequence.stream}"},
            )
        except Exception as exc:
            if not is_outage(exc):
                raise
            await msg.nak(delay=self._settings.outage_retry_s)
            return
        await msg.term()
        self._metrics.jobs.labels("dead_lettered").inc()
        self._metrics.dead_letters.labels(category).inc()
        log.warning("scan_job_dead_lettered", category=category, error=error[:500], attempts=attempts)

    async def _clear_attempts(self, job_key: str) -> None:
        try:
            async with self._pool.acquire() as conn:
                await deliveries.clear_attempts(conn, job_key)
        except Exception as exc:  # housekeeping only
            log.debug("clear_attempts_failed", error=str(exc))
