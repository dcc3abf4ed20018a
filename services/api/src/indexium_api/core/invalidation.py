"""Cross-replica cache invalidation from the VERSIONS stream's subjects.

Every replica holds a plain NATS subscription on ``indexium.version.>`` (JetStream stores
what the indexer publishes there, and core subscribers receive the same messages as they
are published), so each replica sees every event within milliseconds, with no consumer
state on the server to create, share or clean up. Core delivery is at-most-once, so
whenever the connection comes back (events may have been published while it was away)
the whole cache is invalidated: a gap costs one round of cache misses, never a stale
answer. Without NATS the cache still expires by TTL.

An event for a mod invalidates that mod's card and versions and every listing and
lookup (a new or hidden version can change any search result, and so does a whole mod
hidden or shown by the GitHub role: ``mod_changed.v1``); a ``VersionIndexed`` whose
``changed`` is false (a release sent again, nothing served changed) invalidates nothing. Event types this module
does not know (a scan stage's quarantine event, say) are handled the same way as long as
they carry a ``slug``; an event it cannot read at all invalidates everything.

Projects list each other: a modpack's page its mods, a mod's page the modpacks that include it
(and /v2 a modpack version's embedded dependencies). An event for a project also invalidates the
pages of the projects related to it that way (``site.related_slugs``: one indexed query on the
read pool, after the project's own tags), so a modpack indexed shows on its mods' pages, and a
mod indexed after a pack that lists it links from the pack's page, at once rather than at the
TTL; more than ``RELATED_MAX`` related, or the database unreachable, invalidates everything.
"""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
from nats.aio.client import Client
from nats.aio.msg import Msg

from indexium_contracts import versions
from indexium_db.queries import site as site_q
from indexium_platform import logs, natsutil

from .respond import GLOBAL, MOD_TAG_PREFIX, mod_tag
from .state import Api

log = logs.get(__name__)
SUBJECT = f"{versions.SUBJECT_PREFIX}.>"


class _AnyVersionEvent(msgspec.Struct):
    """What every version event carries that matters here; unknown fields and tags ignored."""

    type: str = "unknown"
    slug: str | None = None
    changed: bool = True  # VersionIndexed of a release sent again unchanged: False


_lenient = msgspec.msgpack.Decoder(_AnyVersionEvent)


def tags_for(data: bytes) -> tuple[str, tuple[str, ...] | None]:
    """(event type, tags to invalidate); None tags means "invalidate everything", () nothing (an
    event that says nothing served changed: a release sent again, for the scan stage alone)."""
    try:
        event = _lenient.decode(data)
    except msgspec.DecodeError:
        return "undecodable", None
    event_type = event.type if event.type in _KNOWN_TYPES else "other"
    if not event.changed:
        return event_type, ()
    if not event.slug:
        return event_type, None
    return event_type, (GLOBAL, mod_tag(event.slug))


# Metric labels stay bounded: known tags by name, anything newer as "other".
_KNOWN_TYPES = {"version_indexed.v1", "version_hidden.v1", "version_scanned.v1", "version_reviewed.v1",
                "mod_changed.v1", "version_status_changed.v1", "unknown"}


class Invalidator:
    def __init__(self, api: Api, nats_url: str, *, poll_s: float = 0.25):
        self.api, self.nats_url, self.poll_s = api, nats_url, poll_s
        self.nc: Client | None = None
        self.subscribed = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._grace = api.settings.replica_lag_grace_s if api.settings.database_read_url else 0.0

    async def start(self) -> None:
        """Subscribe in the background: serving does not wait for NATS. Whatever is cached before
        the subscription is up is invalidated when it comes up."""
        self._task = asyncio.create_task(self._run(), name="api-invalidation")

    async def _connect(self) -> None:
        nc = await natsutil.connect(self.nats_url, name="indexium-api")
        await nc.subscribe(SUBJECT, cb=self._on_message)
        await nc.flush()
        self.nc = nc
        # Events published before we subscribed were missed: whatever is cached is suspect.
        self.api.cache.invalidate_all()
        self._index_resync()
        self.subscribed.set()

    def following(self) -> bool:
        """Whether events arrive now (the search index follows the catalogue only then)."""
        return self.nc is not None and self.nc.is_connected and self.subscribed.is_set()

    def _index_resync(self) -> None:
        if self.api.search_index is not None:
            self.api.search_index.resync()

    def _index_changed(self, slug: str | None) -> None:
        if self.api.search_index is not None:
            self.api.search_index.changed(slug)

    async def _run(self) -> None:
        while self.nc is None:
            try:
                await self._connect()
            except Exception as exc:
                log.warning("invalidation_connect_failed", error=type(exc).__name__)
                await asyncio.sleep(1.0)
        reconnects = self.nc.stats["reconnects"]
        while True:
            self.api.metrics.nats_connected.set(1 if self.nc.is_connected else 0)
            if self.nc.stats["reconnects"] != reconnects:
                reconnects = self.nc.stats["reconnects"]
                self.api.cache.invalidate_all()
                self._index_resync()
                self.api.metrics.invalidations.labels("reconnect").inc()
                log.info("cache_invalidated_after_reconnect")
            await asyncio.sleep(self.poll_s)

    async def _on_message(self, msg: Msg) -> None:
        event_type, tags = tags_for(msg.data)
        self.api.metrics.version_events.labels(event_type).inc()
        if tags == ():
            return
        self._invalidate(tags, "event")
        slug = next((t.removeprefix(MOD_TAG_PREFIX) for t in tags or () if t.startswith(MOD_TAG_PREFIX)), None)
        if slug is not None:
            await self._invalidate_related(slug, "related")
        if self._grace > 0:
            # The replica we read from may not have replayed the commit yet: invalidate again
            # once it has, so a result computed from the lagging replica does not live 60 s.
            asyncio.get_running_loop().call_later(self._grace, self._invalidate, tags, "replica_lag")
            if slug is not None:  # (the lagging replica may not know the new relations yet either)
                asyncio.get_running_loop().call_later(
                    self._grace, lambda: asyncio.ensure_future(self._invalidate_related(slug, "replica_lag")))

    async def _invalidate_related(self, slug: str, reason: str) -> None:
        """The pages of the projects listing this one or listed by it (modpacks and their mods)."""
        try:
            related = await self.api.db.run(site_q.related_slugs, slug, site_q.RELATED_MAX + 1)
        except Exception as exc:  # unreachable: whatever lists this project may be stale
            log.warning("related_lookup_failed", slug=slug, error=type(exc).__name__)
            related = None
        if related is None or len(related) > site_q.RELATED_MAX:
            self.api.cache.invalidate_all()
            self.api.metrics.invalidations.labels(reason).inc()
        elif related:
            # Their cached pages only: their own search-index entries did not change.
            self.api.cache.invalidate(*(mod_tag(s) for s in related))
            self.api.metrics.invalidations.labels(reason).inc()

    def _invalidate(self, tags: tuple[str, ...] | None, reason: str) -> None:
        if tags is None:
            self.api.cache.invalidate_all()
            self._index_changed(None)
        else:
            self.api.cache.invalidate(*tags)
            for tag in tags:
                if tag.startswith(MOD_TAG_PREFIX):
                    self._index_changed(tag.removeprefix(MOD_TAG_PREFIX))
        # A catalogue change may bring the word a remembered typo (or "no correction") lacked.
        self.api.corrections.clear()
        self.api.metrics.invalidations.labels(reason).inc()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.nc is not None:
            await natsutil.close(self.nc)
