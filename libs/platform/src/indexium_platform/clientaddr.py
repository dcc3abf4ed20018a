"""Which address a request comes from, behind the proxies we trust.

The client is the peer, or, when the peer is one of the trusted proxies, the right-most
``X-Forwarded-For`` entry that is not itself a trusted proxy (entries left of it were
written by the client and prove nothing). A trusted proxy that names no usable client
gives ``None``: callers then neither limit nor guess. The address is returned, never
kept: what a caller derives from it (a rate-limit key, a hashed network prefix) is its own
business.
"""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class NotAnAddress:
    """The peer is not an IP address (a unix socket, a test transport)."""


NOT_AN_ADDRESS = NotAnAddress()


class TrustedProxies:
    def __init__(self, networks: tuple[str, ...]):
        self._networks = tuple(ipaddress.ip_network(c, strict=False) for c in networks)

    def __bool__(self) -> bool:
        """Whether any proxy is trusted (without one, the client is always the peer)."""
        return bool(self._networks)

    def _is_trusted(self, addr: Address) -> bool:
        return any(addr in net for net in self._networks if addr.version == net.version)

    def client(self, peer: str | None, forwarded_for: str | None) -> Address | NotAnAddress | None:
        try:
            addr = ipaddress.ip_address(peer or "")
        except ValueError:
            return NOT_AN_ADDRESS
        if not self._networks or not self._is_trusted(addr):
            return addr
        for hop in reversed([h.strip() for h in (forwarded_for or "").split(",") if h.strip()]):
            try:
                hop_addr = ipaddress.ip_address(_strip_port(hop))
            except ValueError:
                return None  # garbage from a trusted proxy: do not guess
            if not self._is_trusted(hop_addr):
                return hop_addr
        return None


def _strip_port(hop: str) -> str:
    """'1.2.3.4:5678' and '[2001:db8::1]:443' (some proxies add ports) -> the bare address."""
    if hop.startswith("["):
        return hop[1:].split("]", 1)[0]
    if hop.count(":") == 1:
        return hop.split(":", 1)[0]
    return hop.split("%", 1)[0]


def check_networks(variable: str, networks: tuple[str, ...]) -> None:
    """Settings check: each entry of ``variable`` is an address or a CIDR (ValueError naming it)."""
    for cidr in networks:
        try:
            ipaddress.ip_network(cidr, strict=False)
        except ValueError:
            raise ValueError(f"{variable}: {cidr!r} is not an address or CIDR") from None
