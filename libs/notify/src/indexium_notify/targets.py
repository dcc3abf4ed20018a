"""Where a webhook may be delivered: one policy, checked when a subscription is created and
again at every delivery, after DNS resolution, on the very addresses then connected to.

The rules are the indexer's download rules (``indexium_jar.http.policy.is_public_address``):
a target must resolve to globally routable unicast addresses only, so no loopback, private,
link-local, multicast, reserved or cloud-metadata (169.254.169.254, fd00:ec2::254) address.
``https`` only, unless ``allow_http`` (an operator setting: tests, intranets). No user info
in the URL, no redirects followed (the delivery code sends ``allow_redirects=False``).

DNS rebinding: a name checked at one moment and connected to at the next could resolve
differently in between. :class:`PinnedResolver` is the aiohttp resolver of the delivery
session: it resolves, refuses the whole answer if one address is not allowed, and hands
aiohttp exactly the addresses it checked, so the connection goes to an address that passed.
aiohttp does not consult a resolver for an IP literal: :meth:`TargetPolicy.check_url` checks
those before the request (an IP literal cannot change).

``allowed`` (operator setting, empty by default; tests and intranets only) exempts targets:
an entry is a host name as written in URLs (``receiver.test``, ``127.0.0.1``; that host may
resolve to anything) or a CIDR (``10.20.0.0/16``: any host whose every address lies inside).
A name NOT listed that resolves into a listed host's address is still refused.

``nameserver`` (operator setting, tests and intranets): resolve through this DNS server
(``ip:port``) instead of the system's resolver.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field

from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from indexium_jar.http.policy import is_public_address

MAX_URL_CHARS = 2048
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class TargetRefused(OSError):
    """The target is not allowed. An OSError so aiohttp passes it out of its connector
    (as ``ClientConnectorDNSError.os_error``) when the resolver raises it."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class TargetPolicy:
    allow_http: bool = False
    allowed: tuple[str, ...] = ()
    nameserver: str | None = None  # "ip:port"
    timeout_s: float = 5.0
    hosts: frozenset[str] = field(init=False)
    networks: tuple[Network, ...] = field(init=False)

    def __post_init__(self) -> None:
        hosts, networks = set(), []
        for entry in self.allowed:
            entry = entry.strip().lower()
            if not entry:
                continue
            if "/" in entry:
                networks.append(ipaddress.ip_network(entry, strict=False))  # ValueError: a bad setting
            else:
                hosts.add(entry.strip("[]"))
        object.__setattr__(self, "hosts", frozenset(hosts))
        object.__setattr__(self, "networks", tuple(networks))
        if self.nameserver is not None:
            parse_nameserver(self.nameserver)

    # ---- the URL itself ----------------------------------------------------------------------
    def parse(self, raw: str) -> URL:
        """The URL if its form is acceptable (no resolution), else TargetRefused."""
        if not isinstance(raw, str) or not raw or len(raw) > MAX_URL_CHARS or not raw.isprintable() \
                or not raw.isascii():
            raise TargetRefused(f"the URL must be printable ASCII of at most {MAX_URL_CHARS} characters")
        try:
            url = URL(raw)
        except ValueError:
            raise TargetRefused("the URL cannot be parsed") from None
        schemes = ("https", "http") if self.allow_http else ("https",)
        if url.scheme not in schemes:
            raise TargetRefused("the URL must be https" + (" or http" if self.allow_http else ""))
        if not url.host or url.user is not None or url.password is not None:
            raise TargetRefused("the URL must name a host, without user or password")
        if url.fragment:
            raise TargetRefused("the URL must not have a fragment")
        return url

    def _exempt_host(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.hosts

    def _address_ok(self, address: str) -> bool:
        if is_public_address(address):
            return True
        if not self.networks:
            return False
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in net for net in self.networks)

    def check_addresses(self, host: str, addresses: list[str]) -> None:
        if self._exempt_host(host):
            return
        if not addresses:
            raise TargetRefused(f"{host} has no address")
        bad = [a for a in addresses if not self._address_ok(a)]
        if bad:
            raise TargetRefused(f"{host} resolves to a non-public address")

    async def resolve(self, host: str, port: int) -> list[tuple[str, int]]:
        """(address, family) for every address of ``host``, unchecked."""
        try:
            ip = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
            return [(str(ip), socket.AF_INET6 if ip.version == 6 else socket.AF_INET)]
        except ValueError:
            pass
        try:
            async with asyncio.timeout(self.timeout_s):
                if self.nameserver is not None:
                    return await _ask_nameserver(self.nameserver, host)
                infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError:
            raise TargetRefused(f"resolving {host} timed out") from None
        except OSError as exc:
            if isinstance(exc, TargetRefused):
                raise
            raise TargetRefused(f"{host} cannot be resolved") from None
        seen, out = set(), []
        for family, _, _, _, sockaddr in infos:
            if sockaddr[0] not in seen:
                seen.add(sockaddr[0])
                out.append((str(sockaddr[0]), family))
        return out

    def check_literal(self, raw: str) -> URL:
        """The check made before each delivery: the URL's form, and its address when the host
        is an IP literal (aiohttp connects to a literal without asking the resolver); a name
        is checked by :class:`PinnedResolver` as the connection is made."""
        url = self.parse(raw)
        try:
            ipaddress.ip_address(url.host.strip("[]").split("%", 1)[0])
        except ValueError:
            return url
        self.check_addresses(url.host, [url.host.strip("[]")])
        return url

    async def check_url(self, raw: str) -> URL:
        """The whole check as made at creation: the URL's form, then its addresses now."""
        url = self.parse(raw)
        found = await self.resolve(url.host, url.port or 443)
        self.check_addresses(url.host, [a for a, _ in found])
        return url


def parse_nameserver(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = value, "53"
    host = host.strip("[]")
    ipaddress.ip_address(host)  # ValueError: a bad setting
    return host, int(port)


async def _ask_nameserver(nameserver: str, host: str) -> list[tuple[str, int]]:
    import dns.asyncresolver  # noqa: PLC0415 - only a deployment that names a DNS server loads it
    import dns.exception  # noqa: PLC0415
    import dns.resolver  # noqa: PLC0415

    ip, port = parse_nameserver(nameserver)
    resolver = dns.asyncresolver.Resolver(configure=False)
    resolver.nameservers = [ip]
    resolver.port = port
    resolver.cache = None
    out = []
    for rdtype, family in (("A", socket.AF_INET), ("AAAA", socket.AF_INET6)):
        try:
            answer = await resolver.resolve(host, rdtype, search=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            continue
        except dns.exception.DNSException as exc:
            raise OSError(str(exc)) from None
        out += [(r.address, family) for r in answer]
    return out


class PinnedResolver(AbstractResolver):
    """aiohttp's resolver for deliveries: what it returns is what was checked."""

    def __init__(self, policy: TargetPolicy):
        self._policy = policy

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        found = await self._policy.resolve(host, port)
        self._policy.check_addresses(host, [a for a, _ in found])
        return [ResolveResult(hostname=host, host=address, port=port, family=fam, proto=0,
                              flags=socket.AI_NUMERICHOST) for address, fam in found]

    async def close(self) -> None:
        return None
