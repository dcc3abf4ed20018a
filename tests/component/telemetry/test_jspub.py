"""JetStreamPublisher and the rate limiter's create through it, against a real JetStream."""

from __future__ import annotations

import asyncio
import os
import struct
from datetime import UTC, datetime

import nats
import nats.errors
import nats.js.errors
import pytest

from indexium_contracts import telemetry
from indexium_telemetry.buckets import bind_or_create
from indexium_telemetry.jspub import JetStreamPublisher
from indexium_telemetry.ratelimit import RateLimited, RateLimiter


@pytest.fixture
async def nc(nats_url):
    conn = await nats.connect(nats_url)
    yield conn
    await conn.close()


async def test_many_publishes_in_flight_each_get_their_own_puback(nc):
    publisher = JetStreamPublisher(nc, 5.0)
    await publisher.start()
    payloads = [os.urandom(16) for _ in range(200)]
    acks = await asyncio.gather(*(publisher.publish(telemetry.PING, p, {"Nats-Msg-Id": p.hex()})
                                  for p in payloads))
    assert {a["stream"] for a in acks} == {telemetry.STREAM.name}
    assert len({a["seq"] for a in acks}) == 200 and publisher.in_flight == 0
    js = nc.jetstream()
    for payload, ack in zip(payloads[:5], acks[:5]):  # each ack names its own message
        assert (await js.get_msg(telemetry.STREAM.name, ack["seq"])).data == payload
    again = await publisher.publish(telemetry.PING, payloads[0], {"Nats-Msg-Id": payloads[0].hex()})
    assert again.get("duplicate") is True and again["seq"] == acks[0]["seq"]


async def test_an_error_answer_no_stream_and_no_answer_raise_as_jetstream_publish_does(nc):
    publisher = JetStreamPublisher(nc, 0.3)
    await publisher.start()
    with pytest.raises(nats.js.errors.APIError) as err:
        await publisher.publish(telemetry.PING, b"x", {"Nats-Expected-Last-Sequence": "1"})
    assert err.value.err_code == 10071
    with pytest.raises(nats.js.errors.NoStreamResponseError):
        await publisher.publish("no.stream.here", b"x")
    await nc.subscribe("silent.subject")  # a subscriber that never answers
    with pytest.raises(nats.errors.TimeoutError):
        await publisher.publish("silent.subject", b"x")
    assert publisher.in_flight == 0


async def test_a_publisher_not_started_refuses():
    with pytest.raises(RuntimeError):
        await JetStreamPublisher(None, 1.0).publish(telemetry.PING, b"x")  # type: ignore[arg-type]


async def test_the_rate_limit_key_is_what_key_value_create_writes_and_a_released_key_reopens(nc):
    publisher = JetStreamPublisher(nc, 2.0)
    await publisher.start()
    kv = await bind_or_create(nc.jetstream(timeout=2.0), telemetry.RATE_LIMIT, replicas=1)
    limiter = RateLimiter(kv, telemetry.RATE_LIMIT.name, 900, publisher=publisher)
    now = datetime(2025, 3, 14, 12, tzinfo=UTC)
    server = os.urandom(32)
    key = await limiter.acquire(server, now)
    entry = await kv.get(key)
    assert key == server.hex() and struct.unpack(">d", entry.value) == (now.timestamp(),)
    stored = await nc.jetstream().get_msg(f"KV_{telemetry.RATE_LIMIT.name}", entry.revision)
    assert stored.headers["Nats-TTL"] == "900"  # the window is the entry's own TTL
    with pytest.raises(RateLimited) as held:
        await limiter.acquire(server, now)
    assert held.value.retry_after_s == 900
    await limiter.release(key)
    assert await limiter.acquire(server, now) == key  # the purged key (a tombstone) is open again
    with pytest.raises(RateLimited):
        await limiter.acquire(server, now)


async def test_publishes_without_an_answer_time_out_after_the_timeout_and_not_much_later(nc):
    # One ticker times out every waiting publish (no timer per publish): each within 1.2
    # timeouts of its own start, however the publishes are spread, and answered ones are not
    # touched.
    publisher = JetStreamPublisher(nc, 0.5)
    await publisher.start()
    await nc.subscribe("silent.subject")  # a subscriber that never answers
    loop = asyncio.get_running_loop()

    async def silent(delay: float) -> float:
        await asyncio.sleep(delay)
        started = loop.time()
        with pytest.raises(nats.errors.TimeoutError):
            await publisher.publish("silent.subject", b"x")
        return loop.time() - started

    async def answered(delay: float) -> dict:
        await asyncio.sleep(delay)
        return await publisher.publish(telemetry.PING, os.urandom(8))

    waited = await asyncio.gather(*(silent(d / 10) for d in range(8)))
    assert all(0.5 <= w < 0.5 * 1.2 + 0.1 for w in waited), waited
    results = await asyncio.gather(silent(0), answered(0.1), answered(0.3), silent(0.35))
    assert [r["stream"] for r in results[1:3]] == [telemetry.STREAM.name] * 2
    assert publisher.in_flight == 0
    await asyncio.sleep(0.2)
    assert publisher._ticker is None  # nothing waiting: the ticker stopped
