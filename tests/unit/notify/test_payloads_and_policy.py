"""libs/notify's pure parts: the bodies within Discord's limits, plain text, ranges, signing,
the retry schedule and the target policy's rules."""

import json
import random
from datetime import UTC, datetime

import pytest

from indexium_notify import payloads, signing
from indexium_notify.schedule import retry_delay
from indexium_notify.targets import TargetPolicy, TargetRefused

RELEASES = ("1.21.1", "1.21", "1.20.6", "1.20.5", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20", "1.19.4")


def facts(**over) -> payloads.Facts:
    base = dict(mod_slug="sodium", mod_name="Sodium", mod_summary="Fast", owner="caffeine",
                repo_full_name="caffeine/sodium", has_icon=True, version_id="v1", version_number="0.5.3",
                version_name="0.5.3", version_type="release", tag_name="mc1.20.1-0.5.3", changelog="**Faster** chunks",
                published_at=datetime(2026, 1, 1, tzinfo=UTC), loaders=("fabric",),
                game_versions=("1.20.4", "1.20.2", "1.20.1"),
                files=(payloads.FileFacts("sodium.jar", "https://gh/sodium.jar", 10, True, ("fabric",), ("1.20.1",)),),
                new_project=False, public_url="https://indexium.example", github_url="https://github.com",
                releases=RELEASES)
    return payloads.Facts(**{**base, **over})


def test_versions_text_uses_the_shared_compact_ranges():
    # compact_versions lives in indexium_jar.gameversions (tests/unit/jar/test_compact_versions.py)
    assert payloads.versions_text(["1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.19.4"], RELEASES) == "1.19.4, 1.20.1–1.20.4"
    assert payloads.versions_text([], RELEASES) == "any"


def test_plain_text_has_no_markup_and_is_bounded():
    text = payloads.plain_text("# Title\n\n*a* `b` [c](http://x) <img src=x onerror=y> ![alt](i.png)\n\n- one\n- two",
                               limit=200)
    assert text == "Title\na b c alt\none\ntwo"
    long = payloads.plain_text("word " * 5000, limit=100)
    assert len(long) <= 100 and long.endswith("…")


@pytest.mark.parametrize("name, number, changelog, versions", [
    ("Sodium", "0.5.3", "", ()),
    ("W" * 128, "9" * 128, ("**x** @everyone " * 5000), tuple(f"1.{i}.{j}" for i in range(40) for j in range(10))),
    ("_*~`|>" * 30, "-#" * 64, "\x00\x01" + "é" * 20000, ("1.20.1",)),
])
def test_the_discord_body_keeps_within_discords_limits(name, number, changelog, versions):
    message = json.loads(payloads.discord_body(facts(mod_name=name, version_number=number, changelog=changelog,
                                                     game_versions=versions)))
    assert payloads.discord_problems(message) == []
    assert message["allowed_mentions"] == {"parse": []}
    embed = message["embeds"][0]
    assert embed["thumbnail"]["url"] == "https://indexium.example/api/v1/mods/sodium/icon"
    assert "\x00" not in embed["description"]


def test_the_limit_checker_names_what_is_over():
    embed = {"title": "t" * 257, "description": "d" * 4097, "fields": [{"name": "n", "value": "v" * 1025}] * 26,
             "footer": {"text": "f" * 2049}, "author": {"name": "a" * 257}}
    problems = payloads.discord_problems({"embeds": [embed]})
    for what in ("title", "description", "fields is 26", "fields[0].value", "footer.text", "author.name", "total"):
        assert any(what in p for p in problems), what


def test_the_json_body_is_the_same_for_every_retry_and_signs_like_github():
    made = datetime(2026, 1, 1, tzinfo=UTC)
    a = payloads.indexium_body(facts(), delivery_id="d", subscription_id="s", created_at=made)
    assert a == payloads.indexium_body(facts(), delivery_id="d", subscription_id="s", created_at=made)
    body = json.loads(a)
    assert body["version"]["game_versions_compact"] == ["1.20.1–1.20.2", "1.20.4"]
    assert body["version"]["release_url"] == "https://github.com/caffeine/sodium/releases/tag/mc1.20.1-0.5.3"
    secret = signing.secret_for(b"k" * 32, b"salt" * 4)
    assert secret.startswith("whsec_") and secret != signing.secret_for(b"k" * 32, b"tlas" * 4)
    assert signing.verify(secret, a, signing.signature(secret, a))
    assert not signing.verify(secret, a + b" ", signing.signature(secret, a))
    assert not signing.verify(secret, a, None)


def test_retries_back_off_exponentially_to_the_cap_and_honour_retry_after():
    rng = random.Random(1)
    delays = [retry_delay(n, base_s=10, cap_s=3600, rng=rng) for n in range(1, 14)]
    assert 9 <= delays[0] <= 11 and 18 <= delays[1] <= 22 and all(d <= 3960 for d in delays)
    assert delays[-1] >= 3240  # at the cap
    assert retry_delay(1, base_s=10, cap_s=3600, retry_after_s=120, rng=rng) == 120
    assert retry_delay(1, base_s=10, cap_s=3600, retry_after_s=10**9, longest_s=500, rng=rng) == 500
    total, n = 0.0, 0
    while total < 86400:  # what a day holds at the defaults
        total += retry_delay(n + 1, base_s=10, cap_s=3600, rng=random.Random(n))
        n += 1
    assert 28 <= n <= 36


@pytest.mark.parametrize("address, ok", [
    ("93.184.216.34", True), ("2606:4700::1111", True),
    ("127.0.0.1", False), ("10.0.0.1", False), ("172.16.5.4", False), ("192.168.1.1", False),
    ("169.254.169.254", False), ("100.64.0.1", False), ("0.0.0.0", False), ("::1", False), ("fe80::1", False),
    ("fd00:ec2::254", False), ("::ffff:127.0.0.1", False), ("224.0.0.1", False),
])
def test_only_public_addresses_pass_by_default(address, ok):
    policy = TargetPolicy()
    if ok:
        policy.check_addresses("h.example", [address])
    else:
        with pytest.raises(TargetRefused):
            policy.check_addresses("h.example", [address])
    with pytest.raises(TargetRefused):  # one bad address refuses the whole answer
        policy.check_addresses("h.example", ["93.184.216.34", "10.0.0.1"])


def test_the_test_allowance_names_hosts_or_cidrs_and_nothing_else():
    policy = TargetPolicy(allow_http=True, allowed=("127.0.0.1", "receiver.test", "10.20.0.0/16"))
    policy.check_addresses("127.0.0.1", ["127.0.0.1"])
    policy.check_addresses("receiver.test", ["192.168.9.9"])  # a named host may resolve anywhere
    policy.check_addresses("intranet.example", ["10.20.3.4"])
    for host, address in (("other.test", "127.0.0.1"), ("intranet.example", "10.21.0.1")):
        with pytest.raises(TargetRefused):
            policy.check_addresses(host, [address])
    assert policy.parse("http://receiver.test/x").scheme == "http"
    with pytest.raises(TargetRefused):
        TargetPolicy().parse("http://receiver.test/x")
    with pytest.raises(TargetRefused):
        TargetPolicy().check_literal("https://127.0.0.1/x")
    assert TargetPolicy().check_literal("https://hooks.example/x").host == "hooks.example"  # names: at connect
    with pytest.raises(ValueError):
        TargetPolicy(allowed=("10.0.0.0/33",))
