"""Timing helpers of the API bench, one copy for run.py and the rows it calls (v2rows.py,
siterows.py): percentiles and a summary line, cache-hit throughput measured in turns, a bare
aiohttp handler to measure against, one timed request, and sequential uncached latencies by
kind of query."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp

HERE = Path(__file__).resolve().parent


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def summary(ms: list[float]) -> str:
    return (f"p50 {pct(ms, 50):6.1f} ms  p95 {pct(ms, 95):6.1f} ms  p99 {pct(ms, 99):6.1f} ms"
            f"  (n={len(ms)}, mean {statistics.mean(ms):.1f})")


async def throughput(port: int, pid: int, path: str, seconds: float, connections: int) -> tuple[float, float]:
    """(requests/s, server CPU µs per request)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(HERE / "load.py"), "127.0.0.1", str(port), path, str(seconds), str(connections),
        str(pid), stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    result = json.loads(out)
    if result["non_200"]:
        raise RuntimeError(f"{result['non_200']} non-200 answers from port {port}")
    return result["rps"], result["cpu_us_per_request"]


async def alternating(n: int, seconds: float, connections: int,
                      *targets: tuple[int, int, str]) -> list[tuple[float, float]]:
    """Best of ``n`` for each (port, pid, path) target, measured in turns (every target once a
    round, ``n`` rounds): a ratio between targets then compares runs minutes apart at most
    seconds apart, so a slow spell of this shared machine falls on both sides of it instead of
    on whichever was measured during it."""
    runs: list[list[tuple[float, float]]] = [[] for _ in targets]
    for _ in range(n):
        for i, (port, pid, path) in enumerate(targets):
            runs[i].append(await throughput(port, pid, path, seconds, connections))
    return [(max(r[0] for r in rs), min(r[1] for r in rs)) for rs in runs]


@contextlib.contextmanager
def bare_handler(port: int, body_file: Path) -> Iterator[subprocess.Popen]:
    """The ceiling a cache hit is measured against: bare.py answering ``body_file``'s bytes on
    ``port``, listening when this yields, stopped when it ends."""
    proc = subprocess.Popen([sys.executable, str(HERE / "bare.py"), str(port), str(body_file)])
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"bare.py did not listen on port {port}")
            time.sleep(0.05)
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)


async def timed(http: aiohttp.ClientSession, method: str, url: str, **kw) -> tuple[float, aiohttp.ClientResponse, bytes]:
    started = time.perf_counter()
    async with http.request(method, url, **kw) as resp:
        body = await resp.read()
    return (time.perf_counter() - started) * 1000, resp, body


def distinct(kinds: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """Each query once across every kind (the first kind keeps it), so every request is a miss."""
    seen, unique = set(), {}
    for kind, items in kinds.items():
        unique[kind] = []
        for item in items:
            key = tuple(sorted(item.items()))
            if key not in seen:
                seen.add(key)
                unique[kind].append(item)
    return unique


async def misses(http: aiohttp.ClientSession, url: str,
                 kinds: dict[str, list[dict]]) -> tuple[list[float], dict[str, list[float]]]:
    """GET ``url`` with each kind's parameters in turn, one request at a time, every answer a 200
    MISS: (every latency in ms, the latencies by kind)."""
    every, by_kind = [], {}
    for kind, items in kinds.items():
        ms = []
        for params in items:
            elapsed, resp, _ = await timed(http, "GET", url, params=params)
            assert resp.status == 200 and resp.headers.get("X-Cache") == "MISS", (params, resp.status)
            ms.append(elapsed)
        every += ms
        by_kind[kind] = ms
    return every, by_kind
