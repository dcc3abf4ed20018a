"""Per-client rate limit: a fixed one-minute window per client address, in process memory.

The client address is used for this and nothing else: it is never logged, never a
metric label, and the tables holding it (the counts, and the key each peer was turned
into) are dropped whole at every window boundary.
IPv6 clients are counted per /64 (one host usually owns a whole /64). Behind a trusted
proxy the forwarded client (the right-most X-Forwarded-For entry that is not itself a
trusted proxy) is limited; a trusted proxy forwarding no client is not limited at all.
Each replica limits on its own: with N replicas behind a balancer a client gets up to
N times the limit, which is acceptable for a generous abuse guard.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from indexium_platform import clientaddr

WINDOW_S = 60
# Client keys remembered per window (below): X-Forwarded-For from a trusted proxy is text the
# client chose, so the table is bounded, and emptied whole when full.
KEYS_MAX = 10_000
_UNKNOWN = object()


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset_s: int  # seconds until the window resets


class RateLimiter:
    def __init__(self, limit: int, *, window_s: int = WINDOW_S, clock: Callable[[], float] = time.time):
        self.limit, self.window_s, self._clock = limit, window_s, clock
        self._window = -1
        self._counts: dict[str, int] = {}
        # (peer, X-Forwarded-For) -> the key ClientKeys made of them, dropped with the counts:
        # no address outlives its window here either.
        self._keys: dict[tuple[str | None, str | None], str | None] = {}

    def key(self, keys: ClientKeys, peer: str | None, forwarded_for: str | None) -> str | None:
        """``keys.key(peer, forwarded_for)``, remembered until the window ends: parsing an
        address (ipaddress, in Python) and writing its key cost a request more than the rest
        of its limit, and a client sends many requests a window from one address."""
        pair = (peer, forwarded_for)
        key = self._keys.get(pair, _UNKNOWN)
        if key is _UNKNOWN:
            if len(self._keys) >= KEYS_MAX:
                self._keys = {}
            key = self._keys[pair] = keys.key(peer, forwarded_for)
        return key

    def hit(self, key: str, cost: int = 1) -> Verdict:
        now = self._clock()
        window = int(now // self.window_s)
        if window != self._window:
            self._window, self._counts, self._keys = window, {}, {}
        used = self._counts.get(key, 0)
        reset = max(1, math.ceil((window + 1) * self.window_s - now))
        if used + cost > self.limit:
            return Verdict(False, self.limit, max(0, self.limit - used), reset)
        self._counts[key] = used + cost
        return Verdict(True, self.limit, self.limit - used - cost, reset)


class ClientKeys:
    """Turns a request's peer address (and, from trusted proxies, X-Forwarded-For) into a key."""

    def __init__(self, trusted_proxies: tuple[str, ...]):
        self._proxies = clientaddr.TrustedProxies(trusted_proxies)

    @staticmethod
    def _key(addr) -> str:
        if addr.version == 6:
            if addr.ipv4_mapped is not None:
                return str(addr.ipv4_mapped)
            return str(ipaddress.ip_network(f"{addr}/64", strict=False))
        return str(addr)

    def key(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The key to limit, or None for a trusted proxy that names no client."""
        addr = self._proxies.client(peer, forwarded_for)
        if addr is clientaddr.NOT_AN_ADDRESS:
            return peer or "unknown"  # a unix socket or test transport: one bucket
        return None if addr is None else self._key(addr)
