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

import msgspec
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import versions as version_events
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat
from indexium_platform.jobs import JobLedger, is_outage, message_id
from .job import VersionScanner
from .metrics import ScanMetrics

log = logs.get(__name__)
CONSUMER = version_events.SCAN


class Worker:
    def __init__(self, scanner: VersionScanner, ledger: JobLedger, js: JetStreamContext,
                 metrics: ScanMetrics):
        self._scanner, self._ledger, self._js, self._metrics = scanner, ledger, js, metrics

    async def handle(self, msg: Msg) -> None:
        msg_id = message_id(msg)
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=msg.metadata.sequence.stream)
        started = time.perf_counter()
        try:
            event = version_events.decoder.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._count(await self._ledger.give_up(msg, "undecodable", str(exc)), "undecodable")
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
        except JarReadError as exc:  # only retryable ones leave the job
            outcome = await self._ledger.retry(msg, exc.code, exc.message, retry_after=exc.retry_after)
            self._count(outcome, "retries_exhausted")
        except Exception as exc:
            if is_outage(exc):
                self._count(await self._ledger.outage(msg, exc), "")
                return
            log.exception("scan_job_crashed")  # a bug: spend attempts, end as a dead letter
            self._count(await self._ledger.retry(msg, "internal_error", type(exc).__name__),
                        "retries_exhausted")
        else:
            self._metrics.jobs.labels(result.outcome).inc()
            log.info("scan_job", outcome=result.outcome, slug=event.slug, version=event.version_number,
                     status=result.event.status if result.event else None, files=len(result.verdicts),
                     reused=result.reused, bytes=result.bytes_scanned,
                     results=[v.status for v in result.verdicts],
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._ledger.succeeded(msg)

    def _count(self, outcome: str, category: str) -> None:
        self._metrics.jobs.labels(outcome).inc()
        if outcome == "dead_lettered":
            self._metrics.dead_letters.labels(category).inc()
