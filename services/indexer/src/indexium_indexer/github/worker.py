"""The GitHub role's JetStream handler: decode, dispatch, then ack / nak / dead-letter.

* applied, ignored or stale -> ack (handlers are idempotent; stale = older than state);
* GitHub's quota would take too long to come back -> nak until the reset (no attempt spent);
* installation gone or suspended -> ack (its own event will arrive, or did);
* GitHub 5xx/network -> one of ``max_attempts`` spent (``job_attempts``), nak 5 s × 4ⁿ;
* PostgreSQL/NATS away -> nak after a pause, no attempt spent;
* anything permanent -> a ``dead_letters`` row + DEADLETTER message, then term.
"""

from __future__ import annotations

import time

import asyncpg
from nats.aio.msg import Msg

from indexium_contracts import ingest, onboarding as contract
from indexium_db.queries import deliveries as deliveries_q
from indexium_github import GitHubError, InstallationUnavailable, RateLimited
from indexium_github.times import parse_time
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.handler import JobHandler
from indexium_platform.jobs import JobLedger

from .metrics import GithubMetrics
from .onboarding import Onboarding

log = logs.get(__name__)
CONSUMER = contract.GITHUB
EVENTS = {
    ingest.InstallationReceived: "installation",
    ingest.InstallationRepositoriesReceived: "installation_repositories",
    ingest.PushReceived: "push",
    ingest.RepositoryReceived: "repository",
    ingest.CatchUpRequested: "catch_up",
}


class Worker(JobHandler[ingest.IngestEvent, str]):
    decoder = ingest.decoder
    crash_event = "github_event_crashed"

    def __init__(self, onboarding: Onboarding, pool: asyncpg.Pool, ledger: JobLedger, metrics: GithubMetrics):
        super().__init__(ledger, CONSUMER)
        self._pool, self._metrics = pool, metrics
        self._handlers = {
            ingest.InstallationReceived: onboarding.installation,
            ingest.InstallationRepositoriesReceived: onboarding.installation_repositories,
            ingest.PushReceived: onboarding.push,
            ingest.RepositoryReceived: onboarding.repository,
            ingest.CatchUpRequested: onboarding.catch_up,
        }

    def accepts(self, event) -> bool:
        return type(event) in self._handlers  # the consumer filters on the App's subjects

    async def run(self, event, msg_id: str) -> str:
        try:
            outcome = await self._handlers[type(event)](event)
        except InstallationUnavailable:
            outcome = "unavailable"  # suspended or uninstalled: that event carries the state
        await self._record(event, outcome)
        return outcome

    async def failed(self, msg: Msg, event, exc: Exception) -> tuple[str, str] | None:
        if isinstance(exc, RateLimited):
            # The quota comes back at a known time: no attempt spent.
            await msg.nak(delay=max(1.0, exc.retry_at - time.time()))
            return "rate_limited", ""
        if isinstance(exc, (GitHubError, JarReadError)):
            if exc.retryable:
                return await self.ledger.retry(msg, "github", str(exc), also=self.dead_lettered(event)), ""
            category = f"github_{getattr(exc, 'status', 'jar')}"
            return await self.ledger.give_up(msg, category, str(exc), also=self.dead_lettered(event)), category
        return None

    async def done(self, event, outcome: str, started: float) -> None:
        name, action = _labels(event)
        log.info("github_event", github_event=name, action=action, outcome=outcome,
                 duration_ms=round((time.perf_counter() - started) * 1000, 1))
        self._metrics.events.labels(name, action, outcome).inc()

    def counted(self, event, outcome: str, category: str) -> None:
        self._metrics.events.labels(*(_labels(event) if event is not None else ("-", "-")), outcome).inc()

    async def _record(self, event, outcome: str, conn=None) -> None:
        name, action = _labels(event)
        args = (event.delivery_id, name, action, parse_time(event.received_at), outcome)
        if conn is not None:
            await deliveries_q.record(conn, *args)
            return
        async with self._pool.acquire() as c:
            await deliveries_q.record(c, *args)

    def dead_lettered(self, event):
        async def record(conn) -> None:
            await self._record(event, "dead_lettered", conn=conn)

        return record


def _labels(event) -> tuple[str, str]:
    """(event name, action) as delivery rows and metrics name them."""
    return EVENTS[type(event)], getattr(getattr(event, "webhook", None), "action", None) or "-"
