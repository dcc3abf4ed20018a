"""The shared pull-consumer loop on a real JetStream: stopping with every handler slot busy
returns within the grace period, the connection then drains at once, and what was not
finished is delivered again; an idle consumer hands each message over as it arrives. (The
30 s drain stall an abandoned subscription caused needs messages arriving mid-fetch;
tests/faults/test_graceful_shutdown.py reproduces it with real processes.)"""

from __future__ import annotations

import asyncio
import random
import time
import uuid

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

    # Two slots, both held by jobs that never end while new work keeps arriving (pull requests
    # of ours left open on the server when we stop would stall the connection's drain).
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


async def test_an_idle_consumer_hands_each_message_over_at_once(nats_url):
    """nats-py's fetch of a batch could hold a lone message until its pull request expired
    (the message came through an earlier request of ours): 2-3 in 40 up to the fetch timeout
    late at 4 slots. Messages at random moments, several slots free, a short timeout (more
    expiries, so more chances): none may wait for one. Before the fix this failed in most runs."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    run = uuid.uuid4().hex[:8]
    sent: dict[str, float] = {}
    took: dict[str, float] = {}  # ms from just before the publish to the handler

    async def record(msg):
        key = msg.headers["Nats-Msg-Id"]
        if key in sent:
            took[key] = (time.perf_counter() - sent[key]) * 1000
        await msg.ack()

    consumer = PullConsumer(js, ingest.INDEXER, record, concurrency=4, grace_s=1.0, fetch_timeout_s=0.3)
    await consumer.start()
    try:
        await asyncio.sleep(0.5)  # (anything earlier tests left in the stream is taken first)
        rng = random.Random(17)
        for i in range(60):
            await asyncio.sleep(rng.uniform(0.02, 0.3))
            key = f"idle-{run}-{i}"
            sent[key] = time.perf_counter()
            await js.publish(ingest.RELEASE, b"job", headers={"Nats-Msg-Id": key})
        deadline = time.monotonic() + 5
        while len(took) < len(sent) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
    finally:
        await consumer.stop()
        await nc.drain()
    assert len(took) == len(sent)
    slow = {k: round(ms, 1) for k, ms in took.items() if ms > 75}
    assert not slow, f"handed over late (ms): {slow}"
