"""API bench rows for /v2 (the Modrinth-compatible surface), run by run.py in the same run as
/api/v1's rows, against the same API process and catalogue:

  * v2 search cache-hit requests/s, as a ratio of a bare aiohttp handler returning the same
    bytes (target >= 0.6);
  * v2 uncached search latency p50/p95/p99 (target p95 <= 20 ms) by kind of query, every
    request a MISS (distinct queries; facets in Modrinth's form).
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent


def _queries(names: list[str], rng: random.Random) -> dict[str, list[dict]]:
    names = rng.sample(names, 300)
    pairs = [("1.20.1", "fabric"), ("1.21.1", "neoforge"), ("1.19.2", "forge"), ("1.20.4", "quilt")]
    out = {
        "query": [{"query": n} for n in names[:100]],
        "query + per-file facets": [
            {"query": n, "facets": json.dumps([[f"categories:{lo}"], [f"versions:{gv}"]])}
            for n, (gv, lo) in zip(names[100:180], pairs * 20)],
        "facets only, by index": [
            {"facets": json.dumps([[f"categories:{lo}"], [f"versions:{gv}"], ["project_type:mod"]]),
             "index": index, "offset": str(offset)}
            for gv, lo in pairs for index in ("downloads", "newest", "updated") for offset in (0, 10, 20, 30, 40)],
    }
    seen, unique = set(), {}
    for kind, items in out.items():
        unique[kind] = [i for i in items if not (tuple(sorted(i.items())) in seen or seen.add(tuple(sorted(i.items()))))]
    return unique


async def _timed_get(http, url: str, params: dict) -> tuple[float, int, str]:
    started = time.perf_counter()
    async with http.get(url, params=params) as resp:
        await resp.read()
        return (time.perf_counter() - started) * 1000, resp.status, resp.headers.get("X-Cache", "")


async def rows(http, api_proc, names: list[str], tmp: Path, *, seconds: float, connections: int, alternating,
               summary) -> list[str]:
    """The v2 lines to print; ``alternating``/``summary`` are run.py's, so v1 and v2 rows are measured alike."""
    api = api_proc.url
    lines = []
    hot = "/v2/search?" + urlencode({"query": names[0].split()[-1].lower(), "limit": "20"})
    async with http.get(api + hot) as resp:
        assert resp.status == 200, resp.status
        body = await resp.read()
    (tmp / "body-v2.json").write_bytes(body)
    port = _free_port()
    bare = subprocess.Popen([sys.executable, str(HERE / "bare.py"), str(port), str(tmp / "body-v2.json")])
    try:
        await asyncio.sleep(1.5)
        (bare_rps, bare_cpu), (api_rps, api_cpu) = await alternating(
            2, seconds, connections, (port, bare.pid, hot), (api_proc.port, api_proc.proc.pid, hot))
    finally:
        bare.terminate()
        bare.wait(10)
    lines.append(f"  cache-hit GET {hot} ({len(body)} bytes), {connections} connections, {seconds:.0f} s, best of 2 "
                 "in turns")
    lines.append(f"  bare aiohttp handler        {bare_rps:8.0f} req/s   {bare_cpu:6.0f} µs CPU/request")
    lines.append(f"  API v2 search (cache hit)   {api_rps:8.0f} req/s   {api_cpu:6.0f} µs CPU/request   "
                 f"ratio {api_rps / bare_rps:.2f} (by CPU {bare_cpu / api_cpu:.2f}; target >= 0.6)")
    lines.append("  uncached v2 search latency (client-side, sequential, every request a MISS):")
    every = []
    kinds = []
    for kind, items in _queries(names, random.Random(12)).items():
        ms = []
        for params in items:
            elapsed, status, cache = await _timed_get(http, f"{api}/v2/search", params)
            assert status == 200 and cache == "MISS", (params, status, cache)
            ms.append(elapsed)
        every += ms
        kinds.append(f"    {kind:26} {summary(ms)}")
    lines.append(f"    {'all v2 searches':26} {summary(every)}   (target p95 <= 20 ms)")
    return lines + kinds


def _free_port() -> int:
    from indexium_devstack.embedded import free_port  # noqa: PLC0415 - run.py put the workspace on the path

    return free_port()
