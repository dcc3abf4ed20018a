"""The search snapshot's scheduler (`indexium_ops search-snapshot --every`, as `make run` and compose
run it): no write at start with --wait-first, a write after a batch of catalogue events, each write
a process of its own, and a stop that ends it."""

from __future__ import annotations

import asyncio

import nats

from indexium_contracts import searchsnapshot, versions
from indexium_ops.searchsnapshot import schedule


async def _info(nc):
    store = await nc.jetstream().object_store(searchsnapshot.BUCKET.name)
    try:
        return await store.get_info(searchsnapshot.OBJECT)
    except Exception:
        return None


async def test_a_batch_of_catalogue_events_brings_a_write_sooner_than_the_schedule(nats_url, database_url,
                                                                                    monkeypatch):
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("DATABASE_URL", database_url)
    nc = await nats.connect(nats_url)
    try:
        task = asyncio.create_task(schedule(nats_url, every_s=600, after_changes=3, min_interval_s=0,
                                            write_first=False))
        await asyncio.sleep(1.5)
        assert await _info(nc) is None  # (waited: nothing written at start)
        for i in range(2):
            await nc.publish(f"{versions.SUBJECT_PREFIX}.indexed", b"{}")
        await nc.flush()
        await asyncio.sleep(2.5)
        assert await _info(nc) is None  # (two events: fewer than the batch)
        await nc.publish(f"{versions.SUBJECT_PREFIX}.hidden", b"{}")
        await nc.flush()
        for _ in range(300):
            info = await _info(nc)
            if info is not None:
                break
            await asyncio.sleep(0.1)
        assert info is not None and info.size > 0
        task.cancel()
        await asyncio.wait_for(task, 30)  # (it ends quietly on a stop)
    finally:
        await nc.drain()
