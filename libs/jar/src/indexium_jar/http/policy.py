"""What the range reader may fetch, from where, and how much.

Host rules (``allowed_hosts``; entries are lower-case):

* ``"host"`` or ``"host:port"`` (IPv6 as ``"[::1]:8080"``): an EXPLICIT entry. The host
  may resolve to any address, loopback and private ones included; that is how a
  deployment allows an internal mirror or a test server.
* ``"*.example.com"``: any sub-domain of example.com; ``"*"``: any host. A host allowed
  only by such a WILDCARD must resolve to public addresses exclusively, so a wildcard
  (or a redirect it admits) can never reach loopback, private, link-local, multicast or
  reserved addresses.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Literal

from ..errors import DownloadHostNotAllowed, FetchTimeout, NetworkError

KiB = 1024
MiB = 1024 * KiB

HostRule = Literal["explicit", "wildcard"]


@dataclass(frozen=True, kw_only=True, slots=True)
class DownloadPolicy:
    allowed_hosts: frozenset[str]
    max_redirects: int = 3
    # The EOCD of an archive with a 65,535-byte comment starts 65,557 bytes from the
    # end; 8 KiB more keeps it inside the suffix read together with a zip64 record,
    # and usually the small central directory of a mod jar as well.
    tail_size: int = 65_557 + 8 * KiB
    # A server that ignores Range: we accept reading a whole file up to this size.
    no_range_cap: int = 10 * MiB
    # Everything received for one jar (all bodies together).
    max_fetch_bytes: int = 16 * MiB
    timeout: float = 15.0  # seconds, per HTTP request including its body
    max_entry_size: int = 1 * MiB  # default bound on one inflated entry
    # Two missing spans farther apart than this are never fetched in one request: past
    # 64 KiB a second request in the same round costs less than the bytes in between.
    coalesce_gap: int = 64 * KiB
    # Bytes spent beyond what a read needs (bridging gaps between wanted entries, entries
    # fetched ahead because they are likely to be wanted next, the blind look-behind) are
    # capped so the whole read stays within (1 + extra_ratio) x the needed bytes (tail,
    # directory, wanted entries): the read's budget is 1.2x, and 0.15 leaves room for margins.
    extra_ratio: float = 0.15
    # Room after an entry's data for a local extra field longer than the central one.
    entry_margin: int = 1 * KiB
    # When the central directory must be fetched and the tail holds none of its records,
    # also fetch up to this much before it (within extra_ratio): manifests are often the
    # last entries written, just before the directory.
    cd_prefetch: int = 64 * KiB
    # Largest central directory we fetch (the corpus maximum is 266 KB).
    max_cd_size: int = 4 * MiB

    def __post_init__(self) -> None:
        normalized = frozenset(h.strip().lower() for h in self.allowed_hosts)
        object.__setattr__(self, "allowed_hosts", normalized)
        if self.max_redirects < 0 or self.tail_size < 22 or self.timeout <= 0 or self.extra_ratio < 0:
            raise ValueError("invalid DownloadPolicy")

    def match_host(self, host: str, port: int | None) -> HostRule | None:
        """How ``host`` (as in a URL, IPv6 without brackets) is allowed, or None."""
        host = host.lower().rstrip(".")
        shown = f"[{host}]" if ":" in host else host
        names = {host, shown}
        if port is not None:
            names.add(f"{shown}:{port}")
        if names & self.allowed_hosts:
            return "explicit"
        if "*" in self.allowed_hosts:
            return "wildcard"
        labels = host.split(".")
        for i in range(1, len(labels)):
            if "*." + ".".join(labels[i:]) in self.allowed_hosts:
                return "wildcard"
        return None


def is_public_address(address: str) -> bool:
    """True for a globally routable unicast address (IPv4-mapped IPv6 judged as IPv4)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone id
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not (
        ip.is_multicast or ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_reserved
    )


async def check_host(url, policy: DownloadPolicy) -> bool:
    """Raise DownloadHostNotAllowed unless ``policy`` lets us connect to ``url``'s host.

    The one place both the range reader and the scan stage's streaming download decide
    whether a hop may be fetched. Returns True when the host had to be resolved and was
    found public (callers may remember that for the rest of one jar).
    """
    host, port = url.host, url.port
    if url.scheme not in ("http", "https") or not host:
        raise DownloadHostNotAllowed("only http(s) URLs with a host are fetched")
    rule = policy.match_host(host, port)
    if rule is None:
        raise DownloadHostNotAllowed(f"host {host} is not allowed")
    if rule == "explicit":
        return False
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        addresses = [host]
    except ValueError:
        try:
            async with asyncio.timeout(policy.timeout):
                infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError:
            raise FetchTimeout(f"resolving {host} timed out") from None
        except OSError as exc:
            raise NetworkError(f"cannot resolve {host}: {type(exc).__name__}") from None
        addresses = [str(info[4][0]) for info in infos]
    if not addresses or not all(is_public_address(a) for a in addresses):
        raise DownloadHostNotAllowed(f"host {host} resolves to a non-public address")
    return True
