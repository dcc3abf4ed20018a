"""The per-network cap on new server ids: prefixes, trusted proxies, the hourly key (pure)."""

import ipaddress
import os

import pytest

from indexium_telemetry.newservers import HOUR, ClientNetwork, NewServerCap


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
    assert (net.prefix(a, None) == net.prefix(b, None)) is same


def test_forwarded_for_is_believed_only_from_trusted_proxies():
    plain, proxied = ClientNetwork(()), ClientNetwork(("10.0.0.0/8",))
    client = ClientNetwork(()).prefix("203.0.113.9", None)
    assert plain.prefix("10.1.2.3", "203.0.113.9") == plain.prefix("10.1.2.3", None)  # not trusted: the peer
    assert proxied.prefix("10.1.2.3", "203.0.113.9") == client
    assert proxied.prefix("10.1.2.3", "198.51.100.1, 203.0.113.9:5555, 10.9.9.9") == client  # right-most untrusted
    assert proxied.prefix("10.1.2.3", None) is None  # a trusted proxy naming no client: not capped
    assert proxied.prefix("10.1.2.3", "garbage") is None
    assert proxied.prefix("203.0.113.9", "198.51.100.1") == client  # an untrusted peer's header is ignored


def test_at_most_limit_new_ids_per_network_and_hour_and_known_ids_always_pass():
    clock = Clock()
    cap = NewServerCap(3, clock=clock)
    net = ClientNetwork(()).prefix("198.51.100.7", None)
    other = ClientNetwork(()).prefix("198.51.101.7", None)
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
    prefix = ClientNetwork(()).prefix(addr, None)
    cap.admit(prefix, b"s" * 32)
    key1, table1 = cap._key, dict(cap._seen)
    packed = ipaddress.ip_address(addr).packed
    dump = repr(vars(cap)).encode() + b"".join(table1) + b"".join(b for s in table1.values() for b in s)
    assert addr.encode() not in dump and packed[:3] not in b"".join(table1)
    clock.now += HOUR
    cap.admit(prefix, b"s" * 32)
    assert cap._key != key1 and set(cap._seen) != set(table1)
