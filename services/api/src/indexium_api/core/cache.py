"""The per-replica response cache: TTL, single-flight, stale-while-revalidate, tag invalidation.

Every entry is stored with the *generations* of its tags (plus a global epoch) as they
were when its computation **started**. Invalidating a tag bumps its generation, an O(1)
operation; an entry whose recorded generations differ from the current ones is invalid.
Because generations are read before the database is, a computation that raced an
invalidation stores an entry that is already invalid, never a stale one that looks fresh.

Admission (TinyLFU's rule, :class:`Frequencies`): while the cache has room every answer is
kept. Once it is full, a new key gets in only if it was asked for more often lately than the
least recently used entry it would push out (that entry's hits since it was stored, plus the
miss that stored it) was: a flood of pages asked for once each cannot push out anything, and
the hot entries, each hit many times, stay. How often a key not held was asked for is counted
in a small fixed-size sketch; now and then every count is halved, the entries' hits with the
sketch's, so that old popularity fades (and an entry not asked for within its TTL and its
stale-if-error window goes first anyway). A hit costs one more integer increment, nothing else.

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
    __slots__ = ("value", "stamp", "ttl", "gens", "size", "checked", "hits")

    def __init__(self, value: Any, stamp: float, ttl: float, gens: tuple, size: int):
        self.value, self.stamp, self.ttl, self.gens, self.size = value, stamp, ttl, gens, size
        self.checked = -1  # the cache's invalidation count when gens were last found current
        self.hits = 0  # answers served from it (halved with the sketch's counts: "lately")


class Frequencies:
    """How often each key was asked for lately, approximately: a count-min sketch (``DEPTH`` rows
    of ``WIDTH`` counters, each key counted in one counter a row and estimated by the smallest),
    of fixed size (256 KB) whatever the keys. Counters stop at ``CEILING`` and are all halved
    every ``sample`` additions (TinyLFU's reset), so a count says "lately". A key's counters
    come from Python's hash of it, which is salted per process: a client cannot choose keys
    that collide with a hot one."""

    WIDTH, DEPTH, CEILING = 1 << 16, 4, 15
    _HALF = bytes(i >> 1 for i in range(256))

    def __init__(self, sample: int = 10 << 16):
        self._counts = bytearray(self.WIDTH * self.DEPTH)
        self._sample, self._added = sample, 0

    def _cells(self, key: Any) -> tuple[int, ...]:
        h, w = hash(key) & 0xFFFF_FFFF_FFFF_FFFF, self.WIDTH
        return tuple(row * w + ((h >> (16 * row)) & (w - 1)) for row in range(self.DEPTH))

    def add(self, key: Any) -> bool:
        """Count one request for ``key``; True when this addition halved every count."""
        counts = self._counts
        cells = self._cells(key)
        least = min(counts[cell] for cell in cells)
        if least < self.CEILING:
            for cell in cells:
                if counts[cell] == least:  # (conservative update: the others already say more)
                    counts[cell] += 1
        self._added += 1
        if self._added < self._sample:
            return False
        self._counts = bytearray(self._counts.translate(self._HALF))
        self._added //= 2
        return True

    def estimate(self, key: Any) -> int:
        counts = self._counts
        return min(counts[cell] for cell in self._cells(key))


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
        self._asked = Frequencies()  # requests for keys not held (admission, above)
        self.refused = 0  # answers not kept: they lost the admission contest

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
        entry.hits += 1
        return entry.value

    async def get(
        self, key: Any, tags: tuple[str, ...], ttl: float, compute: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, str]:
        now = self._clock()
        gens = self._current(tags)
        entry = self._entries.get(key)
        if entry is None:
            if self._asked.add(key):  # the sketch's counts halved: the entries' too
                for held in self._entries.values():
                    held.hits >>= 1
        elif entry.gens == gens:
            age = now - entry.stamp
            if age < entry.ttl:
                self._entries.move_to_end(key)
                entry.hits += 1
                return entry.value, HIT
            if age < entry.ttl + self.stale_s:
                flight = self._inflight.get(key)
                if flight is None or flight.gens != gens:
                    self._start(key, tags, ttl, compute, gens)
                entry.hits += 1
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
        size = self._sizeof(value)
        if old is not None:
            self._bytes -= old.size
        elif self._bytes + size > self.max_bytes and not self._admits(key):
            self.refused += 1
            return
        self._entries[key] = Entry(value, started, ttl, gens, size)
        self._entries.move_to_end(key)
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            _, evicted = self._entries.popitem(last=False)
            self._bytes -= evicted.size

    def _admits(self, key: Any) -> bool:
        """Whether a new key may push out the least recently used entry (a full cache)."""
        victim = next(iter(self._entries.values()), None)
        if victim is None or self._clock() - victim.stamp >= victim.ttl + self.stale_if_error_s:
            return True  # (nothing held, or the oldest is past any use: it goes anyway)
        return self._asked.estimate(key) > victim.hits + 1

    # ---- introspection ------------------------------------------------------------------

    def computing(self, key: Any) -> bool:
        """Whether a computation of ``key`` is in flight (a miss now would most likely wait for it)."""
        return key in self._inflight

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Any) -> bool:
        """Whether an entry for ``key`` is held, valid or not (a look that counts no hit)."""
        return key in self._entries

    @property
    def bytes(self) -> int:
        return self._bytes
