"""Two telemetry processes on one JetStream and one PostgreSQL: the cross-replica rate limit,
the whole pipeline to mod_daily_stats, and no client address anywhere it could be kept."""

from __future__ import annotations

import asyncio
import uuid

import aiohttp
import nats
import pytest

from indexium_contracts import telemetry
from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_devstack import telemetry_samples as samples

CLIENT_ADDR = "127.0.0.2"  # the source address our requests come from (loopback alias)
FORWARDED = "203.0.113.77"  # what a proxy would say the client is
PRIVATE_HEADERS = {"X-Forwarded-For": FORWARDED, "X-Real-IP": FORWARDED,
                   "Forwarded": f"for={FORWARDED};proto=https", "Content-Type": "application/json"}


@pytest.fixture
async def processes(nats_url, database_url, mods, tmp_path):
    # A 3 s window and a 3 s qualifying span stand for 15 and 25 minutes: every server pings
    # twice, 3 s apart, so it counts for the day.
    common = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_LOG_FORMAT": "json",
              "INDEXIUM_LOG_LEVEL": "debug", "INDEXIUM_SHUTDOWN_GRACE_SECONDS": "5",
              "INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS": "3", "INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS": "3"}
    spec = BY_NAME["telemetry"]
    a = ServiceProcess(spec, port=free_port(), log_path=tmp_path / "a.log", env={
        **common, "INDEXIUM_TELEMETRY_ROLES": "http,writer,aggregator",
        "INDEXIUM_TELEMETRY_WRITER_WAIT_SECONDS": "0.2",
        "INDEXIUM_TELEMETRY_AGGREGATE_INTERVAL_SECONDS": "0.5"}).start()
    b = ServiceProcess(spec, port=free_port(), log_path=tmp_path / "b.log",
                       env={**common, "INDEXIUM_TELEMETRY_ROLES": "http"}).start()
    try:
        await asyncio.gather(asyncio.to_thread(a.wait_ready), asyncio.to_thread(b.wait_ready))
        yield a, b
    finally:
        a.stop(10)
        b.stop(10)


async def until(predicate, timeout=15.0):
    for _ in range(int(timeout / 0.1)):
        if await predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("condition not met in time")


async def test_two_processes_rate_limit_write_aggregate_and_keep_no_address(processes, db, mods, nats_url):
    a, b = processes
    connector = aiohttp.TCPConnector(local_addr=(CLIENT_ADDR, 0))
    async with aiohttp.ClientSession(connector=connector) as http:
        async def post(proc, body):
            async with http.post(f"{proc.url}/api/v1/analytics/submit", data=samples.encode(body),
                                 headers=PRIVATE_HEADERS) as r:
                return r.status, r.headers.get("Retry-After")

        # One server racing through both replicas at once: exactly one ping is accepted.
        hot = uuid.uuid4()
        results = await asyncio.gather(*(post(p, samples.ping(hot)) for p in [a, b] * 6))
        assert sorted(s for s, _ in results) == [202] + [429] * 11
        assert all(1 <= int(ra) <= 900 for s, ra in results if s == 429)
        # Later pings of that server are refused by either replica; other servers are fine.
        assert (await post(b, samples.ping(hot)))[0] == 429
        servers = [uuid.uuid4() for _ in range(20)]
        statuses = await asyncio.gather(*(post([a, b][i % 2], samples.ping(s, mods=[
            {"slug": "sodium", "version": "0.5.8"}, {"slug": "jei"}, {"slug": "unknown-mod"}]))
            for i, s in enumerate(servers)))
        assert [s for s, _ in statuses] == [202] * 20
        await asyncio.sleep(4.5)  # the window closes (KV TTLs expire to the second); each server's second ping
        again = await asyncio.gather(*(post([b, a][i % 2], samples.ping(s, mods=[
            {"slug": "sodium", "version": "0.5.8"}, {"slug": "jei"}]))
            for i, s in enumerate([*servers, hot])))
        assert [s for s, _ in again] == [202] * 21
        metrics = {p: await (await http.get(f"{p.url}/metrics")).text() for p in (a, b)}

    # Malformed HTTP (aiohttp answers it itself and logs "Error handling request from <peer>"),
    # and a client hanging up mid-upload: still no address in any log line.
    for raw in (b"POST /api/v1/analytics/submit HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
                b"POST /api/v1/analytics/submit HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"a\":"):
        reader, writer = await asyncio.open_connection(*a.url.removeprefix("http://").split(":"),
                                                       local_addr=(CLIENT_ADDR, 0))
        writer.write(raw)
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()

    # The writer (process a) stores 42 pings; its aggregator turns them into daily stats.
    await until(lambda: _eq(db.fetchval("SELECT count(*) FROM mod_telemetry_pings"), 42))
    await until(lambda: _eq(db.fetchval(
        "SELECT servers FROM mod_daily_stats WHERE mod_id = $1", mods["sodium"]), 21))
    assert await db.fetchval("SELECT servers FROM mod_daily_stats WHERE mod_id = $1", mods["jei"]) == 21

    assert a.stop(10) == 0 and b.stop(10) == 0  # SIGTERM: a clean, drained exit
    logs = (a.log_path.read_text() + b.log_path.read_text())
    tables = [await db.fetch(f"SELECT * FROM {t}") for t in (
        "mod_telemetry_pings", "mod_daily_stats", "telemetry_day_writes", "telemetry_day_aggregates",
        "dead_letters")]
    dump = repr(tables) + "".join(bytes(r["server_hash"]).hex() for r in tables[0])
    stream = await stream_dump(nats_url)
    assert '"route": "/api/v1/analytics/submit"' in logs.replace('"route":"', '"route": "')
    for secret in (CLIENT_ADDR, FORWARDED, str(hot), *(str(s) for s in servers)):
        for where, text in (("logs", logs), ("tables", dump), ("stream", stream),
                            ("metrics", "".join(metrics.values()))):
            assert secret not in text, f"{secret} found in {where}"


async def stream_dump(nats_url: str) -> str:
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    out = []
    for name in (telemetry.STREAM.name, f"KV_{telemetry.RATE_LIMIT.name}", f"KV_{telemetry.SALTS.name}"):
        info = await js.stream_info(name)
        for seq in range(info.state.first_seq, info.state.last_seq + 1) if info.state.messages else ():
            try:
                msg = await js.get_msg(name, seq)
            except Exception:
                continue  # expired or purged meanwhile
            out.append(repr(msg.subject) + repr(msg.data) + repr(msg.headers))
    await nc.drain()
    return "".join(out)


async def _eq(awaitable, expected) -> bool:
    return await awaitable == expected
