"""The notify role's sender in process, on a real PostgreSQL and a real receiver: the hourly
limit defers (logged, never dropped) and a version hidden after it matched is never sent."""

import asyncio
from datetime import UTC, datetime, timedelta

from indexium_db.queries import notify as notify_q
from indexium_devstack import notifykit as kit
from indexium_indexer.notify.clock import Clock, hour_of
from indexium_indexer.notify.metrics import NotifyMetrics
from indexium_indexer.notify.sender import Sender, session
from indexium_indexer.notify.settings import Settings
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.settings import load


async def run_sender(pool, database_url, seconds: float = 1.0, **env) -> None:
    settings = load(Settings, {"DATABASE_URL": database_url, "INDEXIUM_NOTIFY_SECRET_KEY": "k" * 32,
                               "INDEXIUM_NOTIFY_ALLOW_HTTP": "true", "INDEXIUM_NOTIFY_ALLOWED_TARGETS": "127.0.0.1",
                               "INDEXIUM_NOTIFY_POLL_SECONDS": "0.05", **env})
    policy = settings.policy()
    http = session(policy, settings)
    sender = Sender(pool, http, policy, Clock(), settings, NotifyMetrics(ServiceMetrics("notifytest")))
    try:
        await sender.start()
        await asyncio.sleep(seconds)
    finally:
        await sender.stop()
        await http.close()


async def test_past_the_hourly_limit_a_delivery_waits_for_the_next_hour_and_says_so(pool, db, database_url):
    receiver = await kit.Receiver().start()
    try:
        m = await kit.mod(db, "limited")
        sub = await notify_q.create_subscription(db, limit=5, github_user_id=9, owner_login="u", kind="mod",
                                                 mod_id=m["id"], format="indexium", target_url=receiver.url(),
                                                 secret_salt=b"s" * 16)
        now = datetime.now(UTC)
        for number in ("1.0", "1.1"):
            vid = await kit.version(db, m, number, [(["fabric"], ["1.20.1"])])
            await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=now, give_up_s=86400)
        await run_sender(pool, database_url, INDEXIUM_NOTIFY_MAX_DELIVERIES_PER_HOUR="1")
        assert len(receiver.received) == 1
        (waiting,) = await db.fetch("SELECT * FROM notify_deliveries WHERE state = 'pending'")
        assert waiting["next_attempt_at"] == hour_of(now) + timedelta(hours=1) and waiting["attempts"] == 0
        outcomes = {r["outcome"]: r for r in await notify_q.attempts_of(db, sub["id"], 10)}
        assert set(outcomes) == {"ok", "deferred"}
        assert "reached 1 deliveries this hour" in outcomes["deferred"]["error"]
    finally:
        await receiver.close()


async def test_a_version_hidden_after_it_matched_is_never_sent(pool, db, database_url):
    receiver = await kit.Receiver().start()
    try:
        m = await kit.mod(db, "hiddenlater")
        await kit.version(db, m, "0.9", [(["fabric"], ["1.20.1"])])
        sub = await notify_q.create_subscription(db, limit=5, github_user_id=9, owner_login="u", kind="mod",
                                                 mod_id=m["id"], format="discord", target_url=receiver.url(),
                                                 secret_salt=b"s" * 16)
        vid = await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
        await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=datetime.now(UTC),
                               give_up_s=86400)
        await db.execute("UPDATE mod_versions SET status = 'quarantined' WHERE id = $1", vid)
        await run_sender(pool, database_url, seconds=0.5)
        assert receiver.received == []
        row = await db.fetchrow("SELECT state, last_error FROM notify_deliveries")
        assert row["state"] == "cancelled" and "no longer public" in row["last_error"]
    finally:
        await receiver.close()
