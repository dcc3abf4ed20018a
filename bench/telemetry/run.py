"""Telemetry benchmark: accepted pings/s per process beside a bare aiohttp handler, and aggregation time.

    python bench/telemetry/run.py [--seconds 8] [--concurrency 64] [--pings 1000000] [--mods 5000]
    python -m bench.telemetry  (same options)

HTTP: one telemetry process (role ``http``: validation, salt, KV rate limit, JetStream
publish with PubAck) and one bare aiohttp process (reads the body, answers 202) are
started side by side on the same machine, NATS and PostgreSQL; the same load generator
posts the same plain-JSON pings (20 mods each, every one from a new server so every ping
is *accepted*) to each in turn for ``--seconds``. The ratio's target is >= 0.3 (the
row in docs/telemetry.md and bench/README.md). Beside it: each process's CPU per accepted
ping (utime + stime) and their ratio ("by CPU"), which other work on the machine moves much
less than the wall ratio, and the embedded NATS server's CPU per accepted ping.

Aggregation: ``--pings`` ping rows for one UTC day, across ``--mods`` mods, loaded with
COPY, then ``aggregate_day`` (distinct servers + breakdowns, the hourly job's unit of
work) timed. Two shapes with the same number of (server, mod) observations: one mod per
ping (``--pings`` rows), and 10 mods per ping (``--pings / 10`` rows).

Embedded NATS and PostgreSQL unless NATS_URL / DATABASE_URL are set. Not part of
``make test``; figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import asyncpg

SLUGS_PER_PING = 20
DAY = date(2025, 3, 14)


# ---- the bare baseline server (run as a child process) ------------------------------------

def bare_server(port: int) -> None:
    from aiohttp import web

    async def handler(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"status": "accepted"}, status=202)

    app = web.Application()
    app.router.add_post("/api/v1/analytics/submit", handler)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# ---- infrastructure ------------------------------------------------------------------------

class Infra:
    def __init__(self, root: Path):
        self.root, self.nats, self.pg = root, None, None
        self.nats_url = os.environ.get("NATS_URL")
        self.database_url = os.environ.get("DATABASE_URL")

    async def __aenter__(self) -> "Infra":
        from indexium_devstack.embedded import EmbeddedNats, EmbeddedPostgres

        if not self.nats_url:
            self.nats = EmbeddedNats(self.root / "nats").start()
            self.nats_url = self.nats.url
        if not self.database_url:
            self.pg = EmbeddedPostgres(self.root / "pg", durable=False).start()
            admin = await asyncpg.connect(self.pg.dsn("postgres"))
            await admin.execute("CREATE DATABASE indexium_bench")
            await admin.close()
            self.database_url = self.pg.dsn("indexium_bench")
        await self._setup()
        return self

    async def _setup(self) -> None:
        import nats

        from indexium_db import migrate
        from indexium_platform import natsutil

        conn = await asyncpg.connect(self.database_url)
        await migrate.migrate(conn)
        await conn.close()
        nc = await nats.connect(self.nats_url)
        await natsutil.ensure_all(nc.jetstream())
        await nc.drain()

    async def __aexit__(self, *exc) -> None:
        if self.nats:
            self.nats.stop()
        if self.pg:
            self.pg.stop()


async def seed_mods(database_url: str, n: int) -> list[uuid.UUID]:
    from indexium_db.queries import samples as samples_q

    conn = await asyncpg.connect(database_url)
    try:
        existing = await samples_q.mod_ids_with_prefix(conn, "bench-mod-")
        if len(existing) >= n:
            return existing[:n]
        ids = await samples_q.seed_mods(conn, [f"bench-mod-{i:05d}" for i in range(n)], offset=500_000)
        return list(ids.values())
    finally:
        await conn.close()


# ---- HTTP throughput -----------------------------------------------------------------------

def make_bodies(count: int, n_mods: int) -> list[bytes]:
    from indexium_devstack import telemetry_samples as samples

    rng = random.Random(1)
    return [samples.encode(samples.ping(uuid.uuid4(), mods=[
        {"slug": f"bench-mod-{m:05d}", "version": "1.0.0"} for m in rng.sample(range(n_mods), SLUGS_PER_PING)]))
        for _ in range(count)]


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user + system), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def load(url: str, bodies: list[bytes], seconds: float, concurrency: int,
               pid: int) -> tuple[float, dict, float]:
    """(accepted/s, statuses, the server's CPU µs per accepted ping)."""
    import aiohttp

    statuses: dict[int, int] = {}
    it = iter(bodies)
    deadline = time.perf_counter() + seconds
    headers = {"Content-Type": "application/json"}

    async def worker(http):
        while time.perf_counter() < deadline:
            body = next(it, None)
            if body is None:
                return
            async with http.post(url, data=body, headers=headers) as r:
                await r.read()
                statuses[r.status] = statuses.get(r.status, 0) + 1

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as http:
        # Warm up (connections, salt, first KV writes) before the clock starts.
        for body in bodies[-concurrency:]:
            async with http.post(url, data=body, headers=headers) as r:
                await r.read()
        started, cpu_started = time.perf_counter(), cpu_seconds(pid)
        deadline = started + seconds
        await asyncio.gather(*(worker(http) for _ in range(concurrency)))
        elapsed, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu_started
    accepted = statuses.get(202, 0)
    return accepted / elapsed, statuses, cpu / max(1, accepted) * 1e6


async def bench_http(infra: Infra, args) -> None:
    from indexium_devstack.embedded import free_port, wait_for_port
    from indexium_devstack.procs import BY_NAME, ServiceProcess

    await seed_mods(infra.database_url, args.mods)
    env = {"NATS_URL": infra.nats_url, "DATABASE_URL": infra.database_url, "INDEXIUM_LOG_FORMAT": "json",
           "INDEXIUM_LOG_LEVEL": "warning", "INDEXIUM_TELEMETRY_ROLES": "http",
           # Every ping comes from a new server on loopback: the per-network cap still does its
           # bookkeeping for each one, but must not refuse them.
           "INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR": "100000000"}
    telemetry = ServiceProcess(BY_NAME["telemetry"], port=free_port(), env=env,
                               log_path=infra.root / "telemetry.log").start()
    bare_port = free_port()
    import subprocess
    bare = subprocess.Popen([sys.executable, __file__, "--bare-server", str(bare_port)])
    try:
        await asyncio.to_thread(telemetry.wait_ready)
        wait_for_port(bare_port, bare, "bare server")
        bodies = make_bodies(int(args.seconds * 12_000) + args.concurrency, args.mods)
        half = len(bodies) // 2
        bare_rate, bare_st, bare_cpu = await load(f"http://127.0.0.1:{bare_port}/api/v1/analytics/submit",
                                                  bodies[:half], args.seconds, args.concurrency, bare.pid)
        nats_pid = infra.nats.proc.pid if infra.nats else None  # an external NATS: not ours to read
        nats_started = cpu_seconds(nats_pid) if nats_pid else 0.0
        profiler = None
        if args.profile:
            # py-spy samples the telemetry process during its run only (not the warm-up's salt fetch).
            profiler = subprocess.Popen([args.py_spy, "record", "--pid", str(telemetry.proc.pid), "--rate", "200",
                                         "--format", args.profile_format, "--output", args.profile,
                                         "--duration", str(int(args.seconds) + 1)],
                                        stdout=subprocess.DEVNULL)
        tel_rate, tel_st, tel_cpu = await load(f"{telemetry.url}/api/v1/analytics/submit",
                                               bodies[half:], args.seconds, args.concurrency,
                                               telemetry.proc.pid)
        nats_cpu = (cpu_seconds(nats_pid) - nats_started) / max(1, tel_st.get(202, 0)) * 1e6 if nats_pid else None
        if profiler is not None:
            profiler.wait(60)
    finally:
        telemetry.stop(10)
        bare.terminate()
        bare.wait(10)
    print(f"HTTP ({args.seconds:.0f} s each, concurrency {args.concurrency}, {SLUGS_PER_PING} mods/ping, "
          f"plain JSON, every ping from a new server)")
    # The wall ratio moves with whatever else the machine runs; the CPU each process spends per
    # accepted ping does much less (the telemetry figure leaves out NATS's own CPU).
    print(f"  bare aiohttp handler : {bare_rate:8.0f} accepted/s  {bare_cpu:6.0f} µs CPU/ping  {bare_st}")
    print(f"  telemetry (http role): {tel_rate:8.0f} accepted/s  {tel_cpu:6.0f} µs CPU/ping  {tel_st}")
    print(f"  ratio                : {tel_rate / bare_rate:8.2f}  (by CPU {bare_cpu / tel_cpu:.2f}; target >= 0.30)")
    if nats_cpu is not None:
        # Beside it on the same cores: the two JetStream writes of every accepted ping.
        print(f"  NATS server          :                 {nats_cpu:6.0f} µs CPU/ping (embedded; during the telemetry run)")


# ---- aggregation ---------------------------------------------------------------------------

async def load_day(conn, mod_ids: list[uuid.UUID], pings: int, mods_per_ping: int) -> None:
    from indexium_db.queries import telemetry as telemetry_q

    await conn.execute(f"TRUNCATE {telemetry_q.PARENT}, mod_daily_stats, telemetry_day_writes, telemetry_day_aggregates")
    await telemetry_q.ensure_partitions(conn, [DAY])
    rng = random.Random(2)
    # Popularity is skewed like real mods: a few on most servers, a long tail on few.
    weights = list(itertools.accumulate(1 / (i + 1) for i in range(len(mod_ids))))
    servers = max(1, pings // 4)  # ~4 pings per server per day (one every ~6 h of uptime)
    start = datetime(DAY.year, DAY.month, DAY.day, tzinfo=UTC)
    gvs, loaders, javas, oss = ["1.20.1", "1.21.1", "1.19.2"], ["fabric", "neoforge", "forge"], ["17", "21"], [
        "linux", "windows"]

    def rows():
        for i in range(pings):
            s = rng.randrange(servers)
            chosen = list(dict.fromkeys(rng.choices(mod_ids, cum_weights=weights, k=mods_per_ping)))
            yield (start + timedelta(microseconds=rng.randrange(86_400_000_000)), uuid.uuid4(),
                   s.to_bytes(32, "big"), chosen, [f"1.{rng.randrange(5)}" for _ in chosen],
                   gvs[s % 3], loaders[s % 3], javas[s % 2], oss[s % 2], "x86_64", 4, None, None)

    cols = ["received_at", "ping_id", "server_hash", "mod_ids", "mod_versions", "game_version", "loader",
            "java_version", "os", "arch", "core_count", "player_count", "online_mode"]
    await conn.copy_records_to_table(telemetry_q.partition_name(DAY), records=rows(), columns=cols)
    await conn.execute(f"VACUUM ANALYZE {telemetry_q.partition_name(DAY)}")


async def bench_aggregation(infra: Infra, args) -> None:
    from indexium_db.queries import telemetry as telemetry_q

    mod_ids = await seed_mods(infra.database_url, args.mods)
    conn = await asyncpg.connect(infra.database_url)
    try:
        print(f"Aggregation of one UTC day ({args.mods} mods)")
        for mods_per_ping in (1, 10):
            rows = args.pings // mods_per_ping
            t0 = time.perf_counter()
            await load_day(conn, mod_ids, rows, mods_per_ping)
            loaded = time.perf_counter() - t0
            pairs = await conn.fetchval(f"SELECT sum(cardinality(mod_ids)) FROM {telemetry_q.PARENT}")
            t0 = time.perf_counter()
            result = await telemetry_q.aggregate_day(conn, DAY)
            took = time.perf_counter() - t0
            t0 = time.perf_counter()
            await telemetry_q.aggregate_day(conn, DAY)  # the hourly re-run of an unchanged day costs the same
            again = time.perf_counter() - t0
            print(f"  {rows:>9,} pings x {mods_per_ping:>2} mods ({pairs:,} server-mod observations, "
                  f"{result['mods']} mods with servers): aggregate {took:5.2f} s, re-run {again:5.2f} s "
                  f"(load {loaded:.1f} s)  target <= 10 s")
    finally:
        await conn.close()


async def main_async(args) -> None:
    with tempfile.TemporaryDirectory(prefix="indexium-bench-") as d:
        async with Infra(Path(d)) as infra:
            if not args.skip_http:
                await bench_http(infra, args)
            if not args.skip_aggregation:
                await bench_aggregation(infra, args)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.telemetry")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--pings", type=int, default=1_000_000)
    parser.add_argument("--mods", type=int, default=5_000)
    parser.add_argument("--skip-http", action="store_true")
    parser.add_argument("--skip-aggregation", action="store_true")
    parser.add_argument("--profile", metavar="FILE",
                        help="py-spy record the telemetry process during its run into FILE (CPU figures then include py-spy's pauses)")
    parser.add_argument("--profile-format", default="raw", choices=("raw", "speedscope", "flamegraph"))
    parser.add_argument("--py-spy", default="py-spy", help="the py-spy executable for --profile")
    parser.add_argument("--bare-server", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.bare_server:
        bare_server(args.bare_server)
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
