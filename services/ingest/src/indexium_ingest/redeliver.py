"""Failed deliveries come back: the reconciler of GitHub's hook deliveries.

GitHub never retries a failed delivery by itself and keeps it redeliverable for 3 days.
Every ``INDEXIUM_REDELIVER_INTERVAL_SECONDS`` one ingest replica (a NATS KV lock with a
TTL; ingest has no PostgreSQL) lists the App's deliveries (``GET /app/hook/deliveries``,
newest first, cursor-paginated, as the App's JWT) back to the lookback, groups the
attempts by ``guid`` (= our delivery id) and asks for a redelivery
(``POST /app/hook/deliveries/{id}/attempts``) of each delivery that

* has no successful (2xx) attempt,
* failed in a way a retry can fix (we were unreachable, 5xx, 429 — not a 4xx refusal),
* is not in ingest's long-window dedupe record (stored, but GitHub never saw our 202),
* and was asked for fewer than ``max_requests`` times, the last one ``spacing_s`` ago
  (``ingest_redelivered`` KV bucket: the redelivery may itself fail).

Oldest first, so an installation's events come back in their order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass, field
from datetime import datetime

import aiohttp
from aiohttp import web
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from indexium_contracts import onboarding
from indexium_github import ClientMetrics, GitHubClient, GitHubError
from indexium_platform import logs
from indexium_platform.metrics import ServiceMetrics

from .deliveries import DeliveryLog, key_for

log = logs.get(__name__)
LOCK_KEY = "redeliver"


@dataclass
class Attempts:
    """Every attempt GitHub lists for one delivery (guid)."""

    guid: str
    event: str
    first_at: float
    latest_id: int
    latest_status: int
    ok: bool

    @property
    def retryable(self) -> bool:
        return self.latest_status == 0 or self.latest_status >= 500 or self.latest_status == 429


@dataclass
class Report:
    listed: int = 0
    failed: int = 0
    redelivered: list[str] = field(default_factory=list)
    already_stored: int = 0
    given_up: int = 0


def _epoch(value: str | None) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() if value else 0.0


def group(items: list[dict]) -> list[Attempts]:
    """Attempts by guid, oldest delivery first."""
    by_guid: dict[str, Attempts] = {}
    for d in items:
        guid, status = d.get("guid"), int(d.get("status_code") or 0)
        if not guid:
            continue
        at, ok = _epoch(d.get("delivered_at")), 200 <= status < 300
        a = by_guid.get(guid)
        if a is None:
            by_guid[guid] = Attempts(guid, d.get("event") or "", at, d["id"], status, ok)
            continue
        a.ok |= ok
        a.first_at = min(a.first_at, at)
        if d["id"] > a.latest_id:
            a.latest_id, a.latest_status = d["id"], status
    return sorted(by_guid.values(), key=lambda a: (a.first_at, a.latest_id))


class KvLock:
    """One holder at a time: create-if-absent; the bucket's TTL frees a dead holder's key."""

    def __init__(self, kv: KeyValue, key: str, holder: str):
        self._kv, self._key, self._holder = kv, key, holder.encode()
        self._revision: int | None = None

    async def acquire(self) -> bool:
        try:
            self._revision = await self._kv.create(self._key, self._holder)
            return True
        except KeyWrongLastSequenceError:
            return False

    async def refresh(self) -> bool:
        """Rewrite the key (restarting its TTL); False if someone else holds it now."""
        if self._revision is None:
            return False
        try:
            self._revision = await self._kv.update(self._key, self._holder, last=self._revision)
            return True
        except KeyWrongLastSequenceError:
            self._revision = None
            return False

    async def release(self) -> None:
        if self._revision is not None:
            with contextlib.suppress(Exception):
                await self._kv.delete(self._key, last=self._revision)
            self._revision = None


class Redeliverer:
    def __init__(self, client: GitHubClient, js: JetStreamContext, delivery_log: DeliveryLog, *,
                 lookback_s: float, max_requests: int, spacing_s: float, metrics=None,
                 clock=time.time):
        self._client, self._js, self._log = client, js, delivery_log
        self._lookback, self._max, self._spacing = lookback_s, max_requests, spacing_s
        self._metrics, self._clock = metrics, clock
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{id(self):x}"

    async def run(self, stop: asyncio.Event, interval_s: float) -> None:
        while not stop.is_set():
            try:
                await self.run_once()
            except Exception as exc:  # GitHub or NATS away: next time
                log.warning("redeliver_failed", error=str(exc) or type(exc).__name__)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=interval_s)

    async def run_once(self) -> Report | None:
        """One pass, if no other replica is running one (None then)."""
        lock = KvLock(await self._js.key_value(onboarding.REDELIVERY_LOCK.name), LOCK_KEY, self.holder)
        if not await lock.acquire():
            return None
        try:
            return await self._pass(lock)
        finally:
            await lock.release()

    async def _pass(self, lock: KvLock) -> Report:
        report = Report()
        items = await self._list(lock)
        report.listed = len(items)
        record = await self._js.key_value(onboarding.REDELIVERED.name)
        for attempts in group(items):
            if attempts.ok:
                continue
            report.failed += 1
            if not attempts.retryable:
                continue  # we refused it (bad signature, malformed): a retry gets the same answer
            if await self._log.seen(attempts.guid):
                report.already_stored += 1
                continue
            if not await self._due(record, attempts.guid):
                report.given_up += 1
                continue
            if not await lock.refresh():
                break  # our lock expired and another replica took over
            # Remembered before GitHub is asked: the redelivered webhook can reach ingest before
            # the request returns, and ingest dates the event by this record's first_at.
            await self._remember(record, attempts.guid, attempts.first_at)
            await self._client.request("POST", f"/app/hook/deliveries/{attempts.latest_id}/attempts",
                                       app=True, op="redeliver")
            report.redelivered.append(attempts.guid)
            if self._metrics is not None:
                self._metrics.inc()
        log.info("redeliver_pass", listed=report.listed, failed=report.failed,
                 redelivered=len(report.redelivered), already_stored=report.already_stored,
                 given_up=report.given_up)
        return report

    async def _list(self, lock: KvLock) -> list[dict]:
        horizon = self._clock() - self._lookback
        items: list[dict] = []
        async for page in self._client.paginate("/app/hook/deliveries", app=True, op="list_deliveries"):
            batch = page.json() or []
            items += [d for d in batch if _epoch(d.get("delivered_at")) >= horizon]
            if any(_epoch(d.get("delivered_at")) < horizon for d in batch):
                break  # newest first: the rest is older still
            if not await lock.refresh():
                raise GitHubError(0, "redelivery lock lost", op="list_deliveries")
        return items

    async def _due(self, record: KeyValue, guid: str) -> bool:
        try:
            entry = await record.get(key_for(guid))
        except KeyNotFoundError:
            return True
        asked = json.loads(entry.value or b"{}")
        return asked.get("n", 0) < self._max and self._clock() - asked.get("at", 0) >= self._spacing

    async def _remember(self, record: KeyValue, guid: str, first_at: float) -> None:
        """How often and when we asked, and when GitHub first tried it (the event's own time:
        ingest orders the redelivered event by it)."""
        key = key_for(guid)
        try:
            n = json.loads((await record.get(key)).value or b"{}").get("n", 0)
        except KeyNotFoundError:
            n = 0
        await record.put(key, json.dumps({"n": n + 1, "at": self._clock(), "first_at": first_at}).encode())


REDELIVERER = web.AppKey("redeliverer", Redeliverer)


def cleanup_ctx(settings, metrics: ServiceMetrics, *, client_options: dict | None = None):
    """The reconciler as an ingest resource; add it after the NATS context (it uses JS)."""
    from . import routes

    async def ctx(app: web.Application):
        config = settings.github_app()
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
        client = GitHubClient(session, config, metrics=ClientMetrics(metrics, prefix="github_"),
                              user_agent="Indexium-Ingest", **(client_options or {}))
        requested = metrics.counter("redeliveries_requested_total",
                                    "Failed GitHub deliveries we asked GitHub to redeliver.")
        redeliverer = Redeliverer(
            client, app[routes.JS], app[routes.DELIVERIES], lookback_s=settings.redeliver_lookback_s,
            max_requests=settings.redeliver_max_requests, spacing_s=settings.redeliver_spacing_s,
            metrics=requested,
        )
        app[REDELIVERER] = redeliverer
        stop = asyncio.Event()
        task = None
        if settings.redeliver_interval_s > 0:
            task = asyncio.create_task(redeliverer.run(stop, settings.redeliver_interval_s),
                                       name="ingest:redeliver")
        yield
        stop.set()
        if task is not None:
            with contextlib.suppress(asyncio.TimeoutError, Exception):
                await asyncio.wait_for(task, timeout=settings.shutdown_grace_s)
        await session.close()

    return ctx
