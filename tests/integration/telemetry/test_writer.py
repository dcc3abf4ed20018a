"""The writer against real JetStream + PostgreSQL: batches, ack after commit, redelivery, poison."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import nats
import pytest

from indexium_contracts import telemetry
from indexium_platform.metrics import ServiceMetrics
from indexium_devstack import telemetry_samples as samples
from indexium_telemetry import writer as writer_mod
from indexium_telemetry.metrics import TelemetryMetrics
from indexium_telemetry.writer import PingWriter

NOON = datetime(2025, 3, 14, 12, tzinfo=UTC)


async def publish(js, events) -> None:
    await asyncio.gather(*(js.publish(telemetry.PING, telemetry.encoder.encode(e),
                                      headers={"Nats-Msg-Id": e.ping_id.hex}) for e in events))


async def wait_for(predicate, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not met in time")


@pytest.fixture
async def js(nats_url):
    nc = await nats.connect(nats_url)
    yield nc.jetstream()
    await nc.drain()


@pytest.fixture
async def writer(js, pool):
    metrics = TelemetryMetrics(ServiceMetrics("telemetry"))
    w = PingWriter(js, pool, metrics, batch=200, wait_s=0.2)
    w.metrics = metrics
    yield w
    await w.stop()


def events(mods, n, **kw):
    return [samples.event(server=i + 1, mods=[(mods["sodium"], "1.0"), (mods["jei"], None)],
                          received_at=(NOON.replace(second=i % 60)).isoformat(), **kw) for i in range(n)]


async def count(db, table="mod_telemetry_pings"):
    return await db.fetchval(f"SELECT count(*) FROM {table}")


async def ack_pending(js) -> int:
    info = await js.consumer_info(telemetry.STREAM.name, telemetry.WRITER.durable)
    return info.num_ack_pending + info.num_pending


async def test_pings_are_written_in_batches_and_acked(js, writer, db, mods):
    await publish(js, events(mods, 450))
    await writer.start()
    await wait_for(lambda: _eq(count(db), 450))
    await wait_for(lambda: _eq(ack_pending(js), 0))
    row = await db.fetchrow("SELECT * FROM mod_telemetry_pings LIMIT 1")
    assert row["mod_ids"] == [mods["sodium"], mods["jei"]] and row["mod_versions"] == ["1.0", None]
    assert len(row["server_hash"]) == 32
    assert await db.fetchval("SELECT write_version FROM telemetry_day_writes WHERE day = '2025-03-14'") >= 3
    assert writer.metrics.writer_batch_seconds._sum.get() > 0  # at least one timed batch


async def test_a_redelivered_batch_adds_nothing(js, writer, db, mods, monkeypatch):
    # The first pass commits but "crashes" before acking: every message comes back.
    passes = []
    real_ack = PingWriter._ack_all

    async def lose_acks(msgs):
        passes.append(len(msgs))
        if len(passes) == 1:
            await asyncio.gather(*(m.nak() for m in msgs))
        else:
            await real_ack(msgs)

    monkeypatch.setattr(PingWriter, "_ack_all", staticmethod(lose_acks))
    await publish(js, events(mods, 50))
    await writer.start()
    await wait_for(lambda: _eq(ack_pending(js), 0))
    assert len(passes) >= 2
    assert await count(db) == 50
    assert writer.metrics.writer_pings.labels("duplicate")._value.get() == 50


async def test_a_postgres_outage_naks_and_loses_nothing(js, writer, db, mods, monkeypatch):
    monkeypatch.setattr(writer_mod, "RETRY_DELAY_S", 0.1)
    real_insert = writer_mod.telemetry_q.insert_pings
    failures = []

    async def flaky(conn, rows_json):
        if len(failures) < 2:
            failures.append(1)
            raise ConnectionResetError("postgres went away")
        return await real_insert(conn, rows_json)

    monkeypatch.setattr(writer_mod.telemetry_q, "insert_pings", flaky)
    await publish(js, events(mods, 30))
    await writer.start()
    await wait_for(lambda: _eq(count(db), 30))
    await wait_for(lambda: _eq(ack_pending(js), 0))
    assert writer.metrics.writer_pings.labels("retried")._value.get() >= 30


async def test_poison_messages_are_dead_lettered_and_the_rest_written(js, writer, db, mods):
    good = events(mods, 10)
    bad_row = samples.event(server=b"short", mods=[(mods["sodium"], None)], received_at=NOON.isoformat())
    await publish(js, good + [bad_row])
    await js.publish(telemetry.PING, b"\x00not msgpack", headers={"Nats-Msg-Id": "garbage"})
    await writer.start()
    await wait_for(lambda: _eq(count(db, "dead_letters"), 2))
    await wait_for(lambda: _eq(ack_pending(js), 0))
    assert await count(db) == 10
    categories = sorted(r["category"] for r in await db.fetch("SELECT category FROM dead_letters"))
    assert categories == ["rejected_row", "undecodable"]


async def _eq(awaitable, expected) -> bool:
    return await awaitable == expected
