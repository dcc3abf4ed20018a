"""This replica's search index (``indexium_search.searchindex``): loaded before the API serves,
following catalogue events, reloaded whole periodically. Search runs on it only while it is
known fresh; otherwise (not loaded, no event subscription, an event's mods being re-read)
search is PostgreSQL's alone, so the index never causes an error, nor an answer older than
the last event this replica received (pages from memory, ``recheck`` False: docs/api.md, "A
page from memory"; a change no event announced is caught up below).

* An event for a mod re-reads that mod's row (its removal when no longer listed); until the
  re-read has landed, searches take the SQL path.
* An event without a mod or an undecodable one reloads the whole index in the background, the
  old index answering meanwhile; when the new one is in, the cache is invalidated once more
  (answers computed meanwhile may miss the change).
* A (re)connect of the subscription (events may have been missed meanwhile) catches up: every
  mod written since the index was last known in sync (``mods.updated_at``, with a margin) and
  held otherwise is re-read, and the cache invalidated once more if there was any. Cheaper
  than a reload: right after start-up one would double the start's CPU.
* Every ``catch_up_s`` the mods whose row was written lately (``mods.updated_at``) and differs
  from the index's copy are re-read: core NATS delivery is at-most-once, and a dropped event
  must not hide a mod for longer than a cached answer lives.
* Every ``refresh_s`` a full reload (downloads move, and ordinals keep popularity order).

**From a snapshot** (``snapshot``: a fetcher, ``indexium_platform.snapshotfetch``; docs/api.md, "Replica start: the
snapshot"): a load, the first and each periodic one, takes the latest snapshot instead of building
the index from PostgreSQL: fetched to this node unless a copy is here, mapped
(``indexium_search.snapshot``), then the mods written since the snapshot's position (less
CATCH_UP_MARGIN_S) re-read before it is used. A refresh finding the same snapshot keeps the index
it has (it follows events). No snapshot, or one that cannot be read: the load from PostgreSQL, and
a ``search_index_snapshot_unusable`` line saying why. Every RELEASE_PAGES_S the file's pages
this process has mapped are let go (they stay in the page cache; the next read maps one again).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from indexium_search import sqlpath
from indexium_platform import heap, logs
from indexium_search import indexed, snapshot
from indexium_search.searchindex import Lexicon, SearchIndex

from indexium_platform.snapshotfetch import NoSnapshot

log = logs.get(__name__)
RETRY_S = 5.0  # a load that failed (PostgreSQL away) is tried again this soon
# The catch-up looks this much further back than its interval (indexed.CATCH_UP_MARGIN_S: the
# snapshot's writer catches up from its previous snapshot with the same margin).
CATCH_UP_MARGIN_S = indexed.CATCH_UP_MARGIN_S
# An index mapped from a snapshot lets this process's pages of the file go this often
# (snapshot.Snapshot.release_pages: they stay in the node's page cache). Ranking's columns are read
# at random and come back within a second under load: at 2 s a replica held 54 MB file-backed after
# bench/api/replica.py's minute at ~790 requests/s, at 0.5 s 40-44 MB, at the same rate; each page
# read again is mapped again at a minor fault's cost: 640-1,030 minor faults a second in all in the
# API process at 728 requests/s (its /proc/PID/stat, sampled every 5 s), a fraction of a millisecond.
RELEASE_PAGES_S = 0.5
# A serving replica re-reads this many mods a statement: those its events name, and at a refresh
# those changed since its new snapshot (before it serves: indexed.REREAD_BATCH, 500). Each batch's
# rows are decoded and applied on the event loop, which answers nothing meanwhile: ~1 ms a mod at
# 100,000 mods from a snapshot (each changed posting found and read from the file), 500 in one
# statement 394-576 ms (bench/api/refreshcost.py, 2026-12-06); 20 a statement, 16.5 ms at most.
SERVING_REREAD_BATCH = 20
# A search arriving while events' re-reads are pending waits at most this long for those heard
# before it to land, then answers from the index; past it, the SQL path's (a burst, PostgreSQL
# slow or away). Before, every search took the SQL path while any re-read was pending: at the
# soak's 5 releases a second that was a fifth of the searches, each a 30-60 ms statement.
LANDED_WAIT_S = 0.5
# A refresh's settle walks the whole heap (heap.settle's full pass: 80-90 ms at 100,000 mods in
# bench/api/refreshcost.py, 325 ms in a loaded soak) once in this many new snapshots; the others
# only what was made since the last settle.
FULL_SETTLE_EVERY = 6


class LiveIndex:
    def __init__(self, api, *, refresh_s: float, load_timeout_s: float, catch_up_s: float, recheck: bool = True,
                 snapshot: Callable[[], Awaitable[tuple[Path, bool]]] | None = None):
        self.api = api
        self.snapshot = snapshot  # the latest snapshot as a local file (snapshotfetch.fetch), or None: PostgreSQL's
        self.snapshot_digest: str | None = None  # the one the index came from
        self.recheck = recheck  # SearchIndex.recheck of every index this loads
        self.refresh_s, self.load_timeout_s, self.catch_up_s = refresh_s, load_timeout_s, catch_up_s
        self.index: SearchIndex | None = None
        self.lexicon = Lexicon()
        # Set by the app once the invalidation subscription exists: True while events arrive.
        self.following: Callable[[], bool] = lambda: False
        # slug -> (generation of its oldest event not re-read since, of its latest event)
        self._pending: dict[str, tuple[int, int]] = {}
        self._generation = 0
        self._landed = asyncio.Event()  # set, and replaced, as each batch of re-reads lands
        self._touched_during_reload: set[str] | None = None
        self._reload_again = False
        self._invalidate_after = False  # a reload asked for by an event invalidates the cache when in
        self._reloading: asyncio.Task | None = None
        self._rereading: asyncio.Task | None = None
        self._refresher: asyncio.Task | None = None
        self._catching_up: asyncio.Task | None = None
        self._releasing: asyncio.Task | None = None
        self._synced_at: float | None = None  # monotonic: when the index last read every change
        self._refreshes = 0  # new snapshots swapped in since the first (heap.settle: full every FULL_SETTLE_EVERY)

    @property
    def db(self):
        """The index's own connections (Api.index_db), else the requests' pool."""
        return self.api.index_db if self.api.index_db is not None else self.api.db

    def current(self) -> SearchIndex | None:
        """The index if search may use it now, else None."""
        if self.index is None or self._pending or not self.following():
            return None
        return self.index

    async def landed(self, wait_s: float = LANDED_WAIT_S) -> SearchIndex | None:
        """The index once the re-reads of every event heard before this call have landed (newer
        events may still be pending: the answer holds all the caller could know of), waiting
        at most ``wait_s``; None, as from current(), when it is not followed or they do not land
        in time."""
        if self.index is None or not self.following():
            return None
        if self._pending:
            loop = asyncio.get_running_loop()
            heard, deadline = self._generation, loop.time() + wait_s
            while min((first for first, _ in self._pending.values()), default=heard + 1) <= heard:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return None
                try:
                    await asyncio.wait_for(self._landed.wait(), remaining)
                except asyncio.TimeoutError:
                    return None
            if self.index is None or not self.following():
                return None
        return self.index

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Load once before serving (PostgreSQL away: serve without it and keep trying)."""
        try:
            await self._load(timeout=self.load_timeout_s)
        except Exception as exc:
            log.warning("search_index_load_failed", error=type(exc).__name__)
        self._refresher = asyncio.create_task(self._refresh_loop(), name="api-search-index")
        self._catching_up = asyncio.create_task(self._catch_up_loop(), name="api-search-index-catch-up")
        self._releasing = asyncio.create_task(self._release_loop(), name="api-search-index-release-pages")

    async def stop(self) -> None:
        for task in (self._refresher, self._catching_up, self._releasing, self._reloading, self._rereading):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _load(self, timeout: float | None = None) -> None:
        """``timeout``: only the start-up load, which the API waits for before it serves, is
        bounded (below the startup probe's window); a load in the background takes what it takes."""
        started = time.monotonic()
        # No collector pass while the index is built, one when it is in (heap.py: the index is
        # about a million objects, which every full pass would walk again; from a snapshot, the
        # vocabularies, slugs and names it builds are frozen the same way).
        with heap.building():
            if self.snapshot is not None:
                try:
                    loaded = await asyncio.wait_for(self._from_snapshot(), timeout)
                except asyncio.TimeoutError:  # (a fetch too slow for the start-up bound: PostgreSQL's, in what is left)
                    log.warning("search_index_snapshot_unusable", reason="TimeoutError", detail="",
                                then="load from postgresql")
                    loaded = False
                if loaded or self.snapshot_digest is not None:
                    # (a refresh without a usable snapshot, or finding the one it came from, keeps the index,
                    # which follows events: nothing new to settle; a new one settled in _from_snapshot)
                    return
                if timeout is not None:
                    timeout = max(0.001, timeout - (time.monotonic() - started))
            index = await asyncio.wait_for(self.db.run(indexed.load), timeout)
            index.recheck = self.recheck
            await self.db.run(indexed.prewarm, self.lexicon, index)
            self.index, self._synced_at = index, started
            settle_s = heap.settle()
        self.snapshot_digest = None
        self.api.metrics.search_index_mods.set(len(index))
        log.info("search_index_loaded", source="postgresql", mods=len(index),
                 seconds=round(time.monotonic() - started, 2),
                 **({} if settle_s is None else {"gc_settle_ms": round(settle_s * 1000, 1)}))

    async def _from_snapshot(self) -> bool:
        """The index from the latest snapshot and the changes since it; False (logged) when there is
        none to use, for the load from PostgreSQL."""
        started = time.monotonic()
        try:
            path, fetched = await self.snapshot()
            fetched_s = time.monotonic() - started
            if self.index is not None and self.snapshot_digest == path.stem:
                return True  # (the snapshot this index came from: it has followed the events since)
            # (not verified here: the object store checked the SHA-256 of the bytes as they came,
            # and a read of every byte would bring the whole file into this process's RSS)
            mapped = time.monotonic()
            index, lexicon, meta = await asyncio.to_thread(snapshot.load, path)
            index.recheck = self.recheck
            synced = time.monotonic()
            slugs = await self.db.run(indexed.changed_after, index, meta["updated_at"], CATCH_UP_MARGIN_S)
            # Serving (a refresh): small statements, the loop answering requests between them (each
            # batch's rows are decoded and applied on it); before serving, the fewest statements.
            size = indexed.REREAD_BATCH if self.index is None else SERVING_REREAD_BATCH
            for batch in indexed.batches(slugs, size):
                await self.db.run(indexed.reread, index, batch)
            reread_s = time.monotonic() - synced
        except Exception as exc:  # (no snapshot, a damaged one, NATS or PostgreSQL away)
            # No snapshot written yet (a new stack before its writer's first write) is a state, not
            # a fault: info; anything else (damaged, NATS or PostgreSQL away) a warning.
            level = log.info if isinstance(exc, NoSnapshot) else log.warning
            level("search_index_snapshot_unusable", reason=type(exc).__name__, detail=str(exc)[:200],
                  then="keep the index" if self.snapshot_digest is not None else "load from postgresql")
            return False
        replaced = self.index is not None
        self.index, self.lexicon, self._synced_at = index, lexicon, synced
        self.snapshot_digest = path.stem
        # A replaced index from a snapshot goes with its last reference (no cycle holds it): a
        # refresh's settle walks only what was made since the last one, and fully every
        # FULL_SETTLE_EVERY refreshes (frozen cycles that died meanwhile: connections, requests).
        self._refreshes = self._refreshes + 1 if replaced else 0
        full = not replaced or self._refreshes % FULL_SETTLE_EVERY == 0
        settle_s = heap.settle(full=full)
        self.api.metrics.search_index_mods.set(len(index))
        log.info("search_index_loaded", source="snapshot", mods=len(index), seconds=round(time.monotonic() - started, 2),
                 fetched=fetched, fetch_s=round(fetched_s, 2), map_s=round(synced - mapped, 2),
                 caught_up=len(slugs), reread_s=round(reread_s, 2), snapshot_mb=round(meta["bytes"] / 2**20, 1),
                 position=meta["updated_at"], stream_seq=meta["stream_seq"],
                 **({} if settle_s is None else {"gc_settle_ms": round(settle_s * 1000, 1), "gc_settle_full": full}))
        return True

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(self.refresh_s if self.index is not None else RETRY_S)
            await self.reload(invalidate=False)

    async def _catch_up_loop(self) -> None:
        while True:
            await asyncio.sleep(self.catch_up_s)
            await self.catch_up()

    async def _release_loop(self) -> None:
        while True:
            await asyncio.sleep(RELEASE_PAGES_S)
            mapped = self.index.snapshot if self.index is not None else None
            if mapped is not None:
                mapped.release_pages()

    def resync(self) -> None:
        """The subscription is (back) up: catch up with whatever changed while it was not."""
        asyncio.get_running_loop().create_task(self._resync())

    async def _resync(self) -> None:
        if await self.catch_up():
            self.api.cache.invalidate_all()

    async def catch_up(self) -> int:
        """Re-read the mods written since the index was last in sync that it holds otherwise; how many."""
        index, synced_at = self.index, self._synced_at
        if index is None or synced_at is None:
            return 0
        started = time.monotonic()
        try:
            slugs = await self.db.run(indexed.changed_since, index, started - synced_at + CATCH_UP_MARGIN_S)
        except Exception as exc:
            log.warning("search_index_catch_up_failed", error=type(exc).__name__)
            return 0
        if index is self.index:
            for slug in slugs:
                self._mark(slug)
            self._synced_at = max(self._synced_at or started, started)
        if slugs:
            log.info("search_index_caught_up", mods=len(slugs))
        return len(slugs)

    async def reload(self, *, invalidate: bool) -> None:
        """A whole new index, swapped in when complete; mods changed meanwhile are re-read into it."""
        self._invalidate_after = self._invalidate_after or invalidate
        if self._reloading is not None:
            self._reload_again = True
            return
        self._reloading = asyncio.current_task()
        try:
            while True:
                self._reload_again = False
                self._touched_during_reload = set()
                try:
                    await self._load()
                except Exception as exc:
                    log.warning("search_index_load_failed", error=type(exc).__name__)
                touched, self._touched_during_reload = self._touched_during_reload, None
                for slug in touched:
                    self._mark(slug)
                if self._invalidate_after:
                    self._invalidate_after = False
                    self.api.cache.invalidate_all()
                if not self._reload_again:
                    break
        finally:
            self._reloading = None

    # --- following events ---------------------------------------------------------------

    def changed(self, slug: str | None) -> None:
        """A catalogue event: one mod (``slug``) or anything (None)."""
        if slug is None:
            if self._reloading is not None:  # (a periodic reload under way: once more, then invalidate)
                self._reload_again = self._invalidate_after = True
            else:
                asyncio.get_running_loop().create_task(self.reload(invalidate=True))
            return
        if self._touched_during_reload is not None:
            self._touched_during_reload.add(slug)
        self._mark(slug)

    def _mark(self, slug: str) -> None:
        self._generation += 1
        held = self._pending.get(slug)
        self._pending[slug] = (held[0] if held is not None else self._generation, self._generation)
        if self._rereading is None or self._rereading.done():
            self._rereading = asyncio.get_running_loop().create_task(self._reread_loop())

    async def _reread_loop(self) -> None:
        while self._pending:
            # (a burst of events, a redelivery or a catch-up after a reconnect: a few a statement, the
            # loop answering between them; search is PostgreSQL's until the last has landed)
            batch = dict(itertools.islice(self._pending.items(), SERVING_REREAD_BATCH))
            index = self.index
            try:
                if index is not None:
                    await self.db.run(indexed.reread, index, sorted(batch))
            except Exception as exc:  # PostgreSQL away: search stays on the SQL path meanwhile
                log.warning("search_index_reread_failed", error=type(exc).__name__)
                await asyncio.sleep(1.0)
                continue
            for slug, (_, latest) in batch.items():
                held = self._pending.get(slug)
                if held is None:
                    continue
                if held[1] == latest:  # no newer event meanwhile
                    del self._pending[slug]
                else:  # what came after the batch was taken is not landed (the oldest of it, at most)
                    self._pending[slug] = (latest + 1, held[1])
            self._landed.set()
            self._landed = asyncio.Event()
            if index is not None:
                self.api.metrics.search_index_mods.set(len(index))


async def settled(api) -> SearchIndex | None:
    """The index for a search about to run: once the events heard before it have landed
    (LiveIndex.landed, at most LANDED_WAIT_S), else None: catalog's SQL. Awaited before the
    search's connection is taken (``search``; v2's count, ``indexed.count``): a wait holding a
    pooled connection made every search in a burst of re-reads hold one for up to 0.5 s (the
    API's pool up to all 20)."""
    live = api.search_index
    return await live.landed() if live is not None else None


async def search(conn, api, sq: sqlpath.SearchQuery, total: int | None = None, *, index: SearchIndex | None):
    """One search as every surface runs it: on ``index`` (``settled``'s), else catalog's SQL."""
    live = api.search_index
    return await indexed.search(conn, sq, index=index, lexicon=live.lexicon if live is not None else None,
                                total=total, corrections=api.corrections)


def indexed_now(api) -> bool:
    """Whether search will most likely take the index (loaded and followed: a search waits for
    pending re-reads, LiveIndex.landed), so a browse total need not be counted apart."""
    live = api.search_index
    return live is not None and live.index is not None and live.following()
