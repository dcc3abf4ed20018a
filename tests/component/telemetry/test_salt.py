"""The daily salt on a real JetStream KV: shared by replicas, rotated at UTC midnight, destroyed."""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from datetime import UTC, datetime, timedelta

import nats
import nats.js.errors
import pytest
from nats.js import api

from indexium_contracts import telemetry
from indexium_devstack import telemetry_samples as samples
from indexium_telemetry.salt import DailySalt, server_hash

from .conftest import FakeClock

BEFORE_MIDNIGHT = datetime(2025, 3, 14, 23, 59, 59, 500_000, tzinfo=UTC)
AFTER_MIDNIGHT = datetime(2025, 3, 15, 0, 0, 0, 500_000, tzinfo=UTC)


@pytest.fixture
async def kv(nats_url):
    nc = await nats.connect(nats_url)
    yield await nc.jetstream().key_value(telemetry.SALTS.name)
    await nc.drain()


async def test_the_bucket_lives_in_memory_only(kv):
    status = await kv.status()
    assert status.stream_info.config.storage == api.StorageType.MEMORY


async def test_replicas_share_the_days_salt_and_it_rotates_at_midnight(kv):
    clock = FakeClock(BEFORE_MIDNIGHT)
    replica_a, replica_b = DailySalt(kv, clock), DailySalt(kv, clock)
    server = uuid.uuid4()
    (at_a, h_a), (_, h_b) = await asyncio.gather(replica_a.hash_now(server), replica_b.hash_now(server))
    assert h_a == h_b and at_a == BEFORE_MIDNIGHT  # one salt per day, whoever created it
    salt = (await kv.get("2025-03-14")).value
    assert len(salt) == 32 and h_a == hashlib.sha256(str(server).encode() + salt).digest()
    assert h_a == server_hash(server, salt)

    clock.now = AFTER_MIDNIGHT
    (_, h_a2), (_, h_b2) = await asyncio.gather(replica_a.hash_now(server), replica_b.hash_now(server))
    assert h_a2 == h_b2 and h_a2 != h_a  # a new day, a new salt: no link between the days
    assert replica_a.held_days() == [AFTER_MIDNIGHT.date()]  # yesterday's forgotten in memory

    await replica_a.maintain()  # ... and destroyed in NATS
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await kv.get("2025-03-14")
    assert (await kv.get("2025-03-15")).value != salt


@pytest.mark.usefixtures("needs_per_message_ttl")
async def test_nats_destroys_a_salt_when_its_day_ends_even_with_no_replica_running(kv):
    clock = FakeClock(datetime(2025, 3, 14, 23, 59, 58, 800_000, tzinfo=UTC))  # 1.2 s before midnight
    await DailySalt(kv, clock).hash_now(uuid.uuid4())
    assert (await kv.get("2025-03-14")).value
    await asyncio.sleep(2.2)
    with pytest.raises(nats.js.errors.KeyNotFoundError):
        await kv.get("2025-03-14")


async def test_a_lost_salt_is_reseeded_with_the_value_replicas_use(kv):
    clock = FakeClock(BEFORE_MIDNIGHT - timedelta(hours=3))
    replica = DailySalt(kv, clock)
    _, before = await replica.hash_now(uuid.UUID(int=7))
    salt = (await kv.get("2025-03-14")).value
    await kv.purge("2025-03-14")  # as after a restart of a single in-memory NATS
    await replica.maintain()
    assert (await kv.get("2025-03-14")).value == salt
    newcomer = DailySalt(kv, clock)
    assert (await newcomer.hash_now(uuid.UUID(int=7)))[1] == before


async def test_a_ping_across_midnight_is_hashed_with_each_days_salt(client, clock, nats_url):
    from .conftest import stream_events

    server = uuid.uuid4()
    clock.now = BEFORE_MIDNIGHT
    assert (await client.post("/api/v1/analytics/submit", data=samples.encode(samples.ping(server)))).status == 202
    clock.now = AFTER_MIDNIGHT
    # The window key is the salted hash too, so a new day is a new window (no cross-day link).
    assert (await client.post("/api/v1/analytics/submit", data=samples.encode(samples.ping(server)))).status == 202
    first, second = [telemetry.decoder.decode(m.data) for m in await stream_events(nats_url)]
    assert first.received_at.startswith("2025-03-14") and second.received_at.startswith("2025-03-15")
    assert first.server_hash != second.server_hash
