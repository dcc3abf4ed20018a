"""What fetching a new search snapshot costs a serving API replica's event loop.

    python bench/api/fetchlag.py [--mb 150] [--runs 3]

A serving replica's refresh fetches the writer's latest snapshot (~150 MB at 100,000 mods) in its
own process (``indexium_platform.snapshotfetch.fetch``) while it answers requests. Every
millisecond the fetch holds the event loop is a millisecond a request arriving meanwhile waits.
This puts ``--mb`` of random bytes into the snapshot's object store on an embedded NATS (the
fetch reads any object the same way) and fetches it ``--runs`` times into a fresh directory, a
task beside it sleeping 1 ms at a time: the longest wake-up delay past that 1 ms, its p99, and how
much time went in delays over 10 ms. No PostgreSQL, no seeding: seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import shutil
import tempfile
import time
from pathlib import Path

import nats

from indexium_contracts import searchsnapshot
from indexium_devstack.embedded import EmbeddedNats
from indexium_platform import snapshotfetch


async def lag_monitor(lags: list[float]) -> None:
    while True:
        t = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - t - 0.001)


async def main(args) -> None:
    root = Path(tempfile.mkdtemp(prefix="indexium-fetchlag-"))
    server = EmbeddedNats(root / "nats").start()
    try:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        store = await js.create_object_store(searchsnapshot.BUCKET.name, config=searchsnapshot.BUCKET.config(replicas=1))
        await store.put(searchsnapshot.OBJECT, io.BytesIO(os.urandom(args.mb * 2**20)))
        await nc.close()
        for run in range(args.runs):
            target = root / f"node{run}"
            lags: list[float] = []
            monitor = asyncio.create_task(lag_monitor(lags))
            cpu, wall = time.process_time(), time.perf_counter()
            path, fetched = await snapshotfetch.fetch(server.url, target)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            monitor.cancel()
            lags.sort()
            assert fetched and path.stat().st_size == args.mb * 2**20
            print(f"fetch {run + 1}: {args.mb} MB in {wall:.2f} s ({cpu:.2f} s CPU in this process); event loop "
                  f"held at most {lags[-1] * 1000:.1f} ms, p99 {lags[int(len(lags) * 0.99)] * 1000:.1f} ms, "
                  f"{sum(x for x in lags if x > 0.010) * 1000:.0f} ms in delays over 10 ms")
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mb", type=int, default=150, help="the object's size in MB (150: 100,000 mods)")
    p.add_argument("--runs", type=int, default=3)
    asyncio.run(main(p.parse_args()))
