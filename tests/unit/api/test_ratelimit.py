"""Rate limiting: the fixed window, and which address is limited behind trusted proxies."""

from indexium_api.ratelimit import ClientKeys, RateLimiter


def test_fixed_window_counts_and_resets():
    now = [120.0]
    limiter = RateLimiter(3, clock=lambda: now[0])
    verdicts = [limiter.hit("a") for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.remaining for v in verdicts] == [2, 1, 0, 0]
    assert verdicts[0].reset_s == 60 and verdicts[0].limit == 3
    assert limiter.hit("b").allowed  # per client
    now[0] = 179.5
    assert limiter.hit("a").reset_s == 1
    now[0] = 180.0
    assert limiter.hit("a").allowed and limiter.hit("a").remaining == 1


def test_keys_without_trusted_proxies_ignore_forwarded_headers():
    keys = ClientKeys(())
    assert keys.key("198.51.100.7", "203.0.113.1") == "198.51.100.7"
    assert keys.key("2001:db8:1:2:3:4:5:6", None) == "2001:db8:1:2::/64"  # one /64, one client
    assert keys.key("::ffff:198.51.100.7", None) == "198.51.100.7"
    assert keys.key(None, None) == "unknown"


def test_trusted_proxies_name_the_client():
    keys = ClientKeys(("10.0.0.0/8", "2001:db8::/32"))
    assert keys.key("10.1.2.3", "198.51.100.7") == "198.51.100.7"
    # The right-most untrusted hop: a client cannot spoof by prepending entries.
    assert keys.key("10.1.2.3", "1.2.3.4, 198.51.100.7, 10.9.9.9") == "198.51.100.7"
    assert keys.key("10.1.2.3", "198.51.100.7:5555") == "198.51.100.7"
    assert keys.key("10.1.2.3", "[2001:db9::1]:443") == "2001:db9::/64"
    assert keys.key("10.1.2.3", None) is None  # the proxy itself: not limited
    assert keys.key("10.1.2.3", "10.0.0.1") is None
    assert keys.key("198.51.100.9", "10.1.2.3") == "198.51.100.9"  # not a trusted peer


def test_client_keys_are_remembered_for_one_window_only_and_in_a_bounded_table(monkeypatch):
    """A client's key is made once a window from its (peer, X-Forwarded-For) and dropped with
    the window's counts, so no address outlives its window; the table is emptied whole when
    it is full (X-Forwarded-For is client-chosen text)."""
    from indexium_api import ratelimit

    made = []

    class Counting(ClientKeys):
        def key(self, peer, forwarded_for):
            made.append((peer, forwarded_for))
            return super().key(peer, forwarded_for)

    now = [120.0]
    keys, limiter = Counting(("10.0.0.0/8",)), RateLimiter(100, clock=lambda: now[0])
    limiter.hit("198.51.100.7")  # the window starts
    for _ in range(3):
        assert limiter.key(keys, "198.51.100.7", None) == "198.51.100.7"
        assert limiter.key(keys, "10.1.2.3", None) is None  # remembered too: a proxy naming no client
        assert limiter.key(keys, "10.1.2.3", "203.0.113.5") == "203.0.113.5"
        limiter.hit("198.51.100.7")
    assert len(made) == 3
    now[0] = 180.0  # the next window: the table went with the counts
    limiter.hit("198.51.100.7")
    assert limiter._keys == {}
    assert limiter.key(keys, "198.51.100.7", None) == "198.51.100.7" and len(made) == 4
    monkeypatch.setattr(ratelimit, "KEYS_MAX", 2)
    limiter.key(keys, "10.1.2.3", "203.0.113.6")
    limiter.key(keys, "10.1.2.3", "203.0.113.7")  # full: emptied, then this one kept
    assert list(limiter._keys) == [("10.1.2.3", "203.0.113.7")]
