"""A cap on new server ids per source network and hour, kept only in this process's memory.

Fresh random server UUIDs cost nothing, so without a cap one client could add any
number of "servers" to a mod. Each network prefix (IPv4 /24, IPv6 /64: what one
customer usually gets) may introduce at most ``limit`` distinct server ids per hour to
this replica. What is kept, and only until the hour ends:

- the prefix, as HMAC-SHA256 under a key made at random for the hour (never the address);
- the server ids already seen from it this hour, as 8 bytes of an HMAC under the same key.

At the hour's end the key and the whole table are dropped together, so nothing kept links
one hour to the next, and nothing here is logged, stored, published or used as a metric
label. The address itself is read from the request, turned into the prefix bytes and
forgotten within the call.

The client address is the peer, or, when the peer is one of the configured trusted
proxies (INDEXIUM_TELEMETRY_TRUSTED_PROXIES), the right-most X-Forwarded-For entry that is
not itself a trusted proxy; a trusted proxy naming no usable client is not capped (as the
API's rate limit does).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import time
from collections.abc import Callable

from indexium_platform import clientaddr

HOUR = 3600.0
# Above this many remembered ids in one hour the table is full: new ids are refused until the
# hour ends (fail closed: filling memory must not switch the cap off). ~70 MB at most.
MAX_TRACKED = 1_000_000


class ClientNetwork:
    """The request's source network prefix as bytes (/24 or /64), or None when there is none to cap."""

    def __init__(self, trusted_proxies: tuple[str, ...]):
        self._proxies = clientaddr.TrustedProxies(trusted_proxies)

    @staticmethod
    def _prefix(addr) -> bytes:
        if addr.version == 6 and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped
        return b"4" + addr.packed[:3] if addr.version == 4 else b"6" + addr.packed[:8]

    def prefix(self, peer: str | None, forwarded_for: str | None) -> bytes | None:
        addr = self._proxies.client(peer, forwarded_for)
        if addr is clientaddr.NOT_AN_ADDRESS:
            return b"?"  # a unix socket or test transport: one network
        return None if addr is None else self._prefix(addr)


class NewServerCap:
    def __init__(self, limit: int, *, clock: Callable[[], float] = time.time):
        self._limit, self._clock = limit, clock
        self._hour = -1
        self._key = b""
        self._seen: dict[bytes, set[bytes]] = {}
        self._tracked = 0

    def _rotate(self, now: float) -> None:
        hour = int(now // HOUR)
        if hour != self._hour:
            self._hour, self._key, self._seen, self._tracked = hour, os.urandom(32), {}, 0

    def admit(self, prefix: bytes | None, server_hash: bytes) -> int:
        """0 if this server may ping; else the seconds until the hour ends (the Retry-After)."""
        if prefix is None:
            return 0
        now = self._clock()
        self._rotate(now)
        net = hmac.new(self._key, prefix, hashlib.sha256).digest()
        server = hmac.new(self._key, server_hash, hashlib.sha256).digest()[:8]
        ids = self._seen.get(net)
        if ids is not None and server in ids:
            return 0
        if (ids is not None and len(ids) >= self._limit) or self._tracked >= MAX_TRACKED:
            return max(1, math.ceil((self._hour + 1) * HOUR - now))
        if ids is None:
            ids = self._seen[net] = set()
        ids.add(server)
        self._tracked += 1
        return 0

    def __len__(self) -> int:
        """Networks remembered this hour (for tests)."""
        return len(self._seen)
