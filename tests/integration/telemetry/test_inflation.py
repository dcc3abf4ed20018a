"""Inflating a mod's active servers, against real telemetry processes on real NATS + PostgreSQL:
new server ids per network are capped per hour, and a server counts for a day only once it
has pinged twice a qualifying span apart. No address is kept anywhere on the way."""

from __future__ import annotations

import asyncio
import uuid

import aiohttp
import pytest

from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_devstack import telemetry_samples as samples

from .test_two_processes import stream_dump, until

URL = "/api/v1/analytics/submit"
ATTACKER, NEIGHBOUR, OTHER_NET = "127.0.0.2", "127.0.0.77", "127.0.1.2"  # 127.0.0.0/24 twice, 127.0.1.0/24
PROXY, FORWARDED_A, FORWARDED_B = "127.0.2.1", "198.51.100.20", "198.51.100.21"


@pytest.fixture
async def procs(nats_url, database_url, mods, tmp_path):
    common = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_LOG_FORMAT": "json",
              "INDEXIUM_LOG_LEVEL": "debug", "INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR": "5",
              "INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS": "1", "INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS": "3.5"}
    # (1 s and 3.5 s stand for the 15-minute window and the 25-minute span.)
    spec = BY_NAME["telemetry"]
    direct = ServiceProcess(spec, port=free_port(), log_path=tmp_path / "direct.log", env={
        **common, "INDEXIUM_TELEMETRY_WRITER_WAIT_SECONDS": "0.2",
        "INDEXIUM_TELEMETRY_AGGREGATE_INTERVAL_SECONDS": "0.5"}).start()
    proxied = ServiceProcess(spec, port=free_port(), log_path=tmp_path / "proxied.log", env={
        **common, "INDEXIUM_TELEMETRY_ROLES": "http", "INDEXIUM_TELEMETRY_TRUSTED_PROXIES": f"{PROXY}/32"}).start()
    try:
        await asyncio.gather(asyncio.to_thread(direct.wait_ready), asyncio.to_thread(proxied.wait_ready))
        yield direct, proxied
    finally:
        direct.stop(10)
        proxied.stop(10)


async def post(proc, source: str, server: uuid.UUID, headers: dict | None = None, **ping) -> tuple[int, dict, str | None]:
    connector = aiohttp.TCPConnector(local_addr=(source, 0))
    async with aiohttp.ClientSession(connector=connector) as http:
        async with http.post(f"{proc.url}{URL}", data=samples.encode(samples.ping(server, **ping)),
                             headers={"Content-Type": "application/json", **(headers or {})}) as r:
            return r.status, await r.json(), r.headers.get("Retry-After")


async def test_new_servers_per_network_are_capped_and_a_server_counts_after_two_pings(procs, db, mods, nats_url):
    direct, proxied = procs
    sodium = mods["sodium"]
    # One network floods fresh ids: 5 per hour get in, the rest are told to come back next hour;
    # a neighbour in the same /24 shares the cap, forged X-Forwarded-For changes nothing.
    flood = [uuid.uuid4() for _ in range(12)]
    results = [await post(direct, ATTACKER if i % 2 else NEIGHBOUR, s,
                          {"X-Forwarded-For": f"203.0.113.{i}"}) for i, s in enumerate(flood)]
    assert [r[0] for r in results] == [202] * 5 + [429] * 7
    capped = results[5:]
    assert all(body["error"] == "rate_limited" and "new servers" in body["description"] for _, body, _ in capped)
    assert all(1 <= int(ra) <= 3600 for _, _, ra in capped)
    # Another /24 is not affected.
    other = [uuid.uuid4() for _ in range(3)]
    assert [(await post(direct, OTHER_NET, s))[0] for s in other] == [202] * 3
    # Behind a trusted proxy the forwarded client's network is capped, not the proxy's.
    behind = [await post(proxied, PROXY, uuid.uuid4(), {"X-Forwarded-For": FORWARDED_A if i < 6 else FORWARDED_B})
              for i in range(6)]
    assert [r[0] for r in behind] == [202] * 5 + [429]

    # The two-ping rule (span 3.5 s here): the admitted flood ids pinged once and never count,
    # except flood[0], which pings again as soon as its window allows (too soon), as does
    # other[1]; other[0] pings again 4 s after its first; other[2] never again.
    loop = asyncio.get_running_loop()
    firsts = loop.time()
    for server, source in ((flood[0], ATTACKER), (other[1], OTHER_NET)):
        assert await post_until_accepted(direct, source, server) < 3.0  # known this hour: not capped
    await asyncio.sleep(max(0.0, firsts + 4.0 - loop.time()))
    await post_until_accepted(direct, OTHER_NET, other[0])

    await until(lambda: _eq(db.fetchval("SELECT count(*) FROM mod_telemetry_pings"), 5 + 3 + 5 + 3))
    spans = await db.fetch(
        """SELECT extract(epoch FROM max(received_at) - min(received_at))::float AS span, count(*) AS n
           FROM mod_telemetry_pings GROUP BY server_hash ORDER BY span DESC""")
    assert [r["n"] for r in spans] == [2, 2, 2] + [1] * 10
    assert spans[0]["span"] >= 3.5 > spans[1]["span"] >= spans[2]["span"] > 0
    await until(lambda: _eq(db.fetchval("SELECT servers FROM mod_daily_stats WHERE mod_id = $1", sodium), 1))

    # No address, forwarded or not, in any log, metric, table or message.
    async with aiohttp.ClientSession() as http:
        metrics = "".join([await (await http.get(f"{p.url}/metrics")).text() for p in procs])
    assert 'indexium_telemetry_pings_total{outcome="new_server_capped"} 7.0' in metrics
    assert direct.stop(10) == 0 and proxied.stop(10) == 0
    logs = direct.log_path.read_text() + proxied.log_path.read_text()
    tables = repr([await db.fetch(f"SELECT * FROM {t}") for t in (
        "mod_telemetry_pings", "mod_daily_stats", "telemetry_day_writes", "telemetry_day_aggregates",
        "dead_letters")])
    stream = await stream_dump(nats_url)
    secrets = [ATTACKER, NEIGHBOUR, OTHER_NET, PROXY, FORWARDED_A, FORWARDED_B, "203.0.113.", "127.0.0.0",
               "127.0.1.0", "198.51.100.0"]
    for secret in secrets:
        for where, text in (("logs", logs), ("tables", tables), ("stream", stream), ("metrics", metrics)):
            assert secret not in text, f"{secret} found in {where}"


async def post_until_accepted(proc, source: str, server: uuid.UUID) -> float:
    """Ping again as soon as the rate-limit window allows; returns the seconds it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(50):
        status, body, _ = await post(proc, source, server)
        if status == 202:
            return loop.time() - start
        assert status == 429 and "One ping per server" in body["description"], body
        await asyncio.sleep(0.1)
    raise AssertionError("never accepted")


async def _eq(awaitable, expected) -> bool:
    return await awaitable == expected
