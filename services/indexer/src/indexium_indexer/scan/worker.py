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

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import versions as version_events
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.handler import JobHandler
from indexium_platform.jobs import JobLedger

from .job import ScanOutcome, VersionScanner
from .metrics import ScanMetrics

log = logs.get(__name__)
CONSUMER = version_events.SCAN


class Worker(JobHandler[version_events.VersionIndexed, ScanOutcome]):
    decoder = version_events.decoder
    crash_event = "scan_job_crashed"

    def __init__(self, scanner: VersionScanner, ledger: JobLedger, js: JetStreamContext,
                 metrics: ScanMetrics):
        super().__init__(ledger, CONSUMER)
        self._scanner, self._js, self._metrics = scanner, js, metrics

    def accepts(self, event) -> bool:
        return isinstance(event, version_events.VersionIndexed)  # the consumer filters on "indexed"

    async def run(self, event: version_events.VersionIndexed, msg_id: str) -> ScanOutcome:
        result = await self._scanner.handle(event)
        if result.event is not None:
            await self._js.publish(
                version_events.SCANNED, version_events.encoder.encode(result.event),
                headers={"Nats-Msg-Id": f"VersionScanned:{event.version_id}:{msg_id}"},
            )
        for ev in result.also:
            await self._js.publish(
                version_events.STATUS_CHANGED, version_events.encoder.encode(ev),
                headers={"Nats-Msg-Id": f"VersionStatusChanged:{ev.version_id}:{msg_id}"},
            )
        return result

    async def failed(self, msg: Msg, event, exc: Exception) -> tuple[str, str] | None:
        if isinstance(exc, JarReadError):  # only retryable ones leave the job
            return (await self.ledger.retry(msg, exc.code, exc.message, retry_after=exc.retry_after),
                    "retries_exhausted")
        return None

    async def done(self, event: version_events.VersionIndexed, result: ScanOutcome, started: float) -> None:
        self._metrics.jobs.labels(result.outcome).inc()
        log.info("scan_job", outcome=result.outcome, slug=event.slug, version=event.version_number,
                 status=result.event.status if result.event else None, files=len(result.verdicts),
                 reused=result.reused, bytes=result.bytes_scanned,
                 results=[v.status for v in result.verdicts],
                 duration_ms=round((time.perf_counter() - started) * 1000, 1))

    def counted(self, event, outcome: str, category: str) -> None:
        self._metrics.jobs.labels(outcome).inc()
        if outcome == "dead_lettered":
            self._metrics.dead_letters.labels(category).inc()
