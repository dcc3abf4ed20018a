"""The notify role's JetStream handler: a version that became public, matched against the
subscriptions, one outbox row per match, committed before the ack.

Accepted: ``VersionIndexed``, ``VersionScanned``, ``VersionReviewed`` and ``VersionStatusChanged``
(the ownership rules released it); only those saying
``visible`` are looked at, and the version is read again in the transaction: a version hidden,
quarantined or still held for its scan (``catalog.PUBLIC_VERSION``, its mod listed) matches
nothing, whatever the event said. A version that becomes public twice (indexed visible, then
scanned) finds its rows written the first time (``UNIQUE (subscription_id, version_id)``).
Saved searches are judged by the catalogue's own search conditions (``sqlpath.finds_mod``),
once per distinct (q, categories).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import asyncpg

from indexium_contracts import versions as version_events
from indexium_db.queries import notify as notify_q
from indexium_search import sqlpath
from indexium_notify.payloads import EVENT
from indexium_platform import logs
from indexium_platform.handler import JobHandler
from indexium_platform.jobs import JobLedger

from .clock import Clock
from .metrics import NotifyMetrics

log = logs.get(__name__)
CONSUMER = version_events.NOTIFY
# VersionStatusChanged: a version the ownership rules released (a settled mod-id claim's others).
ACCEPTED = (version_events.VersionIndexed, version_events.VersionScanned, version_events.VersionReviewed,
            version_events.VersionStatusChanged)


@dataclass(frozen=True)
class Matched:
    outcome: str  # matched | not_public
    candidates: int = 0
    enqueued: int = 0


async def match(conn: asyncpg.Connection, version_id: uuid.UUID) -> list | None:
    """The subscriptions this version (public now) is for; None when it is not public."""
    version = await notify_q.public_version(conn, version_id)
    if version is None:
        return None
    rows = await notify_q.candidates(conn, version_id)
    chosen = [r["id"] for r in rows if r["kind"] != "search"]
    verdicts: dict[tuple, bool] = {}
    for r in rows:
        if r["kind"] != "search":
            continue
        key = (r["search_q"], tuple(sorted(r["search_categories"] or ())))
        if key not in verdicts:
            sq = sqlpath.SearchQuery(q=key[0], categories=key[1])
            verdicts[key] = await sqlpath.finds_mod(conn, sq, version["mod_id"])
        if verdicts[key]:
            chosen.append(r["id"])
    return chosen


class Worker(JobHandler[version_events.VersionEvent, Matched]):
    decoder = version_events.decoder
    crash_event = "notify_job_crashed"

    def __init__(self, pool: asyncpg.Pool, ledger: JobLedger, clock: Clock, *, give_up_s: float,
                 metrics: NotifyMetrics, wake: Callable[[], None]):
        super().__init__(ledger, CONSUMER)
        self._pool, self._clock, self._give_up_s = pool, clock, give_up_s
        self._metrics, self._wake = metrics, wake

    def accepts(self, event) -> bool:
        return isinstance(event, ACCEPTED)

    async def run(self, event, msg_id: str) -> Matched:
        if not event.visible:
            return Matched("not_public")
        version_id = uuid.UUID(event.version_id)
        async with self._pool.acquire() as conn, conn.transaction():
            chosen = await match(conn, version_id)
            if chosen is None:
                return Matched("not_public")
            written = await notify_q.enqueue(conn, version_id, chosen, event=EVENT, now=self._clock.now(),
                                             give_up_s=self._give_up_s)
        if written:
            self._wake()  # this replica's sender takes them now, not at its next poll
        return Matched("matched", len(chosen), len(written))

    async def done(self, event, result: Matched, started: float) -> None:
        self._metrics.jobs.labels(result.outcome).inc()
        self._metrics.enqueued.inc(result.enqueued)
        log.info("notify_job", outcome=result.outcome, slug=event.slug, version=event.version_number,
                 subscriptions=result.candidates, enqueued=result.enqueued,
                 duration_ms=round((time.perf_counter() - started) * 1000, 1))

    def counted(self, event, outcome: str, category: str) -> None:
        self._metrics.jobs.labels(outcome).inc()
