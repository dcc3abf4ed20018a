"""Scenario 1: the same delivery 5 times in a second, and again after JetStream's window."""

import asyncio
import dataclasses

import nats

from indexium_contracts import ingest


async def test_same_delivery_many_times_is_one_version_and_one_publish(make_harness):
    h = await make_harness()
    (release,) = h.make_releases(1)
    sent = await asyncio.gather(*(h.send(release, delivery_id="dup-1") for _ in range(5)))
    assert [s.status for s in sent] == [202] * 5
    assert not await h.unindexed_after_waiting({"dup-1"}, timeout=20)

    # Let JetStream's duplicate window pass (shrunk for the test), then GitHub "redelivers".
    nc = await nats.connect(h.nats_url)
    js = nc.jetstream()
    info = await js.stream_info(ingest.STREAM.name)
    await js.update_stream(dataclasses.replace(info.config, duplicate_window=0.2))
    await asyncio.sleep(0.5)
    assert (await h.send(release, delivery_id="dup-1")).status == 202
    await asyncio.sleep(1.0)
    info = await js.stream_info(ingest.STREAM.name)
    await nc.drain()

    assert info.state.messages == 1  # one publish, ever
    assert (await h.query("SELECT count(*) AS n FROM mod_versions"))[0]["n"] == 1
    assert await h.duplicated_versions() == 0
