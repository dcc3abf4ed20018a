"""Which hosts the jar reader may talk to, and which addresses count as public."""

from __future__ import annotations

import pytest

from indexium_jar.errors import HttpError, JarReadError, NetworkError
from indexium_jar.http.hops import parse_retry_after
from indexium_jar.http.policy import DownloadPolicy, is_public_address


def policy(*hosts: str) -> DownloadPolicy:
    return DownloadPolicy(allowed_hosts=frozenset(hosts))


def test_explicit_entries_with_and_without_port():
    p = policy("Objects.GitHubUserContent.com", "127.0.0.1:8080", "[::1]:9000")
    assert p.match_host("objects.githubusercontent.com", 443) == "explicit"
    assert p.match_host("127.0.0.1", 8080) == "explicit"
    assert p.match_host("127.0.0.1", 8081) is None
    assert p.match_host("::1", 9000) == "explicit"
    assert p.match_host("evil.com", 443) is None
    assert p.match_host("githubusercontent.com", 443) is None


def test_wildcards_match_subdomains_only():
    p = policy("*.githubusercontent.com")
    assert p.match_host("release-assets.githubusercontent.com", 443) == "wildcard"
    assert p.match_host("githubusercontent.com", 443) is None
    assert p.match_host("githubusercontent.com.evil.com", 443) is None
    assert policy("*").match_host("anything.example", 80) == "wildcard"


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("140.82.112.3", True),
        ("2606:50c0:8000::154", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("172.16.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("224.0.0.1", False),
        ("0.0.0.0", False),
        ("240.0.0.1", False),
        ("::1", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:140.82.112.3", True),
        ("not-an-ip", False),
    ],
)
def test_public_addresses(address, public):
    assert is_public_address(address) is public


def test_error_taxonomy():
    assert HttpError(503).retryable and HttpError(429).retryable and HttpError(408).retryable
    assert not HttpError(403).retryable and HttpError(403).code == "http_error"
    assert NetworkError("x").retryable and isinstance(NetworkError("x"), JarReadError)


def test_retry_after_forms():
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
