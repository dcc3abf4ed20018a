"""A cap on new server ids per source network and hour, kept only in this process's memory.

Fresh random server UUIDs cost nothing, so without a cap one client could add any
number of "servers" to a mod. Each network prefix (IPv4 /24, IPv6 /64: what one
customer usually gets) may introduce at most ``limit`` distinct server ids per hour to
this replica, and the wider networks holding it (IPv4 /16, IPv6 /48 and /32: ``LEVELS``) a
fixed multiple of that, so no one holder of many /64s fills the table. What is kept, and
only until the hour ends:

- each prefix, as HMAC-SHA256 under a key made at random for the hour (never the address),
  with the count of ids it introduced;
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
import socket
import time
from collections.abc import Callable

from indexium_platform import clientaddr

HOUR = 3600.0
# Above this many remembered ids in one hour the table is full: new ids are refused until the
# hour ends (fail closed: filling memory must not switch the cap off). ~70 MB at most.
MAX_TRACKED = 1_000_000
# The networks an address is counted in, narrowest first, as (prefix length, multiple of the
# per-network limit). One customer gets a /24 or a /64, but a /64 is not scarce: one IPv6
# /48 (a home line, a free tunnel) holds 65,536 of them, and one IPv4 /16 256 /24s. So a new
# id must also fit under its /16's, /48's and /32's caps, and one holder of any of those can
# take at most limit x 64 (/16, /48) or limit x 512 (/32) ids of MAX_TRACKED an hour: with
# the default 32, 2,048 or 16,384, so filling the table takes 489 /16s or /48s, or 62 /32s.
LEVELS = {4: ((24, 1), (16, 64)), 6: ((64, 1), (48, 64), (32, 512))}
# Each level's network as ClientNetwork gives it: (the tag bytes, how many bytes of the address).
_CUTS = {version: tuple((bytes((version, bits)), bits // 8) for bits, _ in levels)
         for version, levels in LEVELS.items()}
_V4_MAPPED = bytes(10) + b"\xff\xff"
_FAMILIES = ((4, socket.AF_INET), (6, socket.AF_INET6))


class ClientNetwork:
    """The request's source networks (see LEVELS) as bytes, narrowest first, or None when
    there is none to cap."""

    def __init__(self, trusted_proxies: tuple[str, ...]):
        self._proxies = clientaddr.TrustedProxies(trusted_proxies)

    @staticmethod
    def _cut(version: int, packed: bytes) -> tuple[bytes, ...]:
        if version == 6 and packed[:12] == _V4_MAPPED:
            version, packed = 4, packed[12:]
        return tuple(tag + packed[:n] for tag, n in _CUTS[version])

    def networks(self, peer: str | None, forwarded_for: str | None) -> tuple[bytes, ...] | None:
        if not self._proxies and peer:
            # No proxy trusted, so the client is the peer: its text as the kernel wrote it, read
            # without an ipaddress object (what is not plain dotted quad or IPv6 text, a
            # scoped address say, takes the general path below).
            for version, family in _FAMILIES:
                try:
                    return self._cut(version, socket.inet_pton(family, peer))
                except (OSError, ValueError):  # (ValueError: a NUL or a non-ASCII character)
                    pass
        addr = self._proxies.client(peer, forwarded_for)
        if addr is clientaddr.NOT_AN_ADDRESS:
            return (b"?",)  # a unix socket or test transport: one network
        return None if addr is None else self._cut(addr.version, addr.packed)


class NewServerCap:
    def __init__(self, limit: int, *, clock: Callable[[], float] = time.time):
        self._limit, self._clock = limit, clock
        self._hour = -1
        self._key = b""
        # HMAC-SHA256 under the hour's key, with the key already absorbed: each digest copies it
        # (hmac.digest(key, ...) looks the hash up and hashes the key again on every call).
        self._mac = hmac.new(b"", digestmod=hashlib.sha256)
        self._seen: dict[bytes, set[bytes]] = {}  # narrowest network -> the ids it introduced
        self._counts: dict[bytes, int] = {}  # a wider network -> the ids its networks introduced
        self._tracked = 0

    def _rotate(self, now: float) -> None:
        hour = int(now // HOUR)
        if hour != self._hour:
            self._hour, self._key, self._seen, self._counts, self._tracked = hour, os.urandom(32), {}, {}, 0
            self._mac = hmac.new(self._key, digestmod=hashlib.sha256)

    def _digest(self, data: bytes) -> bytes:
        mac = self._mac.copy()
        mac.update(data)
        return mac.digest()

    def admit(self, networks: tuple[bytes, ...] | None, server_hash: bytes) -> int:
        """0 if this server may ping; else the seconds until the hour ends (the Retry-After)."""
        if networks is None:
            return 0
        now = self._clock()
        self._rotate(now)
        digest = self._digest
        net = digest(networks[0])
        server = digest(server_hash)[:8]
        ids = self._seen.get(net)
        if ids is not None and server in ids:
            return 0
        if (ids is not None and len(ids) >= self._limit) or self._tracked >= MAX_TRACKED:
            return self._until_next_hour(now)
        counts = self._counts
        wider = [(digest(n), self._limit * multiple)
                 for n, (_, multiple) in zip(networks[1:], LEVELS.get(networks[0][0], ())[1:])]
        if any(counts.get(w, 0) >= cap for w, cap in wider):
            return self._until_next_hour(now)
        if ids is None:
            ids = self._seen[net] = set()
        ids.add(server)
        for w, _ in wider:
            counts[w] = counts.get(w, 0) + 1
        self._tracked += 1
        return 0

    def _until_next_hour(self, now: float) -> int:
        return max(1, math.ceil((self._hour + 1) * HOUR - now))

    def __len__(self) -> int:
        """Networks remembered this hour (for tests)."""
        return len(self._seen)

    @property
    def tracked(self) -> int:
        """Ids remembered this hour (for tests)."""
        return self._tracked
