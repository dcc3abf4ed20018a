"""Per-client rate limit: a token bucket per client address (GCRA), in process memory.

Each client may send ``per_minute`` requests a minute, at most ``burst`` of them at once: a
bucket of ``burst`` tokens refilled at ``per_minute / 60`` a second. A fixed one-minute window
(what this was) let a client spend its whole minute in its first second, so a flood of
uncached pages hit the database in bursts at every window boundary; a bucket spreads it out.
GCRA keeps one number per client, the time its bucket is full again (its "theoretical arrival
time"), which is how labrinth's limiter (the ``governor`` crate) counts Modrinth's API too.

The client address is used for this and nothing else: it is never logged, never a
metric label. A client's entry is dropped once its bucket is full again (at the next sweep,
every ``SWEEP_S``), and the key each (peer, X-Forwarded-For) pair was turned into is
dropped whole at every sweep: no address is kept much longer than its last request's refill.
IPv6 clients are counted per /64 (one host usually owns a whole /64). Behind a trusted
proxy the forwarded client (the right-most X-Forwarded-For entry that is not itself a
trusted proxy) is limited; a trusted proxy forwarding no client is not limited at all.
Each replica limits on its own: with N replicas behind a balancer a client gets up to
N times the limit, which is acceptable for a generous abuse guard.
"""

from __future__ import annotations

import asyncio
import ipaddress
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from indexium_platform import clientaddr

SWEEP_S = 60.0
# Clients (and (peer, X-Forwarded-For) pairs) remembered between sweeps: X-Forwarded-For from a
# trusted proxy is text the client chose, so both tables are bounded. Past the bound a sweep
# runs at once; a table still full after it is emptied whole (every client gets a full bucket).
KEYS_MAX = 100_000
_UNKNOWN = object()


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int  # requests a minute
    remaining: int  # requests that would be allowed right now
    reset_s: int  # allowed: seconds until the bucket is full again; refused: until the next request may pass


class RateLimiter:
    def __init__(self, per_minute: int, burst: int, *, clock: Callable[[], float] = time.monotonic):
        self.limit, self.burst, self._clock = per_minute, max(1, burst), clock
        self._interval = 60.0 / per_minute
        self._span = self.burst * self._interval  # how far ahead of now a client's time may run
        self._full_at: dict[str, float] = {}  # client key -> when its bucket is full again
        self._next_sweep = clock() + SWEEP_S

    def hit(self, key: str) -> Verdict:
        now = self._clock()
        if now >= self._next_sweep or len(self._full_at) >= KEYS_MAX:
            self._sweep(now)
        full_at = self._full_at.get(key, now)
        if full_at < now:
            full_at = now
        after = full_at + self._interval - now  # how far ahead it runs with this request
        if after > self._span + 1e-9:
            return Verdict(False, self.limit, 0, max(1, math.ceil(after - self._span)))
        self._full_at[key] = now + after
        return Verdict(True, self.limit, int((self._span - after) / self._interval + 1e-9), max(1, math.ceil(after)))

    def _sweep(self, now: float) -> None:
        """Forget every client whose bucket is full again (it is as if it had never come)."""
        self._next_sweep = now + SWEEP_S
        self._full_at = {k: t for k, t in self._full_at.items() if t > now}
        if len(self._full_at) >= KEYS_MAX:
            self._full_at = {}

    def __len__(self) -> int:
        return len(self._full_at)


class Tarpit:
    """Refusals answered after a pause: a 429 is sent about ``delay_s`` after the request came.

    A client flooding as fast as its answers come back (a script, a load tool: one request per
    connection at a time) is slowed to one request a connection every ``delay_s``. Answered at
    once, the refusals themselves were the flood: thousands a second from one address, each
    costing the event loop what a cheap answer costs, with every other client's requests
    queued behind them. A client that honours Retry-After (at least 1 s) loses nothing.
    Held refusals are bounded (``per_client``, ``total``): past either, the 429 is sent at once
    and the connection closed, so holding them cannot be turned into holding memory.
    """

    def __init__(self, delay_s: float, *, per_client: int, total: int):
        self.delay_s, self.per_client, self.total = delay_s, per_client, total
        self._held: dict[str, int] = {}
        self._count = 0

    def hold(self, key: str) -> bool:
        """Whether a refusal of ``key``'s may be held (then :meth:`answer_later` must follow)."""
        held = self._held.get(key, 0)
        if held >= self.per_client or self._count >= self.total:
            return False
        self._held[key] = held + 1
        self._count += 1
        return True

    async def answer_later(self, key: str, refusal: Exception) -> None:
        try:
            # Spread over half to one and a half pauses: a flood's connections, refused together,
            # would otherwise all come back together, and the requests of theirs that pass (its
            # budget's worth) would all be computed in the same few milliseconds each second.
            await asyncio.sleep(self.delay_s * (0.5 + random.random()))
        finally:
            held = self._held[key] - 1
            if held:
                self._held[key] = held
            else:
                del self._held[key]
            self._count -= 1
        raise refusal

    def __len__(self) -> int:
        return self._count


class ClientKeys:
    """Turns a request's peer address (and, from trusted proxies, X-Forwarded-For) into a key."""

    def __init__(self, trusted_proxies: tuple[str, ...], *, clock: Callable[[], float] = time.monotonic):
        self._proxies = clientaddr.TrustedProxies(trusted_proxies)
        self._clock = clock
        # (peer, X-Forwarded-For) -> the key made of them, emptied at every sweep: parsing an
        # address (ipaddress, in Python) and writing its key cost a request more than the rest
        # of its limit, and a client sends many requests from one address.
        self._made: dict[tuple[str | None, str | None], str | None] = {}
        self._next_sweep = clock() + SWEEP_S

    @staticmethod
    def _key(addr) -> str:
        if addr.version == 6:
            if addr.ipv4_mapped is not None:
                return str(addr.ipv4_mapped)
            return str(ipaddress.ip_network(f"{addr}/64", strict=False))
        return str(addr)

    def make(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The key to limit, or None for a trusted proxy that names no client."""
        addr = self._proxies.client(peer, forwarded_for)
        if addr is clientaddr.NOT_AN_ADDRESS:
            return peer or "unknown"  # a unix socket or test transport: one bucket
        return None if addr is None else self._key(addr)

    def key(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """:meth:`make`, remembered until the next sweep."""
        if self._clock() >= self._next_sweep:
            self._made = {}
            self._next_sweep = self._clock() + SWEEP_S
        pair = (peer, forwarded_for)
        key = self._made.get(pair, _UNKNOWN)
        if key is _UNKNOWN:
            if len(self._made) >= KEYS_MAX:
                self._made = {}
            key = self._made[pair] = self.make(peer, forwarded_for)
        return key
