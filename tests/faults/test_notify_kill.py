"""kill -9 of the notify role mid-burst: every delivery still arrives, and no delivery id the
receiver answered 2xx (and the role recorded) is sent to it again."""

import asyncio
import collections

import nats

from indexium_contracts import versions as version_events
from indexium_db.pool import connect
from indexium_db.queries import notify as notify_q
from indexium_devstack import notifykit as kit

VERSIONS = 200
CONCURRENCY = 8


async def test_kill9_of_the_notify_role_mid_burst_loses_nothing_and_repeats_no_recorded_delivery(make_harness):
    receiver = await kit.Receiver(delay_s=0.04).start()
    h = await make_harness(services={"notify": 1}, env_extra={
        "INDEXIUM_NOTIFY_SECRET_KEY": "faults-notify-key-of-32-bytes-or-more", "INDEXIUM_NOTIFY_ALLOW_HTTP": "true",
        "INDEXIUM_NOTIFY_ALLOWED_TARGETS": "127.0.0.1", "INDEXIUM_NOTIFY_CONCURRENCY": str(CONCURRENCY),
        "INDEXIUM_NOTIFY_POLL_SECONDS": "0.1", "INDEXIUM_NOTIFY_TIMEOUT_SECONDS": "2",
        "INDEXIUM_NOTIFY_LEASE_SECONDS": "3", "INDEXIUM_NOTIFY_RETRY_BASE_SECONDS": "0.2"})
    db = await connect(h.database_url)
    nc = await nats.connect(h.nats_url)
    try:
        m = await kit.mod(db, "burst")
        sub = await notify_q.create_subscription(
            db, limit=10, github_user_id=1, owner_login="alice", kind="mod", mod_id=m["id"], format="indexium",
            target_url=receiver.url("/burst"), secret_salt=b"s" * 16)
        versions = [(await kit.version(db, m, f"1.0.{i}", [(["fabric"], ["1.20.1"])]), f"1.0.{i}")
                    for i in range(VERSIONS)]
        expected = {str(notify_q.delivery_id(sub["id"], vid)) for vid, _ in versions}
        js = nc.jetstream()
        for vid, number in versions:
            await js.publish(version_events.INDEXED, version_events.encoder.encode(version_events.VersionIndexed(
                mod_id=str(m["id"]), slug=m["slug"], version_id=str(vid), version_number=number, visible=True)))

        def answered() -> collections.Counter:
            return collections.Counter(r.headers["X-Indexium-Delivery"] for r in receiver.received
                                       if 200 <= r.status < 300)

        for _ in range(600):  # busy: some delivered, most still to go
            if len(answered()) >= 60:
                break
            await asyncio.sleep(0.02)
        h.kill9("notify", 0)
        recorded = {str(r["id"]) for r in await db.fetch(
            "SELECT id FROM notify_deliveries WHERE state = 'delivered'")}
        await asyncio.sleep(0.3)  # POSTs the receiver was still answering when the role died
        before = answered()
        assert 60 <= len(before) < VERSIONS, len(before)
        await h.add_proc("notify")
        for _ in range(1200):
            if set(answered()) >= expected:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # time for a repeat to show
        after = answered()
        assert set(after) == expected  # nothing lost
        repeated = {d for d, n in after.items() if n > 1}
        assert not repeated & recorded  # a recorded 2xx is never sent again
        # What at-least-once allows: a 2xx answered while the role died, before it committed
        # the answer (at most the POSTs in flight), is sent again with the same id.
        assert repeated <= set(before) - recorded and len(repeated) <= CONCURRENCY, (repeated, len(recorded))
        states = await db.fetch("SELECT state, count(*) AS n FROM notify_deliveries GROUP BY 1")
        assert {r["state"]: r["n"] for r in states} == {"delivered": VERSIONS}
        print(f"kill -9 after {len(before)} answered, {len(recorded)} recorded; repeated after restart: "
              f"{len(repeated)}")
    finally:
        await nc.drain()
        await db.close()
        await receiver.close()
