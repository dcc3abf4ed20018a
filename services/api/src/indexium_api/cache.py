"""The per-replica response cache: TTL, single-flight, stale-while-revalidate, tag invalidation.

Every entry is stored with the *generations* of its tags (plus a global epoch) as they
were when its computation **started**. Invalidating a tag bumps its generation, an O(1)
operation; an entry whose recorded generations differ from the current ones is invalid.
Because generations are read before the database is, a computation that raced an
invalidation stores an entry that is already invalid, never a stale one that looks fresh.

Lookups: a valid entry younger than its TTL is a HIT. A valid entry past its TTL but
within the stale window is served (STALE) while one background task refreshes it. Anything
else is computed — once per key and generation (single-flight: concurrent misses await the
same task, shielded so a client hanging up does not cancel it for the others). If that
computation fails with :class:`Unavailable` (the database is down), any entry younger than
``stale_if_error_s`` — even an invalidated one — is served instead of failing.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

HIT, MISS, STALE, COALESCED = "hit", "miss", "stale", "coalesced"


class Key(tuple):
    """A cache key hashed once, for keys a hot path keeps and looks up again and again (a
    search's, remembered with its parsed parameters): a plain tuple rehashes its items on
    every look-up, a frozen dataclass item all of its fields. Equal to, and hashed as, the
    plain tuple of its parts, so either finds the other's entry."""

    def __new__(cls, *parts: Any) -> Key:
        key = super().__new__(cls, parts)
        key.hash = tuple.__hash__(key)
        return key

    def __hash__(self) -> int:
        return self.hash


class Unavailable(Exception):
    """The source of truth cannot answer now; a cached answer may stand in."""


class Entry:
    __slots__ = ("value", "stamp", "ttl", "gens", "size", "checked")

    def __init__(self, value: Any, stamp: float, ttl: float, gens: tuple, size: int):
        self.value, self.stamp, self.ttl, self.gens, self.size = value, stamp, ttl, gens, size
        self.checked = -1  # the cache's invalidation count when gens were last found current


class _Flight:
    __slots__ = ("gens", "task")

    def __init__(self, gens: tuple, task: asyncio.Task):
        self.gens, self.task = gens, task


class Cache:
    def __init__(
        self,
        *,
        max_bytes: int,
        stale_s: float,
        stale_if_error_s: float,
        clock: Callable[[], float] = time.monotonic,
        sizeof: Callable[[Any], int] = lambda v: 256,
    ):
        self.max_bytes, self.stale_s, self.stale_if_error_s = max_bytes, stale_s, stale_if_error_s
        self._clock, self._sizeof = clock, sizeof
        self._entries: OrderedDict[Any, Entry] = OrderedDict()
        self._gens: dict[str, int] = {}
        self._epoch = 0
        # Bumped by every invalidation: an entry found valid at this count is still valid.
        self._invalidations = 0
        self._inflight: dict[Any, _Flight] = {}
        self._bytes = 0

    # ---- invalidation -------------------------------------------------------------------

    def invalidate(self, *tags: str) -> None:
        for tag in tags:
            self._gens[tag] = self._gens.get(tag, 0) + 1
        self._invalidations += 1

    def invalidate_all(self) -> None:
        """Everything is invalid (events may have been missed). Entries stay as stale-if-error."""
        self._epoch += 1
        self._gens.clear()
        self._invalidations += 1

    def _current(self, tags: tuple[str, ...]) -> tuple:
        gens = self._gens
        return (self._epoch, *[gens.get(t, 0) for t in tags])

    # ---- lookups ------------------------------------------------------------------------

    def fresh(self, key: Any, tags: tuple[str, ...]) -> Any:
        """The value of a valid entry younger than its TTL (what :meth:`get` answers as HIT),
        else None. Not a coroutine: a hit, the hottest path there is, awaits nothing. Its
        generations are compared only when something was invalidated since they were last
        found current (a key comes with the same tags every time)."""
        entry = self._entries.get(key)
        if entry is None or self._clock() - entry.stamp >= entry.ttl:
            return None
        if entry.checked != self._invalidations:
            if entry.gens != self._current(tags):
                return None
            entry.checked = self._invalidations
        self._entries.move_to_end(key)
        return entry.value

    async def get(
        self, key: Any, tags: tuple[str, ...], ttl: float, compute: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, str]:
        now = self._clock()
        gens = self._current(tags)
        entry = self._entries.get(key)
        if entry is not None and entry.gens == gens:
            age = now - entry.stamp
            if age < entry.ttl:
                self._entries.move_to_end(key)
                return entry.value, HIT
            if age < entry.ttl + self.stale_s:
                flight = self._inflight.get(key)
                if flight is None or flight.gens != gens:
                    self._start(key, tags, ttl, compute, gens)
                return entry.value, STALE
        flight = self._inflight.get(key)
        state = COALESCED
        if flight is None or flight.gens != gens:
            flight, state = self._start(key, tags, ttl, compute, gens), MISS
        try:
            return await asyncio.shield(flight.task), state
        except Unavailable:
            entry = self._entries.get(key)
            if entry is not None and self._clock() - entry.stamp < entry.ttl + self.stale_if_error_s:
                return entry.value, STALE
            raise

    def _start(self, key, tags, ttl, compute, gens) -> _Flight:
        started = self._clock()

        async def run() -> Any:
            try:
                value = await compute()
                self._store(key, value, started, ttl, gens, tags)
                return value
            finally:
                if self._inflight.get(key) is flight:
                    del self._inflight[key]

        flight = _Flight(gens, asyncio.get_running_loop().create_task(run()))
        # A background refresh nobody awaits must not log "exception never retrieved".
        flight.task.add_done_callback(lambda t: t.cancelled() or t.exception())
        self._inflight[key] = flight
        return flight

    def _store(self, key, value, started: float, ttl: float, gens: tuple, tags) -> None:
        old = self._entries.get(key)
        current = self._current(tags)
        if gens != current and old is not None and old.gens == current:
            return  # a newer computation already stored a valid entry
        # (An entry computed before an invalidation is stored anyway, already invalid: it is
        # the freshest stale-if-error copy we have.)
        if old is not None:
            self._bytes -= old.size
        size = self._sizeof(value)
        self._entries[key] = Entry(value, started, ttl, gens, size)
        self._entries.move_to_end(key)
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= evicted.size

    # ---- introspection ------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes
