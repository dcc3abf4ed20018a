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
from nats.js import JetStreamContext

from indexium_contracts import deadletter, ingest, onboarding as contract
from indexium_db.queries import deadletters, deliveries
from indexium_github import GitHubError, InstallationUnavailable, RateLimited
from indexium_jar.errors import JarReadError
from indexium_platform import logs
from indexium_platform.consumer import heartbeat

from ..job import parse_time
from ..outages import is_outage
from .metrics import GithubMetrics
from .onboarding import Onboarding
from .settings import Settings

log = logs.get(__name__)
CONSUMER = contract.GITHUB
EVENTS = {
    ingest.InstallationReceived: "installation",
    ingest.InstallationRepositoriesReceived: "installation_repositories",
    ingest.PushReceived: "push",
    ingest.RepositoryReceived: "repository",
}


class Worker:
    def __init__(self, onboarding: Onboarding, pool: asyncpg.Pool, js: JetStreamContext, settings: Settings,
                 metrics: GithubMetrics):
        self._onboarding, self._pool, self._js = onboarding, pool, js
        self._settings, self._metrics = settings, metrics
        self._handlers = {
            ingest.InstallationReceived: onboarding.installation,
            ingest.InstallationRepositoriesReceived: onboarding.installation_repositories,
            ingest.PushReceived: onboarding.push,
            ingest.RepositoryReceived: onboarding.repository,
        }

    async def handle(self, msg: Msg) -> None:
        meta = msg.metadata
        msg_id = (msg.headers or {}).get("Nats-Msg-Id") or f"seq-{meta.sequence.stream}"
        structlog.contextvars.bind_contextvars(msg_id=msg_id, stream_seq=meta.sequence.stream)
        try:
            event = ingest.decoder.decode(msg.data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            await self._dead_letter(msg, msg_id, "undecodable", str(exc), meta.num_delivered)
            return
        handler = self._handlers.get(type(event))
        if handler is None:
            await msg.term()  # the consumer filters on the App's subjects: a setup mistake
            return
        name = EVENTS[type(event)]
        action = getattr(event.webhook, "action", None) or "-"
        started = time.perf_counter()
        try:
            async with heartbeat(msg, every_s=CONSUMER.ack_wait_s / 3):
                try:
                    outcome = await handler(event)
                except InstallationUnavailable:
                    outcome = "unavailable"  # suspended or uninstalled: that event carries the state
                await self._record(event, name, action, outcome)
            await msg.ack()
            self._metrics.events.labels(name, action, outcome).inc()
            log.info("github_event", github_event=name, action=action, outcome=outcome,
                     duration_ms=round((time.perf_counter() - started) * 1000, 1))
            await self._clear_attempts(msg_id)
        except RateLimited as exc:
            self._metrics.events.labels(name, action, "rate_limited").inc()
            await msg.nak(delay=max(1.0, exc.retry_at - time.time()))
        except (GitHubError, JarReadError) as exc:
            if not exc.retryable:
                await self._dead_letter(msg, msg_id, f"github_{getattr(exc, 'status', 'jar')}", str(exc),
                                        meta.num_delivered, event, name)
                return
            await self._retry(msg, msg_id, str(exc), event, name, action)
        except Exception as exc:
            if not is_outage(exc):
                raise  # a bug: the consumer loop logs it and naks
            self._metrics.events.labels(name, action, "outage").inc()
            log.warning("github_event_outage", error=str(exc) or type(exc).__name__)
            await msg.nak(delay=self._settings.outage_retry_s)

    async def _record(self, event, name: str, action: str, outcome: str, conn=None) -> None:
        args = (event.delivery_id, name, action, parse_time(event.received_at), outcome)
        if conn is not None:
            await deliveries.record(conn, *args)
            return
        async with self._pool.acquire() as c:
            await deliveries.record(c, *args)

    async def _retry(self, msg: Msg, msg_id: str, error: str, event, name: str, action: str) -> None:
        try:
            async with self._pool.acquire() as conn:
                attempts = await deliveries.add_attempt(conn, f"{CONSUMER.durable}:{msg_id}", error[:2000])
        except Exception as exc:
            if not is_outage(exc):
                raise
            await msg.nak(delay=self._settings.outage_retry_s)
            return
        if attempts >= self._settings.max_attempts:
            await self._dead_letter(msg, msg_id, "retries_exhausted", error, attempts, event, name)
            return
        self._metrics.events.labels(name, action, "retry").inc()
        await msg.nak(delay=self._settings.retry_base_s * 4 ** (attempts - 1))

    async def _dead_letter(self, msg: Msg, msg_id: str, category: str, error: str, attempts: int,
                           event=None, name: str = "-") -> None:
        meta = msg.metadata
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                await deadletters.insert(
                    conn, consumer=CONSUMER.durable, subject=msg.subject, msg_id=msg_id,
                    stream_sequence=meta.sequence.stream, category=category, error=error[:2000],
                    attempts=attempts, payload=msg.data,
                )
                if event is not None:
                    await self._record(event, name, getattr(event.webhook, "action", None) or "-",
                                       "dead_lettered", conn=conn)
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
        self._metrics.events.labels(name, "-", "dead_lettered").inc()
        log.warning("github_event_dead_lettered", category=category, error=error[:500], attempts=attempts)

    async def _clear_attempts(self, msg_id: str) -> None:
        try:
            async with self._pool.acquire() as conn:
                await deliveries.clear_attempts(conn, f"{CONSUMER.durable}:{msg_id}")
        except Exception as exc:  # housekeeping only
            log.debug("clear_attempts_failed", error=str(exc))
