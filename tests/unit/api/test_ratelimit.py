"""Rate limiting: the token bucket, and which address is limited behind trusted proxies."""

from indexium_api.core.ratelimit import ClientKeys, RateLimiter


def test_a_bucket_lets_a_burst_through_then_the_rate_and_refills():
    now = [120.0]
    limiter = RateLimiter(60, 3, clock=lambda: now[0])  # one a second, three at once
    verdicts = [limiter.hit("a") for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert [v.remaining for v in verdicts] == [2, 1, 0, 0]
    assert [v.reset_s for v in verdicts] == [1, 2, 3, 1]  # full again in n s; the refused one: retry in 1 s
    assert verdicts[0].limit == 60
    assert limiter.hit("b").allowed  # per client
    now[0] += 1.0  # one token back, not a whole window
    assert limiter.hit("a").allowed and not limiter.hit("a").allowed
    now[0] += 10.0  # full again: three at once, never more
    assert [limiter.hit("a").allowed for _ in range(4)] == [True, True, True, False]


def test_a_flood_gets_the_rate_not_a_windows_worth_at_its_start():
    """A fixed window gave a client its whole minute at once at every boundary; the bucket
    gives a client sending as fast as it can its burst, then per_minute/60 a second."""
    now = [1000.0]
    limiter = RateLimiter(1200, 120, clock=lambda: now[0])
    allowed = 0
    for _ in range(60 * 100):  # 100 requests every 10 ms for a minute
        allowed += limiter.hit("flood").allowed
        now[0] += 0.01
    assert 120 + 1200 - 2 <= allowed <= 120 + 1200 + 1


def test_clients_are_forgotten_once_their_bucket_is_full_again():
    from indexium_api.core import ratelimit

    now = [1000.0]
    limiter = RateLimiter(60, 5, clock=lambda: now[0])
    for key in ("a", "b", "c"):
        limiter.hit(key)
    now[0] += 1.5
    limiter.hit("c")
    assert len(limiter) == 3
    now[0] += ratelimit.SWEEP_S  # a sweep: a and b are full again, c too by now
    limiter.hit("d")
    assert len(limiter) == 1 and set(limiter._full_at) == {"d"}


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


def test_client_keys_are_remembered_until_the_next_sweep_and_in_a_bounded_table(monkeypatch):
    """A client's key is made once a sweep from its (peer, X-Forwarded-For) and the table is
    emptied at every sweep, so no address outlives it; it is emptied whole when it is full
    (X-Forwarded-For is client-chosen text)."""
    from indexium_api.core import ratelimit

    made = []

    class Counting(ClientKeys):
        def make(self, peer, forwarded_for):
            made.append((peer, forwarded_for))
            return super().make(peer, forwarded_for)

    now = [120.0]
    keys = Counting(("10.0.0.0/8",), clock=lambda: now[0])
    for _ in range(3):
        assert keys.key("198.51.100.7", None) == "198.51.100.7"
        assert keys.key("10.1.2.3", None) is None  # remembered too: a proxy naming no client
        assert keys.key("10.1.2.3", "203.0.113.5") == "203.0.113.5"
    assert len(made) == 3
    now[0] += ratelimit.SWEEP_S  # the next sweep: the table is emptied
    assert keys.key("198.51.100.7", None) == "198.51.100.7" and len(made) == 4
    assert list(keys._made) == [("198.51.100.7", None)]
    monkeypatch.setattr(ratelimit, "KEYS_MAX", 2)
    keys.key("10.1.2.3", "203.0.113.6")
    keys.key("10.1.2.3", "203.0.113.7")  # full: emptied, then this one kept
    assert list(keys._made) == [("10.1.2.3", "203.0.113.7")]


async def test_held_refusals_are_answered_spread_over_half_to_one_and_a_half_pauses():
    """A flood's connections refused together must not all come back together (the requests of
    theirs that pass would be computed in the same few milliseconds every second)."""
    import asyncio

    from indexium_api.core.ratelimit import Tarpit

    tarpit = Tarpit(0.2, per_client=100, total=100)
    loop = asyncio.get_running_loop()
    started = loop.time()

    async def refused():
        assert tarpit.hold("flood")
        try:
            await tarpit.answer_later("flood", LookupError("429"))
        except LookupError:
            return loop.time() - started

    took = await asyncio.gather(*(refused() for _ in range(30)))
    assert 0.09 <= min(took) and max(took) <= 0.4 and max(took) - min(took) > 0.05
    assert len(tarpit) == 0
