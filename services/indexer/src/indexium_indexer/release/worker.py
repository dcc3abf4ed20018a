"""The indexer's JetStream handler: decode, run the job, then ack / nak / dead-letter.

Order on success: commit (in the job) -> publish "version indexed" -> ack. A crash
between any two steps redelivers the message, and the job is idempotent.
Retryable failures (network, 5xx, 429, and unexpected errors) spend attempts counted
in PostgreSQL: the first try plus ``max_retries``; outages of PostgreSQL or NATS spend
none (see ``indexium_platform.jobs``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import msgspec
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import ingest, versions as version_events
from indexium_db.queries import deliveries as deliveries_q
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat
from indexium_platform.jobs import JobLedger, is_outage, message_id

from indexium_github.times import parse_time

from .job import PermanentJobError, ReleaseIndexer
from .metrics import IndexerMetrics

log = logs.get(__name__)
CONSUMER = ingest.INDEXER


class Worker:
    def __init__(self, indexer: ReleaseIndexer, ledger: JobLedger, js: JetStreamContext,
                 metrics: IndexerMetrics):
        self._indexer, self._ledger, self._js, self._metrics = indexer, ledger, js, metrics

    async def handle(self, msg: Msg) -> None:
        msg_id = message_id(msg)
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=msg.metadata.sequence.stream)
        started = time.perf_counter()
        try:
            event = ingest.decoder.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._count(await self._ledger.give_up(msg, "undecodable", str(exc)), "undecodable")
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
        except PermanentJobError as exc:
            outcome = await self._ledger.give_up(msg, exc.category, str(exc), also=self._dead_lettered(event))
            self._count(outcome, exc.category)
        except JarReadError as exc:  # only retryable ones leave the job
            outcome = await self._ledger.retry(msg, exc.code, str(exc), retry_after=exc.retry_after,
                                               also=self._dead_lettered(event))
            self._count(outcome, "retries_exhausted")
        except Exception as exc:
            if is_outage(exc):
                self._count(await self._ledger.outage(msg, exc), "")
                return
            # A bug or a case we did not foresee: log it, and let it spend attempts like any
            # retryable failure, so it ends as a dead letter instead of looping forever.
            log.exception("release_job_crashed")
            outcome = await self._ledger.retry(msg, "internal_error", type(exc).__name__,
                                               also=self._dead_lettered(event))
            self._count(outcome, "retries_exhausted")
        else:
            self._metrics.jobs.labels(result.outcome).inc()
            if result.requests:
                self._metrics.range_requests.observe(result.requests)
                self._metrics.bytes_fetched.inc(result.bytes_fetched)
            if result.outcome == "indexed":
                received = parse_time(event.received_at)
                self._metrics.webhook_to_indexed.observe((datetime.now(UTC) - received).total_seconds())
            for _, code in result.skipped:
                # Never a silent drop: a jar of the release not in the version is named and counted.
                self._metrics.jars_skipped.labels(code).inc()
            if result.skipped:
                log.warning("jars_skipped", repo=event.webhook.repository.full_name,
                            tag=event.webhook.release.tag_name,
                            skipped=[f"{name}: {code}" for name, code in result.skipped])
            log.info("release_job", outcome=result.outcome, action=event.webhook.action,
                     repo=event.webhook.repository.full_name, tag=event.webhook.release.tag_name,
                     requests=result.requests, bytes_fetched=result.bytes_fetched,
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._ledger.succeeded(msg)
        finally:
            self._metrics.job_seconds.observe(time.perf_counter() - started)

    def _count(self, outcome: str, category: str) -> None:
        self._metrics.jobs.labels(outcome).inc()
        if outcome == "dead_lettered":
            self._metrics.dead_letters.labels(category).inc()

    @staticmethod
    def _dead_lettered(event: ingest.ReleaseReceived):
        """Record the delivery's outcome in the dead-letter transaction."""

        async def record(conn) -> None:
            await deliveries_q.record(conn, event.delivery_id, "release", event.webhook.action,
                                    parse_time(event.received_at), "dead_lettered")

        return record
