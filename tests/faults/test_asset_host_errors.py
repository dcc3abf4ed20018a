"""Scenario 6: the asset host answers 503 three times then works; a host answering 404."""

import asyncio

RETRY_BASE_S = 0.5  # the harness's INDEXIUM_INDEXER_RETRY_BASE_SECONDS


async def test_503_three_times_then_indexed_with_spaced_retries(make_harness):
    h = await make_harness()
    (release,) = h.make_releases(1)
    asset = release.assets[0]
    h.gh.fail_next(asset, 503, count=3)
    started = asyncio.get_running_loop().time()
    sent = await h.send(release)
    assert sent.status == 202
    assert not await h.unindexed_after_waiting({sent.delivery_id}, timeout=60), h.logs("indexer")
    took = asyncio.get_running_loop().time() - started
    cdn = [r.status for r in h.gh.cdn_requests if r.asset_id == asset.id]
    assert cdn[:3] == [503, 503, 503] and cdn[3] == 206, cdn
    # retry n waits base x 4^(n-1): 0.5 s + 2 s + 8 s before the fourth try
    assert took >= 0.9 * RETRY_BASE_S * (1 + 4 + 16), took
    assert await h.dead_letters() == []


async def test_asset_gone_is_one_dead_letter_and_no_retry_storm(make_harness):
    h = await make_harness()
    (release,) = h.make_releases(1)
    h.gh.set_mode(release.assets[0], "404")
    sent = await h.send(release)
    assert sent.status == 202
    for _ in range(100):
        if await h.dead_letters():
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(3 * RETRY_BASE_S * 4)  # long enough for a retry, had there been one
    (dead,) = await h.dead_letters()
    assert dead["category"] == "asset_not_found"
    assert h.gh.stats(release.assets[0]).requests <= 2  # the range read, once more without Range
    outcome = await h.query("SELECT outcome FROM webhook_deliveries WHERE delivery_id = $1", sent.delivery_id)
    assert [r["outcome"] for r in outcome] == ["dead_lettered"]
