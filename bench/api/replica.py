"""An API replica's start and memory at catalogue scale (issue 38's first two rows).

    python bench/api/replica.py [--mods 100000] [--data /tmp/searchprofile] [--seconds 60]
                                [--modes snapshot,postgresql,no-index] [--tracemalloc]

The API as a real process (``python -m indexium_api``) on searchprofile.py's seeded catalogue,
with NATS set up as the setup step does. Per mode (``snapshot``: as deployed, the search
snapshot written first by ``python -m indexium_ops search-snapshot`` (timed) and the replica started
on a node without a copy, so its fetch is in its start, then a second replica on the same node,
which maps the copy; ``postgresql``: ``INDEXIUM_API_SEARCH_SNAPSHOT=false``, the index built from
PostgreSQL; ``no-index``: ``INDEXIUM_API_SEARCH_INDEX=false``, what the rest of the process holds):

* process start -> ``/readyz`` 200 (the API serves only once its start-up index load is in, or
  its 30 s bound passed: the log's ``search_index_loaded`` line says which), and its RSS then;
* ``--seconds`` of a mixed load from this process (16 connections): cache hits on 20 hot
  searches, uncached searches (names, prefixes, facets, offsets: nearly all distinct), hash
  lookups and update checks; the response cache at its default cap;
* its RSS after (VmRSS, anonymous, peak).

In the snapshot mode, before the load: run.py's mix of distinct searches over HTTP, one at a time
(after a warm-up of other searches), beside run.py's plain FTS baseline on the same parameters
from this process: ``target: uncached search p95 at N mods`` (<= 20 ms) and its ratio (<= 0.5x),
issue 38's 1,000,000-mod search row.

``--tracemalloc``: the replica runs with ``PYTHONTRACEMALLOC=1`` and a ``sitecustomize`` of
this bench that writes a tracemalloc snapshot's top allocation sites on SIGUSR2, sent after the
load: where the replica's Python memory is (tracemalloc slows the process down and adds its own
bookkeeping: its RSS is not the replica's).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import aiohttp
import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import visibility  # noqa: E402
from timing import pct  # noqa: E402
from indexium_devstack.embedded import free_port  # noqa: E402
from indexium_devstack.procs import BY_NAME, ServiceProcess  # noqa: E402

GV_LO = [("1.20.1", "fabric"), ("1.21.1", "neoforge"), ("1.19.2", "forge"), ("1.20.4", "quilt")]
MIX = (("hit", 40), ("search", 30), ("by-hash", 15), ("update-check", 15))

SITECUSTOMIZE = '''
import os, signal, tracemalloc

def _dump(signum, frame):
    snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    current, peak = tracemalloc.get_traced_memory()
    out = os.environ["BENCH_TRACEMALLOC_OUT"]
    with open(out + ".part", "w") as f:
        f.write(f"traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f} MiB)\\n")
        for key, n in (("filename", 25), ("lineno", 40)):
            f.write(f"--- by {key}\\n")
            for stat in snap.statistics(key)[:n]:
                frame = stat.traceback[0]
                f.write(f"{stat.size / 2**20:8.1f} MiB {stat.count:9d} blocks  {frame.filename}:"
                        f"{frame.lineno if key == 'lineno' else ''}\\n")
    os.rename(out + ".part", out)

if os.environ.get("BENCH_TRACEMALLOC_OUT"):
    signal.signal(signal.SIGUSR2, _dump)
'''


def proc_status(pid: int) -> dict[str, float]:
    """VmRSS, RssAnon, RssFile, VmHWM, Pss of a process in MB, and its CPU seconds so far (cpu)."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, value = line.partition(":")
        if key == "Pss":
            out["Pss"] = int(value.split()[0]) / 1024
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    out["cpu"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


def compile_bytecode() -> float:
    """The installed packages and the workspace's sources compiled to bytecode, as the image has
    them (deploy/Dockerfile: UV_COMPILE_BYTECODE=1): a process here started with
    PYTHONDONTWRITEBYTECODE=1 and no ``__pycache__`` compiles every module it imports, ~60% of an
    API replica's start (py-spy, 2026-12-05). Seconds taken (nothing to do the second time)."""
    import compileall
    import sysconfig

    started = time.monotonic()
    root = HERE.parents[1]
    for path in (sysconfig.get_paths()["purelib"], root / "libs", root / "services"):
        compileall.compile_dir(str(path), quiet=2, workers=2)
    return time.monotonic() - started


async def cache_bytes(http, url: str) -> float | None:
    """The response cache's bytes (its gauge on /metrics), in MB."""
    async with http.get(url + "/metrics") as resp:
        for line in (await resp.text()).splitlines():
            if line.startswith("indexium_api_cache_bytes "):
                return float(line.split()[1]) / 2**20
    return None


async def sample_hashes(dsn: str) -> list[tuple[str, str]]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("""SELECT f.sha1, f.game_versions[cardinality(f.game_versions)] AS gv
            FROM version_files f TABLESAMPLE SYSTEM (5) JOIN mod_versions v ON v.id = f.version_id
            WHERE v.status = 'public' AND NOT v.hidden AND f.sha1 IS NOT NULL LIMIT 3000""")
        return [(r["sha1"], r["gv"]) for r in rows]
    finally:
        await conn.close()


def requests(names: list[str], hashes: list[tuple[str, str]], rng: random.Random):
    """An endless mixed request stream: (kind, method, path, json body or None)."""
    hot = [f"/api/v1/mods?q={n.split()[-1].lower()}" for n in rng.sample(names, 20)]
    kinds, weights = zip(*MIX)
    while True:
        kind = rng.choices(kinds, weights)[0]
        if kind == "hit":
            yield kind, "GET", rng.choice(hot), None
        elif kind == "search":
            name = rng.choice(names)
            params = {"q": name if rng.random() < 0.5 else name[: max(3, len(name) - rng.randint(1, 5))],
                      "offset": str(rng.choice((0, 0, 20, 40)))}
            if rng.random() < 0.3:
                params["game_version"], params["loader"] = rng.choice(GV_LO)
            yield kind, "GET", "/api/v1/mods?" + "&".join(f"{k}={v}" for k, v in params.items()), None
        elif kind == "by-hash":
            yield kind, "GET", f"/api/v1/versions/by-hash/{rng.choice(hashes)[0]}", None
        else:
            h, gv = rng.choice(hashes)
            yield kind, "POST", "/api/v1/versions/update-check", {
                "hashes": [h], "loaders": ["fabric", "forge", "neoforge", "quilt"], "game_versions": [gv]}


async def uncached_searches(url: str, dsn: str, names: list[str]) -> tuple[dict[str, tuple[list[float], list[float]]], int]:
    """run.py's mix of distinct searches (full names, prefixes, typos, facets, browse), one at a
    time over HTTP, and the plain FTS baseline (run.py's) on the same parameters from this process:
    ({kind: (ours over HTTP ms, baseline ms)}, answers left out as cache hits: two parameter sets
    the API's cache key makes one, e.g. a prefix ending in a space) — the issue's 1,000,000-mod
    search row, ours p95 <= 20 ms and <= 0.5x the baseline. A warm-up of other distinct searches
    first: a replica just started has its file's pages to fault in."""
    import data
    from run import _baseline_sql, queries
    from timing import timed

    catalogue = data.Catalogue(names=names)
    mix = queries(catalogue, random.Random(11))
    warm = {k: [{**p, "limit": "19"} for p in v[:10]] for k, v in queries(catalogue, random.Random(5)).items()}
    ours, hits = {}, 0
    async with aiohttp.ClientSession() as http:
        for kind, items in [*warm.items(), *mix.items()]:  # (limit 19: never the timed mix's cache key)
            for params in items:
                elapsed, resp, _ = await timed(http, "GET", f"{url}/api/v1/mods", params=params)
                assert resp.status == 200, (params, resp.status)
                if params.get("limit") != "19":
                    if resp.headers.get("X-Cache") == "MISS":
                        ours.setdefault(kind, []).append(elapsed)
                    else:
                        hits += 1
    conn = await asyncpg.connect(dsn)
    try:
        base = {}
        for kind, items in mix.items():
            base[kind] = []
            for params in items:
                sql, args = _baseline_sql(params)
                started = time.perf_counter()
                await conn.fetch(sql, *args)
                base[kind].append((time.perf_counter() - started) * 1000)
    finally:
        await conn.close()
    return {kind: (ours.get(kind, []), base[kind]) for kind in mix}, hits


async def mixed_load(url: str, names, hashes, seconds: float, connections: int = 16) -> Counter:
    stream = requests(names, hashes, random.Random(17))
    counts: Counter = Counter()
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections)) as http:
        async def worker() -> None:
            while time.monotonic() < deadline:
                kind, method, path, body = next(stream)
                async with http.request(method, url + path, json=body) as resp:
                    await resp.read()
                    counts[(kind, resp.status)] += 1

        await asyncio.gather(*(worker() for _ in range(connections)))
    return counts


async def one(mode: str, env: dict, tmp: Path, names, hashes, seconds: float, trace: bool,
              load_timeout: float | None = None) -> dict:
    log = tmp / f"api-{mode}.log"
    extra = {"INDEXIUM_API_SEARCH_INDEX": "false"} if mode == "no-index" else {}
    if mode == "postgresql":
        extra["INDEXIUM_API_SEARCH_SNAPSHOT"] = "false"
    extra["INDEXIUM_API_SEARCH_SNAPSHOT_DIR"] = str(tmp / "node")
    if load_timeout is not None:  # ready means the index is in, however long its load takes
        extra["INDEXIUM_API_SEARCH_INDEX_LOAD_TIMEOUT_SECONDS"] = str(load_timeout)
    if trace:
        (tmp / "site").mkdir(exist_ok=True)
        (tmp / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
        # (tracemalloc makes the load several times slower: the start-up load waits for it all)
        extra |= {"PYTHONTRACEMALLOC": "1", "PYTHONPATH": str(tmp / "site"),
                  "INDEXIUM_API_SEARCH_INDEX_LOAD_TIMEOUT_SECONDS": "900",
                  "BENCH_TRACEMALLOC_OUT": str(tmp / f"tracemalloc-{mode}.txt")}
    api = ServiceProcess(BY_NAME["api"], port=free_port(), env={**env, **extra}, log_path=log)
    started = time.monotonic()
    api.start()
    try:
        await asyncio.to_thread(api.wait_ready, 900 if trace else max(120, (load_timeout or 0) + 60))
        ready_s = time.monotonic() - started
        at_ready = proc_status(api.proc.pid)
        loaded = [json.loads(line) for line in log.read_text().splitlines() if "search_index_loaded" in line]
        async with aiohttp.ClientSession() as http:
            await visibility.subscribed(http, api.url, lambda: log.read_text()[-3000:])
        searched = await uncached_searches(api.url, env["DATABASE_URL"], names) if mode == "snapshot" else None
        counts = await mixed_load(api.url, names, hashes, seconds)
        after = proc_status(api.proc.pid)
        async with aiohttp.ClientSession() as http:
            after["cache_mb"] = await cache_bytes(http, api.url)
        traced = None
        if trace:
            api.signal(signal.SIGUSR2)
            out = tmp / f"tracemalloc-{mode}.txt"
            for _ in range(3000):  # (a snapshot of millions of blocks takes minutes)
                if out.exists():
                    break
                await asyncio.sleep(0.2)
            traced = out.read_text() if out.exists() else "no snapshot written within 600 s"
        return {"ready_s": ready_s, "at_ready": at_ready, "after": after, "counts": counts,
                "index_load_s": loaded[0].get("seconds") if loaded else None, "traced": traced,
                "loaded": loaded[0] if loaded else None, "searched": searched}
    finally:
        api.stop(30)


def write_snapshot(env: dict) -> tuple[float, str]:
    """The writer as deployed (one process, `python -m indexium_ops search-snapshot`): its wall time and line."""
    import subprocess

    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "indexium_ops", "search-snapshot"], env={**os.environ, **env},
                          capture_output=True, text=True, check=True)
    return time.monotonic() - started, done.stdout.strip().splitlines()[-1]


async def ready_only(env: dict, tmp: Path) -> tuple[float, dict, dict | None]:
    """A replica started on a node that already holds the snapshot: start -> /readyz, RSS, its load line."""
    log = tmp / "api-snapshot-again.log"
    api = ServiceProcess(BY_NAME["api"], port=free_port(), env={**env, "INDEXIUM_API_SEARCH_SNAPSHOT_DIR": str(tmp / "node")},
                         log_path=log)
    started = time.monotonic()
    api.start()
    try:
        await asyncio.to_thread(api.wait_ready, 120)
        ready_s = time.monotonic() - started
        loaded = [json.loads(line) for line in log.read_text().splitlines() if "search_index_loaded" in line]
        return ready_s, proc_status(api.proc.pid), loaded[0] if loaded else None
    finally:
        api.stop(30)


async def main(args) -> None:
    from searchprofile import seeded_with_nats

    async with seeded_with_nats(Path(args.data), args.mods, "indexium-replica-") as (pg, names, tmp, nats_url):
        dsn = pg.dsn("bench")
        hashes = await sample_hashes(dsn)
        print(f"bytecode compiled as in the image: {compile_bytecode():.1f} s", flush=True)
        env = {"DATABASE_URL": dsn, "NATS_URL": nats_url, "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0",
               "INDEXIUM_LOG_FORMAT": "json", "INDEXIUM_LOG_LEVEL": "info"}
        for mode in args.modes.split(","):
            print(f"API replica, {args.mods} mods, mode {mode} (load average before {os.getloadavg()[0]:.2f})",
                  flush=True)
            if mode == "snapshot":
                shutil.rmtree(tmp / "node", ignore_errors=True)  # (a node without a copy)
                took, line = await asyncio.to_thread(write_snapshot, env)
                print(f"  writer: {line} (process {took:.2f} s)", flush=True)
            r = await one(mode, env, tmp, names, hashes, args.seconds, args.tracemalloc, args.load_timeout)
            total = sum(r["counts"].values())
            bad = {f"{k} {s}": n for (k, s), n in sorted(r["counts"].items()) if s not in (200, 404)}
            print(f"  start -> /readyz {r['ready_s']:.2f} s, {r['at_ready']['cpu']:.2f} s of its CPU (its "
                  f"search_index_loaded: {r['index_load_s'] if r['index_load_s'] is not None else 'none'} s); RSS "
                  f"then {r['at_ready']['VmRSS']:.0f} MB (anonymous {r['at_ready']['RssAnon']:.0f})")
            print(f"  {args.seconds:.0f} s mixed load: {total} requests ({total / args.seconds:.0f}/s; "
                  + ", ".join(f"{k} {sum(n for (kk, _), n in r['counts'].items() if kk == k)}" for k, _ in MIX)
                  + (f"; not 200/404: {bad}" if bad else "") + ")")
            print(f"  RSS after {r['after']['VmRSS']:.0f} MB (anonymous {r['after']['RssAnon']:.0f}, "
                  f"file-backed {r['after']['RssFile']:.0f}; PSS {r['after']['Pss']:.0f}; peak "
                  f"{r['after']['VmHWM']:.0f}); the response cache {r['after']['cache_mb'] or 0:.1f} MB of bodies",
                  flush=True)
            if r["loaded"]:
                keep = ("source", "seconds", "fetched", "fetch_s", "caught_up", "snapshot_mb", "mods")
                print("  its search_index_loaded: " + ", ".join(f"{k} {r['loaded'][k]}" for k in keep
                                                              if k in r["loaded"]))
            if r["searched"]:
                searched, hits = r["searched"]
                print("  uncached searches over HTTP, one at a time (run.py's mix, before the load), beside the "
                      "plain FTS baseline (websearch_to_tsquery ... ORDER BY ts_rank, from this process)"
                      + (f"; {hits} left out, answered from the cache" if hits else "") + ":")
                every = {"all searches": ([x for o, _ in searched.values() for x in o],
                                          [x for _, b in searched.values() for x in b])} | searched
                for kind, (o, b) in every.items():
                    print(f"    {kind:24} ours p50 {pct(o, 50):6.1f} p95 {pct(o, 95):6.1f} ms | baseline p50 "
                          f"{pct(b, 50):6.1f} p95 {pct(b, 95):6.1f} ms | {pct(o, 95) / pct(b, 95):.2f}x")
                o, b = every["all searches"]
                print(f"target: uncached search p95 at {args.mods} mods = {pct(o, 95):.1f} ms (goal <= 20 ms)")
                print(f"target: uncached search p95 vs the fts baseline at {args.mods} mods = "
                      f"{pct(o, 95) / pct(b, 95):.2f} (goal <= 0.5)", flush=True)
            if mode == "snapshot":
                again_s, again, again_line = await ready_only(env, tmp)
                print(f"  a second replica on the same node (the file there): start -> /readyz {again_s:.2f} s "
                      f"(its load {again_line.get('seconds') if again_line else 'none'} s, fetched "
                      f"{again_line.get('fetched') if again_line else '-'}; {again['cpu']:.2f} s of its CPU); RSS "
                      f"then {again['VmRSS']:.0f} MB "
                      f"(anonymous {again['RssAnon']:.0f}, file-backed {again['RssFile']:.0f})", flush=True)
            if mode == ("snapshot" if "snapshot" in args.modes else "postgresql") and not args.tracemalloc:
                print(f"target: replica ready at {args.mods} mods = {r['ready_s']:.2f} s "
                      f"(goal <= {2 if args.mods <= 100_000 else 10} s)")
                goal = "200 MB" if args.mods <= 100_000 else "1024 MB"
                print(f"target: replica rss at {args.mods} mods = {r['after']['VmRSS']:.0f} MB (goal <= {goal})")
            if r["traced"]:
                print("  tracemalloc (the replica's Python allocations after the load, top sites):")
                print("\n".join("    " + line for line in r["traced"].splitlines()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--modes", default="snapshot,no-index")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--load-timeout", type=float, help="INDEXIUM_API_SEARCH_INDEX_LOAD_TIMEOUT_SECONDS (default: "
                        "the API's, 30 s, after which it serves without the index): at 1,000,000 mods, so that "
                        "ready means the index is in")
    asyncio.run(main(parser.parse_args()))
