"""Bench row "fairness": another address's /v2/search while one address floods the site.

One address (127.0.0.2, ``flood.py``: ``--flooders`` keep-alive connections, each asking for a
new random ``/?q=`` page as soon as its last answer came) floods an API started here with the
shipped limits (the other rows run one with the rate limit off). Another address (127.0.0.1)
sends /v2/search requests one after another, ten a second (half its rate limit), every
query one it never sent (a miss). Its p95
under the flood, as a ratio to its p95 alone measured just before in the same run (target
<= 2x; and under the flood >= 99% 2xx with p95 <= 500 ms), and what the flood got, by status.
Then the API's RSS and cache before and after the flood, and whether a hot entry is still a HIT.

Called from ``run.py`` (``await fairness.rows(env, tmp, names, seconds=..., flooders=...)``),
or alone on its own catalogue:

    python bench/api/fairness.py [--mods 100000] [--seconds 20] [--flooders 96] [--repeat 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import pct, summary  # noqa: E402

FLOOD_FROM, SEARCH_FROM = "127.0.0.2", "127.0.0.1"  # two clients on Linux's loopback
TARGET_RATIO, TARGET_P95_MS, TARGET_OK = 2.0, 500.0, 0.99
SEARCHES_PER_S = 10  # half the shipped rate limit (1,200 a minute)


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _metric(http: aiohttp.ClientSession, api: str, name: str) -> float:
    async with http.get(f"{api}/metrics") as resp:
        for line in (await resp.text()).splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


async def _searches(http: aiohttp.ClientSession, api: str, queries, seconds: float) -> tuple[list[float], int]:
    """/v2/search misses one after another, one every 1/SEARCHES_PER_S (a busy launcher or web UI,
    within its rate limit) for ``seconds``: (milliseconds of each, how many were 2xx)."""
    ms, ok = [], 0
    started = time.perf_counter()
    deadline = started + seconds
    n = 0
    while time.perf_counter() < deadline:
        await asyncio.sleep(max(0.0, started + n / SEARCHES_PER_S - time.perf_counter()))
        n += 1
        params = next(queries)
        started_one = time.perf_counter()
        async with http.get(f"{api}/v2/search", params=params) as resp:
            await resp.read()
            ok += 200 <= resp.status < 300
            assert resp.status != 200 or resp.headers.get("X-Cache") == "MISS", (params, resp.headers.get("X-Cache"))
        ms.append((time.perf_counter() - started_one) * 1000)
    return ms, ok


def _queries(names: list[str]):
    """Searches a launcher sends, never the same twice: a name, or a name with a loader and a game version."""
    rng = random.Random(33)
    pairs = [("1.20.1", "fabric"), ("1.21.1", "neoforge"), ("1.19.2", "forge"), ("1.20.4", "quilt")]
    seen = set()
    for name in rng.sample(names, len(names)):
        if name in seen:
            continue
        seen.add(name)
        if rng.random() < 0.5:
            yield {"query": name}
        else:
            gv, lo = rng.choice(pairs)
            yield {"query": name, "facets": json.dumps([[f"categories:{lo}"], [f"versions:{gv}"]])}


async def rows(env: dict, tmp: Path, names: list[str], *, seconds: float, flooders: int,
               flood_path: str = "/?q=") -> list[str]:
    from indexium_devstack.embedded import free_port  # noqa: PLC0415 - the caller put the workspace on the path
    from indexium_devstack.procs import BY_NAME, ServiceProcess  # noqa: PLC0415

    import visibility  # noqa: PLC0415

    # The shipped limits: no INDEXIUM_API_RATE_LIMIT_* from the bench's environment.
    api_env = {k: v for k, v in env.items() if not k.startswith(("INDEXIUM_API_RATE_LIMIT", "INDEXIUM_API_CLIENT_"))}
    proc = ServiceProcess(BY_NAME["api"], port=free_port(), env=api_env, log_path=tmp / "api-fair.log").start()
    try:
        await asyncio.to_thread(proc.wait_ready, 60)
        api = proc.url
        connector = aiohttp.TCPConnector(local_addr=(SEARCH_FROM, 0), limit=1)
        async with aiohttp.ClientSession(connector=connector) as http:
            await visibility.subscribed(http, api, lambda: (tmp / "api-fair.log").read_text()[-3000:])
            hot = {"query": names[0].split()[-1].lower(), "limit": "20"}
            for _ in range(2):
                async with http.get(f"{api}/v2/search", params=hot) as resp:
                    assert resp.status == 200 and (await resp.read())
            queries = _queries(names)
            await _searches(http, api, queries, 2.0)  # warm-up: connections, the search index's words
            alone, alone_ok = await _searches(http, api, queries, seconds)
            rss_before = _rss_mb(proc.proc.pid)
            flood = await asyncio.create_subprocess_exec(
                sys.executable, str(HERE / "flood.py"), SEARCH_FROM, str(proc.port), str(seconds + 2),
                str(flooders), FLOOD_FROM, flood_path, stdout=subprocess.PIPE)
            await asyncio.sleep(1.0)  # the flood under way (past its first burst)
            flooded, flooded_ok = await _searches(http, api, queries, seconds)
            out, _ = await flood.communicate()
            flood_result = json.loads(out)
            rss_after = _rss_mb(proc.proc.pid)
            cache_mb = await _metric(http, api, "indexium_api_cache_bytes") / 2**20
            entries = await _metric(http, api, "indexium_api_cache_entries")
            async with http.get(f"{api}/v2/search", params=hot) as resp:
                hot_state = resp.headers.get("X-Cache")
    finally:
        proc.stop(30)
    ratio = pct(flooded, 95) / pct(alone, 95)
    by_status = ", ".join(f"{s} {n:,}" for s, n in sorted(flood_result["status"].items(), key=lambda x: -x[1]))
    return [
        f"\nfairness: {FLOOD_FROM} floods random site pages ({flood_path}..., {flooders} connections, flood.py) while "
        f"{SEARCH_FROM} sends /v2/search misses one after another; the API with its shipped limits:",
        f"  {'/v2/search alone':28} {summary(alone)}  2xx {alone_ok / len(alone):.1%}",
        f"  {'/v2/search under the flood':28} {summary(flooded)}  2xx {flooded_ok / len(flooded):.1%}",
        f"  p95 under the flood / alone: {ratio:.2f}x (target <= {TARGET_RATIO:g}x; under the flood p95 <= "
        f"{TARGET_P95_MS:g} ms and >= {TARGET_OK:.0%} 2xx)",
        f"  the flood: {flood_result['answered']:,} answers ({flood_result['per_s']:.0f}/s): {by_status}; "
        f"connections reopened {flood_result['reopened']}",
        f"  API RSS {rss_before:.0f} -> {rss_after:.0f} MB over the flood; cache {cache_mb:.1f} MB in "
        f"{entries:.0f} entries; the hot search afterwards: {hot_state}",
    ]


async def main(args) -> None:
    import run  # noqa: PLC0415 - the bench's own helpers (catalogue loader, say)
    from indexium_devstack.embedded import throwaway  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="indexium-bench-fair-") as d:
        tmp = Path(d)
        async with throwaway(tmp) as servers:
            catalogue = await run.load_catalogue(servers.dsn, args.mods)
            env = {"DATABASE_URL": servers.dsn, "NATS_URL": servers.nats_url, "INDEXIUM_LOG_FORMAT": "json"}
            for _ in range(args.repeat):
                run.say(f"\n{time.strftime('%H:%M', time.gmtime())} UTC")
                for line in await rows(env, tmp, catalogue.names, seconds=args.seconds, flooders=args.flooders,
                                       flood_path=args.flood_path):
                    run.say(line)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--flooders", type=int, default=96)
    parser.add_argument("--flood-path", default="/?q=", help="what each flood request asks for, a random word appended")
    parser.add_argument("--repeat", type=int, default=1, help="the row this many times on one catalogue")
    asyncio.run(main(parser.parse_args()))
