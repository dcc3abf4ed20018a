"""The shared pull-consumer loop on a real JetStream: stopping with every handler slot busy
returns within the grace period, the connection then drains at once, and what was not
finished is delivered again. (The 30 s drain stall an abandoned subscription caused needs
messages arriving mid-fetch; tests/faults/test_graceful_shutdown.py reproduces it with
real processes.)"""

from __future__ import annotations

import asyncio
import time

import nats

from indexium_contracts import ingest
from indexium_platform.consumer import PullConsumer


async def test_stop_with_every_slot_busy_returns_within_grace_and_the_drain_is_quick(nats_url):
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    running: list[str] = []

    async def stuck(msg):
        running.append(msg.headers["Nats-Msg-Id"])
        await asyncio.sleep(3600)  # jobs that outlive the grace period

    # Two slots: the first fetch asks for a batch of two (nats-py leaves such a batch marked
    # unfinished in the subscription's queue, so an open subscription would stall a drain).
    consumer = PullConsumer(js, ingest.INDEXER, stuck, concurrency=2, grace_s=1.0, fetch_timeout_s=0.5)
    await js.publish(ingest.RELEASE, b"job", headers={"Nats-Msg-Id": "job-0"})
    await consumer.start()

    async def trickle():  # new work keeps arriving while the handlers are busy
        for i in range(1, 20):
            await asyncio.sleep(0.1)
            await js.publish(ingest.RELEASE, b"job", headers={"Nats-Msg-Id": f"job-{i}"})

    publisher = asyncio.create_task(trickle())
    deadline = time.monotonic() + 10
    while len(running) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await publisher

    t0 = time.monotonic()
    await consumer.stop()
    stop_took = time.monotonic() - t0
    t0 = time.monotonic()
    await asyncio.wait_for(nc.drain(), 10)
    drain_took = time.monotonic() - t0
    assert stop_took < 0.5 + 2 + 1.0 + 1, stop_took
    assert drain_took < 3, drain_took

    # Nothing is lost: the cancelled job and the rest come straight back to the next worker.
    nc2 = await nats.connect(nats_url)
    seen: list[str] = []

    async def record(msg):
        seen.append(msg.headers["Nats-Msg-Id"])
        await msg.ack()

    again = PullConsumer(nc2.jetstream(), ingest.INDEXER, record, concurrency=4, grace_s=1.0, fetch_timeout_s=0.5)
    await again.start()
    deadline = time.monotonic() + 10
    while len(set(seen)) < 20 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await again.stop()
    await nc2.drain()
    assert sorted(set(seen)) == sorted(f"job-{i}" for i in range(20))
