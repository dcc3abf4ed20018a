"""The indexer's JetStream handler: decode, run the job, then ack / nak / dead-letter.

Order on success: commit (in the job) -> publish "version indexed" -> ack. A crash
between any two steps redelivers the message, and the job is idempotent.
Retryable job failures (network, 5xx, 429) spend one of ``max_attempts``, counted in
PostgreSQL; outages of PostgreSQL or NATS spend none and are retried after a pause.
"""

from __future__ import annotations

import time

import asyncpg
import msgspec
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import deadletter, ingest, versions as version_events
from indexium_db.queries import deadletters, deliveries
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat

from .job import PermanentJobError, ReleaseIndexer, parse_time
from .metrics import IndexerMetrics
from .outages import is_outage
from .settings import Settings

log = logs.get(__name__)
CONSUMER = ingest.INDEXER


class Worker:
    def __init__(self, indexer: ReleaseIndexer, pool: asyncpg.Pool, js: JetStreamContext,
                 settings: Settings, metrics: IndexerMetrics):
        self._indexer, self._pool, self._js = indexer, pool, js
        self._settings, self._metrics = settings, metrics

    async def handle(self, msg: Msg) -> None:
        meta = msg.metadata
        msg_id = (msg.headers or {}).get("Nats-Msg-Id") or f"seq-{meta.sequence.stream}"
        job_key = f"{CONSUMER.durable}:{msg_id}"
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=meta.sequence.stream)
        started = time.perf_counter()
        try:
            event = ingest.decoder.decode(msg.data)
        except msgspec.DecodeError as exc:
            await self._dead_letter(msg, msg_id, "undecodable", str(exc), meta.num_delivered)
            return
        if not isinstance(event, ingest.ReleaseReceived):
            await msg.term()  # the consumer filters on releases; anything else is a setup mistake
            return
        try:
            async with heartbeat(msg, every_s=CONSUMER.ack_wait_s / 3):
                result = await self._indexer.handle(event)
                for ev in result.events:
                    subject = (version_events.INDEXED if isinstance(ev, version_events.VersionIndexed)
                               else version_events.HIDDEN)
                    await self._js.publish(
                        subject, version_events.encoder.encode(ev),
                        headers={"Nats-Msg-Id": f"{type(ev).__name__}:{ev.version_id}:{msg_id}"},
                    )
            await msg.ack()
            self._metrics.jobs.labels(result.outcome).inc()
            if result.requests:
                self._metrics.range_requests.observe(result.requests)
                self._metrics.bytes_fetched.inc(result.bytes_fetched)
            log.info("release_job", outcome=result.outcome, action=event.webhook.action,
                     repo=event.webhook.repository.full_name, tag=event.webhook.release.tag_name,
                     requests=result.requests, bytes_fetched=result.bytes_fetched,
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._clear_attempts(job_key)
        except PermanentJobError as exc:
            await self._dead_letter(msg, msg_id, exc.category, str(exc), meta.num_delivered, event)
        except JarReadError as exc:  # only retryable ones reach here
            await self._retry(msg, msg_id, job_key, exc.code, str(exc), exc.retry_after, event)
        except Exception as exc:
            if not is_outage(exc):
                raise  # a bug: the consumer loop logs it and naks
            self._metrics.jobs.labels("outage").inc()
            log.warning("release_job_outage", error=str(exc) or type(exc).__name__)
            await msg.nak(delay=self._settings.outage_retry_s)
        finally:
            self._metrics.job_seconds.observe(time.perf_counter() - started)

    async def _retry(self, msg: Msg, msg_id: str, job_key: str, code: str, error: str,
                     retry_after: float | None, event) -> None:
        try:
            async with self._pool.acquire() as conn:
                attempts = await deliveries.add_attempt(conn, job_key, f"{code}: {error}")
        except Exception as exc:
            if not is_outage(exc):
                raise
            await msg.nak(delay=self._settings.outage_retry_s)  # cannot count: do not spend
            return
        if attempts >= self._settings.max_attempts:
            await self._dead_letter(msg, msg_id, "retries_exhausted", f"{code}: {error}", attempts, event)
            return
        delay = self._settings.retry_base_s * 4 ** (attempts - 1)
        if retry_after is not None:
            delay = max(delay, retry_after)
        self._metrics.jobs.labels("retry").inc()
        log.info("release_job_retry", code=code, attempts=attempts, delay_s=delay)
        await msg.nak(delay=delay)

    async def _dead_letter(self, msg: Msg, msg_id: str, category: str, error: str, attempts: int,
                           event=None) -> None:
        """Row in dead_letters + copy on the DEADLETTER stream, then term: never silently dropped."""
        meta = msg.metadata
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                await deadletters.insert(
                    conn, consumer=CONSUMER.durable, subject=msg.subject, msg_id=msg_id,
                    stream_sequence=meta.sequence.stream, category=category, error=error[:2000],
                    attempts=attempts, payload=msg.data,
                )
                if event is not None:
                    await deliveries.record(
                        conn, event.delivery_id, "release", event.webhook.action,
                        parse_time(event.received_at), "dead_lettered",
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
        log.warning("release_job_dead_lettered", category=category, error=error[:500], attempts=attempts)

    async def _clear_attempts(self, job_key: str) -> None:
        try:
            async with self._pool.acquire() as conn:
                await deliveries.clear_attempts(conn, job_key)
        except Exception as exc:  # housekeeping only; the row is harmless
            log.debug("clear_attempts_failed", error=str(exc))
