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

from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import ingest, versions as version_events
from indexium_db.queries import deliveries as deliveries_q
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.handler import JobHandler
from indexium_platform.jobs import JobLedger

from indexium_github import assets
from indexium_github.times import parse_time

from .job import INDEX_ACTIONS, JobResult, PermanentJobError, ReleaseIndexer
from .metrics import IndexerMetrics

log = logs.get(__name__)
CONSUMER = ingest.INDEXER
SUBJECTS = {version_events.VersionIndexed: version_events.INDEXED, version_events.VersionHidden: version_events.HIDDEN,
            version_events.VersionStatusChanged: version_events.STATUS_CHANGED}


class Worker(JobHandler[ingest.ReleaseReceived, JobResult]):
    decoder = ingest.decoder
    crash_event = "release_job_crashed"

    def __init__(self, indexer: ReleaseIndexer, ledger: JobLedger, js: JetStreamContext,
                 metrics: IndexerMetrics):
        super().__init__(ledger, CONSUMER)
        self._indexer, self._js, self._metrics = indexer, js, metrics

    def accepts(self, event) -> bool:
        return isinstance(event, ingest.ReleaseReceived)  # the consumer filters on releases

    async def run(self, event: ingest.ReleaseReceived, msg_id: str) -> JobResult:
        result = await self._indexer.handle(event)
        for ev in result.events:
            await self._js.publish(
                SUBJECTS[type(ev)], version_events.encoder.encode(ev),
                headers={"Nats-Msg-Id": f"{type(ev).__name__}:{ev.version_id}:{msg_id}"},
            )
        return result

    async def failed(self, msg: Msg, event: ingest.ReleaseReceived, exc: Exception) -> tuple[str, str] | None:
        if isinstance(exc, PermanentJobError):
            outcome = await self.ledger.give_up(msg, exc.category, str(exc), also=self.dead_lettered(event))
            return outcome, exc.category
        if isinstance(exc, JarReadError):  # only retryable ones leave the job
            outcome = await self.ledger.retry(msg, exc.code, str(exc), retry_after=exc.retry_after,
                                              also=self.dead_lettered(event))
            return outcome, "retries_exhausted"
        return None

    async def done(self, event: ingest.ReleaseReceived, result: JobResult, started: float) -> None:
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
        if result.outcome == "ignored" and (reread := _who_rereads(event)) is not None:
            log.info("release_without_mod_asset", repo=event.webhook.repository.full_name,
                     tag=event.webhook.release.tag_name, assets=len(event.webhook.release.assets), reread=reread)
        log.info("release_job", outcome=result.outcome, changed=result.changed, action=event.webhook.action,
                 repo=event.webhook.repository.full_name, tag=event.webhook.release.tag_name,
                 requests=result.requests, bytes_fetched=result.bytes_fetched,
                 duration_ms=round((time.perf_counter() - started) * 1000, 1))

    def counted(self, event, outcome: str, category: str) -> None:
        self._metrics.jobs.labels(outcome).inc()
        if outcome == "dead_lettered":
            self._metrics.dead_letters.labels(category).inc()

    def finished(self, seconds: float) -> None:
        self._metrics.job_seconds.observe(seconds)

    def dead_lettered(self, event: ingest.ReleaseReceived):
        """Record the delivery's outcome in the dead-letter transaction."""

        async def record(conn) -> None:
            await deliveries_q.record(conn, event.delivery_id, "release", event.webhook.action,
                                      parse_time(event.received_at), "dead_lettered")

        return record


def _who_rereads(event: ingest.ReleaseReceived) -> str | None:
    """For a published release ignored for having no mod jar yet (release tools publish first
    and upload afterwards; GitHub sends no webhook for an upload): who reads it again."""
    hook = event.webhook
    if hook.action not in INDEX_ACTIONS or hook.release.draft or assets.mod_jars(hook.release.assets):
        return None
    if event.delivery_id.startswith("backfill:"):
        return "none: read from GitHub's API just now by the GitHub role"
    if hook.release.immutable:
        return "none: an immutable release's assets are final"
    if hook.installation is None:
        return ("none: not sent through the GitHub App, so nothing can read the release again; "
                "its jars are indexed from its next webhook (an edit)")
    return ("the GitHub role, on INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS (docs/github-app.md); with no "
            "GitHub role running within that schedule, the jars wait for the next webhook or reconciliation")
