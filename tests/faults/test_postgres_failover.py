"""Scenario 10: PostgreSQL failover. A primary and a synchronous streaming standby; the services
know both through one multi-host DATABASE_URL with target_session_attrs=read-write (as a
CloudNativePG ``-rw`` service behaves). The primary is killed -9 mid-burst, the standby promoted."""

import asyncio
import time

import aiohttp
import pytest

from indexium_devstack.embedded import multi_host_dsn

RELEASES = 240
BEFORE_KILL = 40
# What a failover manager needs to notice the primary is gone before it promotes the standby.
DETECTION_S = 3.0


@pytest.fixture
async def pg_pair(primary_and_standby):
    primary, _ = primary_and_standby
    await asyncio.to_thread(primary.create_database, "indexium")  # waits for the standby
    return primary_and_standby


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    try:
        async with http.get(url, timeout=aiohttp.ClientTimeout(total=10)) as r:
            await r.read()
            return r.status, r.headers.get("X-Cache", "")
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        return 0, type(exc).__name__


async def test_failover_to_the_promoted_standby_loses_nothing_and_restarts_nothing(pg_pair, make_harness):
    primary, standby = pg_pair
    dsn = multi_host_dsn([primary, standby], "indexium")
    h = await make_harness(database_url_override=dsn, services={"ingest": 1, "indexer": 1, "api": 1})
    api = h.url("api") + "/api/v1"
    releases = h.make_releases(RELEASES, per_repo=10)
    first = await h.burst(releases[:BEFORE_KILL])
    assert await h.unindexed_after_waiting({s.delivery_id for s in first}, timeout=90) == set()

    async with aiohttp.ClientSession() as http:
        slugs = [r["slug"] for r in await h.query("SELECT slug FROM mods ORDER BY slug")]
        cached = [f"{api}/mods/{slugs[0]}", f"{api}/mods/{slugs[1]}/versions", f"{api}/mods?q=Mod"]
        for url in cached:  # until a HIT: a late version event may invalidate the first answer
            for _ in range(100):
                if await _get(http, url) == (200, "HIT"):
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError(f"{url} never answered from the cache")
        pids = {(p.spec.name, p.port): p.proc.pid for p in h.all_procs()}

        burst = asyncio.create_task(h.burst(releases[BEFORE_KILL:], concurrency=10))
        deadline = time.monotonic() + 120
        while len(await h.indexed_deliveries()) < BEFORE_KILL + 40 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        indexed_at_kill = len(await h.indexed_deliveries())
        await asyncio.to_thread(primary.kill9)
        killed = time.monotonic()

        # Cached answers all along: from the kill until the new primary serves uncached ones.
        probes: list[tuple[str, int, str]] = []
        stop_probing = asyncio.Event()

        async def probe_cached():
            while not stop_probing.is_set():
                for url in cached:
                    status, x_cache = await _get(http, url)
                    probes.append((url, status, x_cache))
                await asyncio.sleep(0.2)

        prober = asyncio.create_task(probe_cached())
        await asyncio.sleep(DETECTION_S)
        await asyncio.to_thread(standby.promote)
        promoted = time.monotonic()

        uncached_after = None
        for i in range(600):  # a query nobody asked before, so the answer must come from PostgreSQL
            status, _ = await _get(http, f"{api}/mods?q=failover{i}")
            if status == 200:
                uncached_after = time.monotonic() - promoted
                break
            await asyncio.sleep(0.1)
        stop_probing.set()
        await prober

        sent = await burst
        accepted = {s.delivery_id for s in first + sent if s.status == 202}
        assert len(accepted) == RELEASES, "ingest needs only NATS: every webhook is accepted"
        resumed_after = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = await h.indexed_deliveries()
            if resumed_after is None and len(done) > indexed_at_kill:
                resumed_after = time.monotonic() - promoted
            if accepted <= done:
                break
            await asyncio.sleep(0.25)
        all_indexed_after = time.monotonic() - promoted
        missing = accepted - await h.indexed_deliveries()

    bad = [p for p in probes if p[1] != 200]
    print(f"\nfailover: {RELEASES} webhooks ({indexed_at_kill} indexed at the kill); primary killed, "
          f"standby promoted {promoted - killed:.1f} s later; uncached API answers again "
          f"{uncached_after if uncached_after is None else round(uncached_after, 2)} s after the promotion; "
          f"indexing resumed after {resumed_after if resumed_after is None else round(resumed_after, 2)} s, "
          f"all indexed {all_indexed_after:.1f} s after it; cached probes {len(probes)}, non-200 {len(bad)}; "
          f"lost {len(missing)}")
    assert not bad, f"cached answers failed during the failover: {bad[:5]}"
    assert len(probes) >= 3 * len(cached)
    assert uncached_after is not None and uncached_after < 20, "uncached answers did not come back"
    assert not missing, f"{len(missing)} accepted deliveries never indexed"
    assert await h.duplicated_versions() == 0
    rows = await h.query("SELECT count(*) AS n, inet_server_port() AS port FROM mod_versions")
    assert rows[0]["n"] == RELEASES  # one version per release: nothing lost, nothing doubled
    assert rows[0]["port"] == standby.port  # the writes went to the promoted standby
    assert await h.dead_letters() == []
    assert {(p.spec.name, p.port): p.proc.pid for p in h.all_procs()} == pids  # no service restarted
    assert all(p.alive() for p in h.all_procs())
