"""The per-network cap on new server ids: prefixes, trusted proxies, the hourly key (pure)."""

import ipaddress
import os

import pytest

from indexium_telemetry.newservers import HOUR, MAX_TRACKED, ClientNetwork, NewServerCap


class Clock:
    def __init__(self, now: float = 1_000 * HOUR + 10):
        self.now = now

    def __call__(self) -> float:
        return self.now


def ids(n: int) -> list[bytes]:
    return [os.urandom(32) for _ in range(n)]


@pytest.mark.parametrize("a,b,same", [
    ("198.51.100.7", "198.51.100.250", True),
    ("198.51.100.7", "198.51.101.7", False),
    ("2001:db8:1:2:aaaa::1", "2001:db8:1:2:ffff::9", True),
    ("2001:db8:1:2::1", "2001:db8:1:3::1", False),
    ("::ffff:198.51.100.7", "198.51.100.9", True),
])
def test_prefixes_are_slash_24_and_slash_64(a, b, same):
    net = ClientNetwork(())
    assert (net.networks(a, None)[0] == net.networks(b, None)[0]) is same


@pytest.mark.parametrize("a,b,shared", [
    ("198.51.100.7", "198.51.7.7", 1),  # one /16
    ("198.51.100.7", "198.52.100.7", 0),
    ("2001:db8:1:2::1", "2001:db8:1:ffff::1", 2),  # one /48, so one /32
    ("2001:db8:1:2::1", "2001:db8:ffff:2::1", 1),  # one /32 only
    ("2001:db8:1:2::1", "2001:db9:1:2::1", 0),
])
def test_an_address_is_counted_in_its_wider_networks_too(a, b, shared):
    net = ClientNetwork(())
    na, nb = net.networks(a, None), net.networks(b, None)
    assert len(na) == (2 if "." in a else 3) and na[0] != nb[0]
    assert sum(x == y for x, y in zip(na[1:], nb[1:])) == shared


def test_forwarded_for_is_believed_only_from_trusted_proxies():
    plain, proxied = ClientNetwork(()), ClientNetwork(("10.0.0.0/8",))
    client = ClientNetwork(()).networks("203.0.113.9", None)
    assert plain.networks("10.1.2.3", "203.0.113.9") == plain.networks("10.1.2.3", None)  # not trusted: the peer
    assert proxied.networks("10.1.2.3", "203.0.113.9") == client
    assert proxied.networks("10.1.2.3", "198.51.100.1, 203.0.113.9:5555, 10.9.9.9") == client  # right-most untrusted
    assert proxied.networks("10.1.2.3", None) is None  # a trusted proxy naming no client: not capped
    assert proxied.networks("10.1.2.3", "garbage") is None
    assert proxied.networks("203.0.113.9", "198.51.100.1") == client  # an untrusted peer's header is ignored


def test_at_most_limit_new_ids_per_network_and_hour_and_known_ids_always_pass():
    clock = Clock()
    cap = NewServerCap(3, clock=clock)
    net = ClientNetwork(()).networks("198.51.100.7", None)
    other = ClientNetwork(()).networks("198.51.101.7", None)
    first = ids(3)
    assert [cap.admit(net, s) for s in first] == [0, 0, 0]
    wait = cap.admit(net, os.urandom(32))
    assert wait == HOUR - 10  # until the hour ends
    assert [cap.admit(net, s) for s in first] == [0, 0, 0]  # already seen this hour
    assert [cap.admit(other, s) for s in ids(3)] == [0, 0, 0]  # another network has its own cap
    assert cap.admit(None, os.urandom(32)) == 0  # a trusted proxy naming no client
    clock.now += HOUR - 10  # the next hour: new key, empty table
    assert [cap.admit(net, s) for s in ids(3)] == [0, 0, 0]
    assert len(cap) == 1  # only this hour's network is remembered


def test_the_table_holds_no_address_and_its_key_changes_every_hour():
    clock = Clock()
    cap = NewServerCap(5, clock=clock)
    addr = "198.51.100.7"
    prefix = ClientNetwork(()).networks(addr, None)
    cap.admit(prefix, b"s" * 32)
    key1, table1 = cap._key, dict(cap._seen)
    packed = ipaddress.ip_address(addr).packed
    dump = repr(vars(cap)).encode() + b"".join(table1) + b"".join(b for s in table1.values() for b in s)
    wider = b"".join(cap._counts)
    assert addr.encode() not in dump and packed[:3] not in b"".join(table1)
    assert len(cap._counts) == 1 and packed[:2] not in wider  # the /16, HMAC'd too
    clock.now += HOUR
    cap.admit(prefix, b"s" * 32)
    assert cap._key != key1 and set(cap._seen) != set(table1)


def v6(n48: int, n64: int) -> str:
    """An address in the /64 number n64 of the /48 number n48 of 2001:db8::/32."""
    return str(ipaddress.IPv6Address((0x20010DB8 << 96) | (n48 << 80) | (n64 << 64) | 1))


def test_one_ipv6_slash_48_cannot_fill_the_table_from_its_65536_slash_64s():
    cap, net = NewServerCap(32, clock=Clock()), ClientNetwork(())
    # Every /64 of one /48 tries one new id: 32 x 64 get in, then the /48 is full.
    admitted = sum(cap.admit(net.networks(v6(7, i), None), s) == 0 for i, s in enumerate(ids(65_536)))
    assert admitted == 32 * 64 == cap.tracked
    assert cap.tracked < MAX_TRACKED / 400
    # Its /64s are refused even where they have slots left; other /48s and IPv4 are not.
    assert cap.admit(net.networks(v6(7, 0), None), os.urandom(32)) > 0
    assert cap.admit(net.networks(v6(8, 0), None), os.urandom(32)) == 0
    assert cap.admit(net.networks("198.51.100.7", None), os.urandom(32)) == 0


def test_one_ipv4_slash_16_is_capped_at_64_slash_24s_worth():
    cap, net = NewServerCap(32, clock=Clock()), ClientNetwork(())
    flood = [(f"198.51.{a}.{b}", s) for a in range(256) for b, s in zip(range(1, 33), ids(32))]
    admitted = sum(cap.admit(net.networks(addr, None), s) == 0 for addr, s in flood)
    assert admitted == 32 * 64
    assert cap.admit(net.networks("198.52.0.1", None), os.urandom(32)) == 0


def test_one_ipv6_slash_32_is_capped_across_its_slash_48s():
    cap, net = NewServerCap(2, clock=Clock()), ClientNetwork(())
    # 2 per /64, 128 per /48, 1,024 per /32: nine full /48s get 1,024 in, not 1,152.
    tries = [(v6(n48, n64), s) for n48 in range(9) for n64 in range(64) for s in ids(2)]
    assert sum(cap.admit(net.networks(a, None), s) == 0 for a, s in tries) == 2 * 512
    assert cap.admit(net.networks("2001:db9::1", None), os.urandom(32)) == 0  # another /32


def test_a_known_id_passes_when_its_wider_network_is_full_and_refusals_take_no_slot():
    cap, net = NewServerCap(2, clock=Clock()), ClientNetwork(())
    first = ids(1)[0]
    assert cap.admit(net.networks(v6(1, 0), None), first) == 0
    for i in range(1, 200):
        cap.admit(net.networks(v6(1, i), None), os.urandom(32))
    assert cap.tracked == 2 * 64
    assert cap.admit(net.networks(v6(1, 0), None), first) == 0  # seen this hour
    assert cap.tracked == 2 * 64


def test_what_the_table_keeps_is_hmac_sha256_under_the_hours_key():
    import hashlib
    import hmac
    cap = NewServerCap(5, clock=Clock())
    prefix = ClientNetwork(()).networks("198.51.100.7", None)
    server = b"s" * 32
    assert cap.admit(prefix, server) == 0
    key = cap._key
    assert set(cap._seen) == {hmac.digest(key, prefix[0], "sha256")}
    assert cap._seen[hmac.digest(key, prefix[0], "sha256")] == {hmac.digest(key, server, "sha256")[:8]}
    assert set(cap._counts) == {hmac.new(key, prefix[1], hashlib.sha256).digest()}


@pytest.mark.parametrize("peer", [
    "198.51.100.7", "127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "2001:db8:1:2:aaaa::1",
    "::ffff:198.51.100.7", "::FFFF:c633:6407", "fe80::1%eth0", "2001:db8::", "01.2.3.4", "1.2.3",
    " 1.2.3.4", "1.2.3.4\x00", "١.2.3.4", "1::2::3", "", None, "unix:/run/sock",
])
def test_the_peer_read_without_an_ipaddress_object_gives_what_the_general_path_gives(peer):
    # Without trusted proxies a peer in plain address text is read by inet_pton; anything
    # else by TrustedProxies. Both must give the same networks (or the same refusal).
    fast = ClientNetwork(()).networks(peer, None)
    proxies = ClientNetwork(("192.0.2.0/24",))  # trusted proxies: always the general path
    assert fast == proxies.networks(peer, None)
    if peer and peer.isascii() and peer.count(".") == 3 and ":" not in peer and fast != (b"?",):
        assert fast == tuple(bytes((4, bits)) + ipaddress.ip_address(peer).packed[:bits // 8]
                             for bits in (24, 16))
