"""Subscriptions matched against versions, and the outbox's claims and outcomes, on a real PostgreSQL."""

from datetime import UTC, datetime, timedelta

from indexium_db.queries import notify as notify_q
from indexium_devstack import notifykit as kit
from indexium_indexer.notify.worker import match

NOW = datetime(2026, 1, 1, tzinfo=UTC)


async def subscribe(db, kind="mod", *, user=1, mod=None, author=None, q=None, categories=(), loaders=(),
                    game_versions=(), game_version_min=None, version_types=(), limit=100):
    return await notify_q.create_subscription(
        db, limit=limit, github_user_id=user, owner_login=f"user{user}", kind=kind,
        mod_id=mod["id"] if mod else None, author_github_id=author, author_login=None, search_q=q,
        search_categories=list(categories), loaders=list(loaders), game_versions=list(game_versions),
        game_version_min=game_version_min, version_types=list(version_types), format="indexium",
        target_url="https://example.org/hook", secret_salt=b"0" * 16)


async def matched(db, version_id) -> set:
    return set(await match(db, version_id) or ())


async def test_a_version_is_matched_by_its_mod_its_author_and_saved_searches(db):
    sodium = await kit.mod(db, "sodium", owner="caffeine", owner_id=7, summary="Fast rendering engine",
                           categories=["optimization"])
    other = await kit.mod(db, "lithium", owner="caffeine", owner_id=7, summary="Game logic")
    by_mod = await subscribe(db, mod=sodium)
    by_other_mod = await subscribe(db, mod=other)
    by_author = await subscribe(db, "author", author=7)
    by_words = await subscribe(db, "search", q="rendering")
    by_prefix = await subscribe(db, "search", q="fast rend")  # the last word a prefix, as search does
    by_other_words = await subscribe(db, "search", q="furnaces")
    by_category = await subscribe(db, "search", categories=["optimization"])
    by_other_category = await subscribe(db, "search", categories=["magic"])
    vid = await kit.version(db, sodium, "1.0.0", [(["fabric"], ["1.20.1"])])
    assert await matched(db, vid) == {by_mod["id"], by_author["id"], by_words["id"], by_prefix["id"],
                                      by_category["id"]}
    assert by_other_mod["id"] not in await matched(db, vid)
    assert not {by_other_words["id"], by_other_category["id"]} & await matched(db, vid)


async def test_filters_hold_on_one_file(db):
    m = await kit.mod(db, "twofiles")
    fabric_120 = await subscribe(db, mod=m, loaders=["fabric"], game_versions=["1.20.1"])
    forge_120 = await subscribe(db, mod=m, loaders=["forge"], game_versions=["1.20.1"])
    forge_119 = await subscribe(db, mod=m, loaders=["forge"], game_versions=["1.19.2"])
    vid = await kit.version(db, m, "2.0", [(["fabric"], ["1.20.1"]), (["forge"], ["1.19.2"])])
    # forge on 1.20.1 is on no single file, though the version has both
    assert await matched(db, vid) == {fabric_120["id"], forge_119["id"]}
    assert forge_120["id"] not in await matched(db, vid)


async def test_this_version_and_newer_by_the_versions_table(db):
    m = await kit.mod(db, "ranges")
    from_1201 = await subscribe(db, mod=m, game_version_min="1.20.1")
    from_121 = await subscribe(db, mod=m, game_version_min="1.21")
    old = await kit.version(db, m, "1.0", [(["fabric"], ["1.19.4"])])
    mid = await kit.version(db, m, "1.1", [(["fabric"], ["1.20.4"])])
    new = await kit.version(db, m, "1.2", [(["fabric"], ["1.21.10"])])  # "1.21.10" > "1.21.2" by the table
    assert await matched(db, old) == set()
    assert await matched(db, mid) == {from_1201["id"]}
    assert await matched(db, new) == {from_1201["id"], from_121["id"]}


async def test_version_types_and_paused_subscriptions(db):
    m = await kit.mod(db, "types")
    releases = await subscribe(db, mod=m, version_types=["release"])
    betas = await subscribe(db, mod=m, version_types=["beta", "alpha"])
    paused = await subscribe(db, mod=m)
    await db.execute("UPDATE notify_subscriptions SET state = 'paused' WHERE id = $1", paused["id"])
    beta = await kit.version(db, m, "3.0-beta", [(["fabric"], ["1.20.1"])], version_type="beta")
    assert await matched(db, beta) == {betas["id"]}
    assert releases["id"] not in await matched(db, beta)


async def test_hidden_quarantined_and_held_versions_match_nothing(db):
    m = await kit.mod(db, "held")
    await subscribe(db, mod=m)
    await kit.version(db, m, "0.9", [(["fabric"], ["1.20.1"])])  # so the mod is listed
    for status in ("pending_scan", "quarantined", "rejected"):
        vid = await kit.version(db, m, f"1.0-{status}", [(["fabric"], ["1.20.1"])], status=status)
        assert await match(db, vid) is None
    hidden = await kit.version(db, m, "1.1", [(["fabric"], ["1.20.1"])])
    await db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", hidden)
    assert await match(db, hidden) is None


async def test_one_delivery_per_subscription_and_version_with_a_stable_id(db):
    m = await kit.mod(db, "once")
    sub = await subscribe(db, mod=m)
    vid = await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    first = await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=NOW, give_up_s=86400)
    again = await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=NOW, give_up_s=86400)
    assert first == [notify_q.delivery_id(sub["id"], vid)] and again == []
    await db.execute("DELETE FROM notify_deliveries")  # pruned, then the version public again
    assert await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=NOW,
                                  give_up_s=86400) == first


async def test_claims_lease_rows_and_outcomes_need_the_lease(db):
    m = await kit.mod(db, "claims")
    sub = await subscribe(db, mod=m)
    vid = await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    (did,) = await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=NOW, give_up_s=86400)
    until = NOW + timedelta(seconds=60)
    (row,) = await notify_q.claim_due(db, lease="a:1", now=NOW, lease_until=until, limit=10)
    assert row["attempts"] == 1 and bytes(row["secret_salt"]) == b"0" * 16
    assert await notify_q.claim_due(db, lease="b:1", now=NOW, lease_until=until, limit=10) == []
    # the lease runs out (its holder died): another claims it, and the first cannot record
    (again,) = await notify_q.claim_due(db, lease="b:1", now=until, lease_until=until + timedelta(seconds=60),
                                        limit=10)
    assert again["id"] == did and again["attempts"] == 2
    assert not await notify_q.delivered(db, delivery=did, lease="a:1", subscription_id=sub["id"], at=until, status=200)
    assert await notify_q.delivered(db, delivery=did, lease="b:1", subscription_id=sub["id"], at=until, status=200)
    assert await notify_q.claim_due(db, lease="c:1", now=until + timedelta(days=9), lease_until=until, limit=10) == []


async def fail(db, did, sub, at, *, lease, pause_after_failures=50, pause_after_s=86400.0):
    (row,) = await notify_q.claim_due(db, lease=lease, now=at, lease_until=at + timedelta(seconds=1), limit=10)
    assert row["id"] == did
    return await notify_q.failed(db, delivery=did, lease=lease, subscription_id=sub["id"], at=at, status=500,
                                 error="HTTP 500", retry_at=at, pause_after_failures=pause_after_failures,
                                 pause_after_s=pause_after_s)


async def test_failures_pause_a_subscription_after_a_run_or_a_day(db):
    m = await kit.mod(db, "pauses")
    by_count, by_time = await subscribe(db, mod=m), await subscribe(db, mod=m, user=2)
    vid = await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    a, b = (notify_q.delivery_id(s["id"], vid) for s in (by_count, by_time))
    await notify_q.enqueue(db, vid, [by_count["id"]], event="e", now=NOW, give_up_s=86400 * 10)
    await notify_q.enqueue(db, vid, [by_time["id"]], event="e", now=NOW, give_up_s=86400 * 10)
    await db.execute("UPDATE notify_deliveries SET next_attempt_at = 'infinity' WHERE id = $1", b)
    assert [await fail(db, a, by_count, NOW + timedelta(minutes=i), lease=f"x{i}", pause_after_failures=3)
            for i in range(3)] == ["pending", "pending", "paused"]
    state = await db.fetchrow("SELECT state, paused_reason FROM notify_subscriptions WHERE id = $1", by_count["id"])
    assert state["state"] == "paused" and "3 deliveries failed in a row" in state["paused_reason"]
    await db.execute("UPDATE notify_deliveries SET next_attempt_at = $2 WHERE id = $1", b, NOW)
    assert await fail(db, b, by_time, NOW, lease="y0") == "pending"
    assert await fail(db, b, by_time, NOW + timedelta(hours=23), lease="y1") == "pending"
    assert await fail(db, b, by_time, NOW + timedelta(hours=24), lease="y2") == "paused"
    # a paused subscription's deliveries wait: none is claimed, and they were not given up
    assert await notify_q.claim_due(db, lease="z", now=NOW + timedelta(days=30), lease_until=NOW, limit=10) == []
    assert {r["state"] for r in await db.fetch("SELECT state FROM notify_deliveries")} == {"pending"}
    assert await notify_q.resume(db, 2, by_time["id"], give_up_s=60)
    assert await db.fetchval("SELECT consecutive_failures FROM notify_subscriptions WHERE id = $1", by_time["id"]) == 0


async def test_a_delivery_is_given_up_at_its_deadline(db):
    m = await kit.mod(db, "deadline")
    sub = await subscribe(db, mod=m)
    vid = await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    (did,) = await notify_q.enqueue(db, vid, [sub["id"]], event="e", now=NOW, give_up_s=3600)
    assert await fail(db, did, sub, NOW + timedelta(minutes=59), lease="a") == "pending"
    assert await fail(db, did, sub, NOW + timedelta(minutes=61), lease="b") == "failed"


async def test_the_hourly_limit_and_the_bounded_log(db):
    assert [await notify_q.take_hour_slot(db, 5, NOW, 2) for _ in range(3)] == [True, True, False]
    assert await notify_q.take_hour_slot(db, 5, NOW + timedelta(hours=1), 2)
    m = await kit.mod(db, "logged")
    sub = await subscribe(db, mod=m)
    for i in range(7):
        await notify_q.log_attempt(db, subscription_id=sub["id"], delivery=sub["id"], at=NOW, outcome="ok",
                                   response_code=200, latency_ms=i, response_head="x" * 600, error=None, keep=5)
    rows = await notify_q.attempts_of(db, sub["id"], 100)
    assert [r["latency_ms"] for r in rows] == [6, 5, 4, 3, 2] and len(rows[0]["response_head"]) == 512


async def test_the_subscription_limit_holds(db):
    m = await kit.mod(db, "limited")
    assert await subscribe(db, mod=m, limit=2) and await subscribe(db, mod=m, limit=2)
    assert await subscribe(db, mod=m, limit=2) is None
