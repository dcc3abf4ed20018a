"""Pure pieces of the GitHub client: the App JWT, key loading, Link headers, rate-limit waits, ETag LRU."""

from __future__ import annotations

import jwt
import pytest

from indexium_devstack.fakegithub import generate_rsa_pem
from indexium_github import app_jwt, load_private_key, parse_links
from indexium_github.auth import InstallationTokens, parse_expiry
from indexium_github.etags import Cached, EtagCache
from indexium_github.ratelimit import Bucket, limit_wait

PEM, PUBLIC = (k.decode() for k in generate_rsa_pem())


def test_app_jwt_claims_follow_githubs_rules():
    token = app_jwt(12345, PEM, now=1_700_000_000)
    claims = jwt.decode(token, PUBLIC, algorithms=["RS256"], options={"verify_exp": False})
    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    assert claims["iss"] == "12345"
    assert claims["iat"] == 1_700_000_000 - 60  # backdated for clock drift
    assert claims["exp"] - claims["iat"] <= 600  # GitHub's 10-minute ceiling


def test_private_key_from_value_path_or_escaped_newlines(tmp_path):
    assert load_private_key(PEM, None).startswith("-----BEGIN RSA PRIVATE KEY-----")
    assert load_private_key(PEM.replace("\n", "\\n"), None) == load_private_key(PEM, None)
    path = tmp_path / "app.pem"
    path.write_text(PEM)
    assert load_private_key(None, str(path)) == load_private_key(PEM, None)
    assert load_private_key(None, None) is None
    with pytest.raises(ValueError, match="not both"):
        load_private_key(PEM, str(path))
    with pytest.raises(ValueError, match="INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH"):
        load_private_key(None, str(tmp_path / "missing.pem"))
    with pytest.raises(ValueError, match="not an RSA private key") as info:
        load_private_key("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----", None)
    assert "AAAA" not in str(info.value)


def test_link_header_parsing():
    header = ('<https://api.github.com/repos/a/b/releases?per_page=100&page=2>; rel="next", '
              '<https://api.github.com/repos/a/b/releases?per_page=100&page=3>; rel="last"')
    links = parse_links(header)
    assert links["next"].endswith("page=2") and links["last"].endswith("page=3")
    assert parse_links(None) == {} and parse_links("") == {}


def test_bucket_waits_for_reset_only_when_spent():
    b = Bucket()
    b.observe({"X-RateLimit-Remaining": "3", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": "1000"})
    assert b.wait_before(900.0) == (0.0, "")
    assert b.wait_before(900.0, reserve=10) == (101.0, "reserve")
    b.observe({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1000"})
    assert b.wait_before(900.0) == (101.0, "primary")
    assert b.wait_before(1002.0) == (0.0, "")  # the reset has passed


def test_limit_wait_classifies_refusals():
    now = 1000.0
    assert limit_wait(403, {"Retry-After": "30"}, "secondary rate limit", now, Bucket()) == (30.0, "secondary")
    primary = limit_wait(403, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1600"}, "API rate limit exceeded",
                         now, Bucket())
    assert primary == (601.0, "primary")
    b = Bucket()
    first = limit_wait(403, {"X-RateLimit-Remaining": "4000"}, "You have exceeded a secondary rate limit", now, b)
    second = limit_wait(403, {"X-RateLimit-Remaining": "4000"}, "You have exceeded a secondary rate limit", now, b)
    assert first == (60.0, "secondary") and second == (120.0, "secondary")  # exponential
    assert limit_wait(403, {"X-RateLimit-Remaining": "4000"}, "Resource not accessible by integration",
                      now, Bucket()) is None
    assert limit_wait(404, {}, "Not Found", now, Bucket()) is None


def test_etag_cache_is_bounded():
    cache = EtagCache(max_entries=2, max_bytes=1000)
    for i in range(3):
        cache.put(("a", str(i)), Cached(f'"{i}"', {}, b"x" * 10))
    assert len(cache) == 2 and cache.get(("a", "0")) is None
    cache.put(("a", "big"), Cached('"b"', {}, b"x" * 900))  # more than an eighth: not kept
    assert cache.get(("a", "big")) is None


async def test_tokens_are_reused_until_the_margin():
    now = [0.0]
    minted = []

    async def mint(installation_id):
        minted.append(installation_id)
        return f"t{len(minted)}", now[0] + 3600

    tokens = InstallationTokens(mint, lambda: now[0])
    assert await tokens.get(1) == "t1"
    now[0] = 3000
    assert await tokens.get(1) == "t1"
    now[0] = 3301  # less than 5 minutes left
    assert await tokens.get(1) == "t2"
    tokens.invalidate(1, "stale-token")  # someone else's old token: ours stays
    assert await tokens.get(1) == "t2"
    tokens.invalidate(1)
    assert await tokens.get(1) == "t3"
    assert parse_expiry("2016-07-11T22:14:10Z") == 1468275250
