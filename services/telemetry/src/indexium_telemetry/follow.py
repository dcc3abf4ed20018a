"""The catalogue follows the VERSIONS stream: a mod is known to telemetry as soon as it is
searchable, not at the next periodic re-read.

A plain NATS subscription on ``indexium.version.>``, as the API's cache invalidation holds
(``indexium_api.core.invalidation``): core subscribers receive what JetStream stores on those
subjects as it is published, with no consumer state on the server for replicas that come
and go. Every event there carries the ``mod_id`` it is about (``version_indexed``,
``version_hidden``, ``version_scanned``, ``version_reviewed``, ``mod_changed``); the mods
named are read again from PostgreSQL by id (one query for whatever arrived meanwhile,
after the publisher's commit) and learned or forgotten (``ModCatalogue.apply``).

Core delivery is at-most-once: after a reconnect (events may have been published while the
connection was away), an unreadable event, or more mods waiting than ``MAX_PENDING``, the
whole catalogue is re-read instead. The periodic re-read
(``INDEXIUM_TELEMETRY_CATALOGUE_REFRESH_SECONDS``) stays as the safety net.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable

import asyncpg
import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from indexium_contracts import versions
from indexium_db.queries import telemetry as telemetry_q
from indexium_platform import logs

from .catalogue import Entry, ModCatalogue
from .metrics import TelemetryMetrics

log = logs.get(__name__)
SUBJECT = f"{versions.SUBJECT_PREFIX}.>"
# Mods read again in one query; more waiting than MAX_PENDING (a burst nobody can keep up with
# one by one, e.g. a large backfill) is one whole re-read instead.
BATCH = 500
MAX_PENDING = 10_000
RETRY_S = 1.0
RECONNECT_POLL_S = 0.5


class _AnyVersionEvent(msgspec.Struct):
    """What every event on the stream carries that matters here; other fields and tags ignored."""

    type: str = "unknown"
    mod_id: str | None = None


_lenient = msgspec.msgpack.Decoder(_AnyVersionEvent)


def mod_of(data: bytes) -> uuid.UUID | None:
    """The mod an event names; None when it cannot be read or names none."""
    try:
        event = _lenient.decode(data)
        return uuid.UUID(event.mod_id) if event.mod_id else None
    except (msgspec.DecodeError, ValueError):
        return None


class CatalogueFollower:
    def __init__(self, nc: Client, pool: asyncpg.Pool, catalogue: ModCatalogue,
                 reload: Callable[[], Awaitable[None]], metrics: TelemetryMetrics):
        self._nc, self._pool, self._catalogue, self._reload = nc, pool, catalogue, reload
        self._metrics = metrics
        self._pending: set[uuid.UUID] = set()
        self._reload_wanted = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._sub = None

    async def start(self) -> None:
        """Subscribe before the first load, so no event falls between the load and the subscription."""
        self._sub = await self._nc.subscribe(SUBJECT, cb=self._on_message)
        await self._nc.flush()
        self._task = asyncio.create_task(self._run(), name="telemetry:catalogue-follow")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._sub is not None:
            with contextlib.suppress(Exception):
                await self._sub.unsubscribe()

    async def _on_message(self, msg: Msg) -> None:
        mod_id = mod_of(msg.data)
        if mod_id is None:
            self._metrics.catalogue_events["unreadable"].inc()
            self._reload_wanted = True
        elif len(self._pending) >= MAX_PENDING:
            self._metrics.catalogue_events["overflow"].inc()
            self._pending.clear()
            self._reload_wanted = True
        else:
            self._metrics.catalogue_events["mod"].inc()
            self._pending.add(mod_id)
        self._wake.set()

    async def _run(self) -> None:
        reconnects = self._nc.stats["reconnects"]
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=RECONNECT_POLL_S)
            self._wake.clear()
            if self._nc.stats["reconnects"] != reconnects:
                reconnects = self._nc.stats["reconnects"]
                log.info("catalogue_reload_after_reconnect")
                self._reload_wanted = True
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # PostgreSQL away: what is pending stays pending
                log.warning("catalogue_follow_failed", error=str(exc) or type(exc).__name__)
                await asyncio.sleep(RETRY_S)
                self._wake.set()

    async def step(self) -> None:
        """Apply what arrived: a whole re-read when one is wanted, else the mods named."""
        if self._reload_wanted:
            self._reload_wanted = False
            self._pending.clear()
            try:
                await self._reload()
            except Exception:
                self._reload_wanted = True
                raise
            return
        while self._pending:
            batch = [self._pending.pop() for _ in range(min(BATCH, len(self._pending)))]
            try:
                async with self._pool.acquire() as conn:
                    rows = await telemetry_q.catalogue_entries(conn, batch)
            except Exception:
                self._pending.update(batch)
                raise
            found = {r["id"]: r for r in rows}
            for mod_id in batch:
                r = found.get(mod_id)
                if r is None or r["hidden"]:
                    self._catalogue.apply(Entry(mod_id, None))
                else:
                    self._catalogue.apply(Entry(mod_id, r["slug"], tuple(r["claims"])))
            self._metrics.catalogue_mods.set(len(self._catalogue))
