"""The response cache: TTL, single-flight, stale-while-revalidate, generations, stale-if-error, size bound."""

import asyncio

import pytest

from indexium_api.core.cache import COALESCED, HIT, MISS, STALE, Cache, Unavailable


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def make(clock, **kw):
    return Cache(max_bytes=kw.pop("max_bytes", 10_000), stale_s=kw.pop("stale_s", 30),
                 stale_if_error_s=kw.pop("stale_if_error_s", 3600), clock=clock, sizeof=lambda v: 100)


class Source:
    def __init__(self, delay=0.0):
        self.calls, self.value, self.delay, self.fail = 0, "v1", delay, False

    async def __call__(self):
        self.calls += 1
        value = self.value  # what the database held when the query ran
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail:
            raise Unavailable("down")
        return value


async def test_hit_within_ttl_then_stale_while_revalidate_then_miss():
    clock, src = Clock(), Source()
    cache = make(clock)
    assert await cache.get("k", ("t",), 60, src) == ("v1", MISS)
    assert await cache.get("k", ("t",), 60, src) == ("v1", HIT)
    src.value = "v2"
    clock.now += 61
    assert await cache.get("k", ("t",), 60, src) == ("v1", STALE)  # served stale, refresh started
    await asyncio.sleep(0)
    assert await cache.get("k", ("t",), 60, src) == ("v2", HIT)
    assert src.calls == 2
    clock.now += 60 + 31  # beyond the stale window: a plain miss
    src.value = "v3"
    assert await cache.get("k", ("t",), 60, src) == ("v3", MISS)


async def test_single_flight_computes_a_cold_key_once():
    cache, src = make(Clock()), Source(delay=0.02)
    results = await asyncio.gather(*(cache.get("k", (), 60, src) for _ in range(50)))
    assert src.calls == 1
    assert sorted(state for _, state in results) == [COALESCED] * 49 + [MISS]


async def test_invalidating_a_tag_drops_only_its_entries():
    cache, a, b = make(Clock()), Source(), Source()
    await cache.get("a", ("global", "mod:a"), 60, a)
    await cache.get("b", ("mod:b",), 60, b)
    cache.invalidate("mod:a")
    assert (await cache.get("a", ("global", "mod:a"), 60, a))[1] == MISS
    assert (await cache.get("b", ("mod:b",), 60, b))[1] == HIT
    cache.invalidate_all()
    assert (await cache.get("b", ("mod:b",), 60, b))[1] == MISS


async def test_a_computation_racing_an_invalidation_is_not_served_as_fresh():
    cache, src = make(Clock()), Source(delay=0.05)
    slow = asyncio.create_task(cache.get("k", ("t",), 60, src))  # reads the old data...
    await asyncio.sleep(0.01)
    cache.invalidate("t")  # ...while the new data is committed and announced
    src.value, src.delay = "fresh", 0
    # A request after the event does not join the pre-event flight.
    assert await cache.get("k", ("t",), 60, src) == ("fresh", MISS)
    assert (await slow)[0] == "v1"
    assert await cache.get("k", ("t",), 60, src) == ("fresh", HIT)  # the late old result did not win


async def test_stale_if_error_serves_even_invalidated_entries_when_the_source_is_down():
    clock, src = Clock(), Source()
    cache = make(clock, stale_s=0)
    await cache.get("k", ("t",), 60, src)
    cache.invalidate("t")
    clock.now += 600
    src.fail = True
    assert await cache.get("k", ("t",), 60, src) == ("v1", STALE)
    with pytest.raises(Unavailable):
        await cache.get("other", (), 60, src)
    clock.now += 3600
    with pytest.raises(Unavailable):  # too old even for an outage
        await cache.get("k", ("t",), 60, src)


async def test_a_failed_background_refresh_keeps_the_stale_entry():
    clock, src = Clock(), Source()
    cache = make(clock)
    await cache.get("k", (), 60, src)
    clock.now += 70
    src.fail = True
    assert await cache.get("k", (), 60, src) == ("v1", STALE)
    await asyncio.sleep(0)
    assert await cache.get("k", (), 60, src) == ("v1", STALE)


async def test_least_recently_used_entries_leave_when_over_the_byte_budget():
    cache = make(Clock(), max_bytes=300)
    for key in "abc":
        await cache.get(key, (), 60, Source())
    await cache.get("a", (), 60, Source())  # touch a
    assert (await cache.get("d", (), 60, Source()))[1] == MISS  # asked once: b holds its place
    assert len(cache) == 3 and cache.refused == 1
    await cache.get("d", (), 60, Source())  # asked twice: more than b (stored, never hit) was
    assert len(cache) == 3 and cache.bytes == 300
    assert (await cache.get("d", (), 60, Source()))[1] == HIT
    assert (await cache.get("b", (), 60, Source()))[1] == MISS  # b was the least recently used
    assert (await cache.get("a", (), 60, Source()))[1] == HIT


async def test_a_flood_of_keys_asked_for_once_cannot_push_out_the_hot_entries():
    """The probe: 80,000 random pages pushed every hot entry out of a full cache. Now a full
    cache keeps its entries against keys asked for once (or as often as they were), stays
    within its byte budget, and still takes in a key asked for more often than its oldest entry."""
    clock = Clock()
    cache = make(clock, max_bytes=100 * 100)  # 100 entries of 100 bytes
    hot = [f"hot{i}" for i in range(100)]
    for key in hot:
        await cache.get(key, (), 600, Source())
    for rounds in range(3):
        for key in hot:
            assert (await cache.get(key, (), 600, Source()))[1] == HIT
    for i in range(80_000):
        await cache.get(("page", i), (), 600, Source())
        if i % 8000 == 0:  # the hot entries go on being asked for, now and then
            for key in hot[:10]:
                cache.fresh(key, ())
    assert cache.bytes <= 100 * 100 and len(cache) == 100
    assert all(key in cache for key in hot)
    assert cache.refused == 80_000
    newcomer = ("page", "new")
    for _ in range(5):  # asked for five times: more than the oldest hot entry (3 hits and its miss)
        await cache.get(newcomer, (), 600, Source())
    assert newcomer in cache and "hot10" not in cache  # the oldest of the hot entries made way
    clock.now += 600 + 3600  # the oldest is past its TTL and its stale-if-error window: it goes
    for _ in range(2):
        await cache.get(("page", "later"), (), 600, Source())
    assert ("page", "later") in cache


async def test_errors_other_than_unavailable_propagate_and_are_not_cached():
    cache = make(Clock())

    async def boom():
        raise ValueError("bug")

    with pytest.raises(ValueError):
        await cache.get("k", (), 60, boom)
    assert len(cache) == 0


async def test_fresh_answers_hits_only_while_the_entry_is_valid_and_young():
    clock, src = Clock(), Source()
    cache = make(clock)
    assert cache.fresh("k", ("global", "mod:a")) is None  # nothing yet
    await cache.get("k", ("global", "mod:a"), 60, src)
    assert cache.fresh("k", ("global", "mod:a")) == "v1"
    assert cache.fresh("k", ("global", "mod:a")) == "v1"  # found valid before: still valid
    cache.invalidate("mod:b")  # another tag: checked again, still valid
    assert cache.fresh("k", ("global", "mod:a")) == "v1"
    cache.invalidate("mod:a")
    assert cache.fresh("k", ("global", "mod:a")) is None
    await cache.get("k", ("global", "mod:a"), 60, src)
    assert cache.fresh("k", ("global", "mod:a")) == "v1"
    cache.invalidate_all()
    assert cache.fresh("k", ("global", "mod:a")) is None
    await cache.get("k", ("global", "mod:a"), 60, src)
    clock.now += 60  # past the TTL: stale is get()'s business, never fresh()'s
    assert cache.fresh("k", ("global", "mod:a")) is None


async def test_an_entry_computed_across_an_invalidation_is_never_fresh():
    cache, src = make(Clock()), Source(delay=0.05)
    slow = asyncio.create_task(cache.get("k", ("t",), 60, src))
    await asyncio.sleep(0.01)
    cache.invalidate("t")
    await slow  # stored with the generations from before the invalidation
    assert cache.fresh("k", ("t",)) is None
    assert cache.fresh("k", ("t",)) is None


def test_a_key_is_hashed_once_and_finds_what_its_plain_tuple_finds():
    from indexium_api.core.cache import Key

    class Part:
        hashed = 0

        def __hash__(self):
            Part.hashed += 1
            return 7

    part = Part()
    key = Key("search", part)
    assert Part.hashed == 1 and key == ("search", part) and hash(key) == hash(("search", part))
    entries = {key: "a"}
    for _ in range(3):
        assert entries[key] == "a"
    assert Part.hashed == 2  # only the plain tuple above was hashed again
    assert entries[("search", part)] == "a" and {("search", part): "b"}[key] == "b"
