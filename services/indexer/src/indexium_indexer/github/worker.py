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
import msgspec
import structlog
from nats.aio.msg import Msg

from indexium_contracts import ingest, onboarding as contract
from indexium_db.queries import deliveries as deliveries_q
from indexium_github import GitHubError, InstallationUnavailable, RateLimited
from indexium_github.times import parse_time
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat
from indexium_platform.jobs import JobLedger, is_outage, message_id

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


class Worker:
    def __init__(self, onboarding: Onboarding, pool: asyncpg.Pool, ledger: JobLedger, metrics: GithubMetrics):
        self._pool, self._ledger, self._metrics = pool, ledger, metrics
        self._handlers = {
            ingest.InstallationReceived: onboarding.installation,
            ingest.InstallationRepositoriesReceived: onboarding.installation_repositories,
            ingest.PushReceived: onboarding.push,
            ingest.RepositoryReceived: onboarding.repository,
            ingest.CatchUpRequested: onboarding.catch_up,
        }

    async def handle(self, msg: Msg) -> None:
        structlog.contextvars.bind_contextvars(msg_id=message_id(msg), stream_seq=msg.metadata.sequence.stream)
        try:
            event = ingest.decoder.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            outcome = await self._ledger.give_up(msg, "undecodable", str(exc))
            self._metrics.events.labels("-", "-", outcome).inc()
            return
        handler = self._handlers.get(type(event))
        if handler is None:
            await msg.term()  # the consumer filters on the App's subjects: a setup mistake
            return
        name = EVENTS[type(event)]
        action = getattr(getattr(event, "webhook", None), "action", None) or "-"
        started = time.perf_counter()
        try:
            async with heartbeat(msg, every_s=CONSUMER.ack_wait_s / 3):
                try:
                    outcome = await handler(event)
                except InstallationUnavailable:
                    outcome = "unavailable"  # suspended or uninstalled: that event carries the state
                await self._record(event, name, action, outcome)
            await msg.ack()
            log.info("github_event", github_event=name, action=action, outcome=outcome,
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._ledger.succeeded(msg)
        except RateLimited as exc:
            outcome = "rate_limited"  # the quota comes back at a known time: no attempt spent
            await msg.nak(delay=max(1.0, exc.retry_at - time.time()))
        except (GitHubError, JarReadError) as exc:
            record = self._dead_lettered(event, name, action)
            if exc.retryable:
                outcome = await self._ledger.retry(msg, "github", str(exc), also=record)
            else:
                outcome = await self._ledger.give_up(
                    msg, f"github_{getattr(exc, 'status', 'jar')}", str(exc), also=record)
        except Exception as exc:
            if is_outage(exc):
                outcome = await self._ledger.outage(msg, exc)
            else:
                log.exception("github_event_crashed")  # a bug: spend attempts, end as a dead letter
                outcome = await self._ledger.retry(msg, "internal_error", type(exc).__name__,
                                                   also=self._dead_lettered(event, name, action))
        self._metrics.events.labels(name, action, outcome).inc()

    async def _record(self, event, name: str, action: str, outcome: str, conn=None) -> None:
        args = (event.delivery_id, name, action, parse_time(event.received_at), outcome)
        if conn is not None:
            await deliveries_q.record(conn, *args)
            return
        async with self._pool.acquire() as c:
            await deliveries_q.record(c, *args)

    def _dead_lettered(self, event, name: str, action: str):
        async def record(conn) -> None:
            await self._record(event, name, action, "dead_lettered", conn=conn)

        return record
