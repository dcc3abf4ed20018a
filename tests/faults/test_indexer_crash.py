"""Scenario 2: kill -9 one of two indexers while 500 jobs are in flight."""

import asyncio


async def test_kill9_of_one_indexer_loses_and_duplicates_nothing(make_harness):
    h = await make_harness(services={"ingest": 1, "indexer": 2},
                           env_extra={"INDEXIUM_INDEXER_CONCURRENCY": "8"})
    releases = h.make_releases(500, per_repo=10)
    burst = asyncio.create_task(h.burst(releases))
    # Kill one indexer once it is busy (some jobs indexed, many still in flight).
    for _ in range(400):
        if len(await h.indexed_deliveries()) >= 50:
            break
        await asyncio.sleep(0.05)
    h.kill9("indexer", 0)
    sent = await burst
    accepted = {s.delivery_id for s in sent if s.status == 202}
    assert len(accepted) == 500

    missing = await h.unindexed_after_waiting(accepted, timeout=180)
    assert not missing, f"{len(missing)} accepted webhooks never indexed"
    assert await h.duplicated_versions() == 0
    assert (await h.query("SELECT count(*) AS n FROM mod_versions"))[0]["n"] == 500
    assert await h.dead_letters() == []
