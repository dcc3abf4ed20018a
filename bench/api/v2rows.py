"""API bench rows for /v2 (the Modrinth-compatible surface), run by run.py in the same run as
/api/v1's rows, against the same API process and catalogue:

  * v2 search cache-hit requests/s, as a ratio of a bare aiohttp handler returning the same
    bytes (target >= 0.6);
  * v2 uncached search latency p50/p95/p99 (target p95 <= 20 ms) by kind of query, every
    request a MISS (distinct queries; facets in Modrinth's form).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from urllib.parse import urlencode

from timing import alternating, bare_handler, distinct, misses, summary


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
    return distinct(out)


async def rows(http, api_proc, names: list[str], tmp: Path, *, seconds: float, connections: int) -> list[str]:
    """The v2 lines to print, measured as run.py measures /api/v1's (timing.py)."""
    api = api_proc.url
    lines = []
    hot = "/v2/search?" + urlencode({"query": names[0].split()[-1].lower(), "limit": "20"})
    async with http.get(api + hot) as resp:
        assert resp.status == 200, resp.status
        body = await resp.read()
    (tmp / "body-v2.json").write_bytes(body)
    port = _free_port()
    with bare_handler(port, tmp / "body-v2.json") as bare:
        (bare_rps, bare_cpu), (api_rps, api_cpu) = await alternating(
            2, seconds, connections, (port, bare.pid, hot), (api_proc.port, api_proc.proc.pid, hot))
    lines.append(f"  cache-hit GET {hot} ({len(body)} bytes), {connections} connections, {seconds:.0f} s, best of 2 "
                 "in turns")
    lines.append(f"  bare aiohttp handler        {bare_rps:8.0f} req/s   {bare_cpu:6.0f} µs CPU/request")
    lines.append(f"  API v2 search (cache hit)   {api_rps:8.0f} req/s   {api_cpu:6.0f} µs CPU/request   "
                 f"ratio {api_rps / bare_rps:.2f} (by CPU {bare_cpu / api_cpu:.2f}; target >= 0.6)")
    lines.append("  uncached v2 search latency (client-side, sequential, every request a MISS):")
    every, by_kind = await misses(http, f"{api}/v2/search", _queries(names, random.Random(12)))
    lines.append(f"    {'all v2 searches':26} {summary(every)}   (target p95 <= 20 ms)")
    return lines + [f"    {kind:26} {summary(ms)}" for kind, ms in by_kind.items()]


def _free_port() -> int:
    from indexium_devstack.embedded import free_port  # noqa: PLC0415 - run.py put the workspace on the path

    return free_port()
