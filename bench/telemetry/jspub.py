"""Why telemetry has its own JetStream publish path: ``JetStreamPublisher`` beside nats-py's own.

    python bench/telemetry/jspub.py [--messages 20000] [--in-flight 64] [--slices 6]

One embedded NATS server (or ``NATS_URL``), one stream, one client process. The same
messages (a 300-byte ping-sized payload, ``--in-flight`` publishes awaited at once, each
until its PubAck, exactly as the telemetry role publishes) go through
``JetStreamContext.publish`` and through ``indexium_telemetry.jspub.JetStreamPublisher`` in
alternating slices, so drift on a shared machine falls on both. Printed: publishes/s and the
client's CPU per publish (``time.process_time``: this process only, not the NATS server) for
each, and their ratios. The telemetry role keeps its own path only while "by CPU" stays
clearly below 1 (the docstring of ``jspub`` quotes this bench).

Not part of ``make test``; figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import nats

from indexium_telemetry.jspub import JetStreamPublisher

SUBJECT = "benchjspub.ping"
PAYLOAD = b"x" * 300


async def _slice(publish, messages: int, in_flight: int) -> tuple[float, float]:
    """(wall s, CPU s of this process) to publish ``messages``, ``in_flight`` at once."""
    sem = asyncio.Semaphore(in_flight)

    async def one() -> None:
        async with sem:
            await publish(SUBJECT, PAYLOAD)

    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(messages)))
    return time.perf_counter() - wall, time.process_time() - cpu


async def run(url: str, args) -> None:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await js.add_stream(name="BENCHJSPUB", subjects=["benchjspub.>"], max_msgs=100_000)
    ours = JetStreamPublisher(nc, timeout_s=10.0)
    await ours.start()
    paths = {"nats-py": js.publish, "ours": ours.publish}
    totals = {name: [0.0, 0.0] for name in paths}
    per_slice = max(1, args.messages // args.slices)
    await _slice(js.publish, 500, args.in_flight)  # warm both the server and the client
    await _slice(ours.publish, 500, args.in_flight)
    for i in range(args.slices):
        order = list(paths) if i % 2 == 0 else list(reversed(paths))
        for name in order:
            wall, cpu = await _slice(paths[name], per_slice, args.in_flight)
            totals[name][0] += wall
            totals[name][1] += cpu
    await js.delete_stream("BENCHJSPUB")
    await nc.close()
    done = per_slice * args.slices
    print(f"{done} publishes each, {args.in_flight} in flight, {args.slices} alternating slices, "
          f"load average {os.getloadavg()[0]:.2f}")
    for name, (wall, cpu) in totals.items():
        print(f"  {name:8s} {done / wall:8.0f} publishes/s   {cpu / done * 1e6:6.1f} µs client CPU/publish")
    (w_py, c_py), (w_ours, c_ours) = totals["nats-py"], totals["ours"]
    print(f"  ours/nats-py: by wall {w_ours / w_py:.2f}, by CPU {c_ours / c_py:.2f} (below 1 = ours costs less)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, default=64)
    parser.add_argument("--slices", type=int, default=6)
    args = parser.parse_args()
    url = os.environ.get("NATS_URL")
    if url:
        asyncio.run(run(url, args))
        return
    from indexium_devstack.embedded import EmbeddedNats

    with tempfile.TemporaryDirectory(prefix="bench-jspub-") as root:
        server = EmbeddedNats(Path(root) / "nats").start()
        try:
            asyncio.run(run(server.url, args))
        finally:
            server.stop()


if __name__ == "__main__":
    main()
