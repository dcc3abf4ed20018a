"""The notify role as a process on real NATS JetStream and PostgreSQL, subscriptions made
through the API, deliveries received by real aiohttp receivers on loopback.

One stack for the module. The role's clock runs 7,200 times faster than the wall clock
(INDEXIUM_NOTIFY_CLOCK_SPEED, a setting), so 24 hours of retries pass in 12 seconds; its DNS
server is a tiny one on loopback whose answers a test changes (INDEXIUM_NOTIFY_NAMESERVER).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_contracts import versions as version_events
from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, notify as notify_q
from indexium_devstack import notifykit as kit
from indexium_devstack.embedded import EmbeddedNats, free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_notify import payloads, signing
from indexium_platform import natsutil
from indexium_platform.settings import load

KEY = "integration-notify-key-of-32-bytes-or-more"
SESSION_SECRET = "integration-session-secret-32-bytes-long"
SPEED = 7200


@dataclass
class Stack:
    db: object
    js: object
    api: TestClient
    cookie: str
    csrf: str
    dns: kit.TinyDns
    role: ServiceProcess

    async def subscribe(self, **body) -> dict:
        r = await self.api.post("/api/v1/subscriptions", json={"mod": "sodium", **body},
                                headers={"Cookie": f"indexium_session={self.cookie}", "X-CSRF-Token": self.csrf})
        answer = await r.json()
        assert r.status == 201, answer
        return answer

    async def get(self, path: str) -> dict:
        r = await self.api.get(f"/api/v1{path}", headers={"Cookie": f"indexium_session={self.cookie}"})
        assert r.status == 200
        return await r.json()

    async def publish(self, mod, version_id, number: str, event=version_events.VersionIndexed, **extra) -> None:
        fields = dict(mod_id=str(mod["id"]), slug=mod["slug"], version_id=str(version_id), version_number=number,
                      visible=True, **extra)
        subject = {version_events.VersionIndexed: version_events.INDEXED,
                   version_events.VersionScanned: version_events.SCANNED}[event]
        await self.js.publish(subject, version_events.encoder.encode(event(**fields)))


@pytest.fixture(scope="module")
async def stack(cloned_database, tmp_path_factory):
    root = tmp_path_factory.mktemp("notify")
    server = await asyncio.to_thread(EmbeddedNats(root / "nats").start)
    nc = await nats.connect(server.url)
    await natsutil.ensure_all(nc.jetstream())
    dns = await kit.TinyDns().start()
    async with cloned_database("indexium_notify_it", replace=True) as dsn:
        db = await connect(dsn)
        policy = {"INDEXIUM_NOTIFY_ALLOW_HTTP": "true", "INDEXIUM_NOTIFY_ALLOWED_TARGETS": "127.0.0.1",
                  "INDEXIUM_NOTIFY_NAMESERVER": dns.address, "INDEXIUM_NOTIFY_SECRET_KEY": KEY}
        role = ServiceProcess(BY_NAME["notify"], port=free_port(), log_path=root / "notify.log", env={
            "NATS_URL": server.url, "DATABASE_URL": dsn, "INDEXIUM_LOG_FORMAT": "json", **policy,
            "INDEXIUM_NOTIFY_CLOCK_SPEED": str(SPEED), "INDEXIUM_NOTIFY_POLL_SECONDS": "0.05",
            "INDEXIUM_NOTIFY_TIMEOUT_SECONDS": "2", "INDEXIUM_PUBLIC_URL": "https://indexium.example"}).start()
        api = TestClient(TestServer(create_app(load(Settings, {
            "DATABASE_URL": dsn, "NATS_URL": server.url, "INDEXIUM_SESSION_SECRET": SESSION_SECRET,
            "INDEXIUM_API_SEARCH_INDEX": "false", **policy}))))
        try:
            await asyncio.to_thread(role.wait_ready, 60)
            await api.start_server()
            cookie, csrf = await kit.sign_in(db, SESSION_SECRET, github_user_id=1, login="alice")
            sodium = await kit.mod(db, "sodium", owner="caffeine", owner_id=77, name="Sodium")
            await kit.version(db, sodium, "0.1", [(["fabric"], ["1.20.1"])])  # listed before the tests
            await mods_q.upsert_icon(db, sodium["id"], "image/png", b"\x89PNG\r\n\x1a\nx", '"i"')
            yield Stack(db, nc.jetstream(), api, cookie, csrf, dns, role)
        finally:
            await api.close()
            code = await asyncio.to_thread(role.stop, 30)
            log = role.log_path.read_text()
            await db.close()
            await nc.drain()
            dns.close()
            await asyncio.to_thread(server.stop)
            assert code == 0 and "notify_job_crashed" not in log and "Traceback" not in log, log[-4000:]


async def until(check, timeout=20.0, every=0.05):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (result := await check()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(every)
    return result


async def test_one_signed_post_per_matching_version_and_none_for_other_loaders_or_versions(stack):
    receiver = await kit.Receiver().start()
    try:
        sub = await stack.subscribe(target_url=receiver.url("/a"), loaders=["fabric"], game_version_min="1.20.1")
        m = await stack.db.fetchrow("SELECT * FROM mods WHERE slug = 'sodium'")
        wanted = await kit.version(stack.db, m, "1.0", [(["fabric"], ["1.20.4", "1.20.1"])], changelog="**Faster**")
        forge = await kit.version(stack.db, m, "1.1-forge", [(["forge"], ["1.20.1"])])
        old = await kit.version(stack.db, m, "1.1-old", [(["fabric"], ["1.19.2"])])
        held = await kit.version(stack.db, m, "1.2-held", [(["fabric"], ["1.20.1"])], status="quarantined")
        for vid, number in ((forge, "1.1-forge"), (old, "1.1-old"), (held, "1.2-held"), (wanted, "1.0")):
            await stack.publish(m, vid, number)
        await stack.publish(m, wanted, "1.0", version_events.VersionScanned, status="public")  # public "again"
        await until(lambda: asyncio.sleep(0, receiver.received))
        await asyncio.sleep(1.0)  # time for a second POST, or one for the other versions, to arrive
        (got,) = receiver.received
        assert signing.verify(sub["secret"], got.body, got.headers["X-Indexium-Signature-256"])
        assert got.headers["X-Indexium-Event"] == "version.published"
        assert got.headers["X-Indexium-Delivery"] == str(notify_q.delivery_id(sub["id"], wanted))
        body = json.loads(got.body)
        assert body["version"]["version_number"] == "1.0" and body["mod"]["slug"] == "sodium"
        assert body["version"]["game_versions_compact"] == ["1.20.1", "1.20.4"]  # (1.20.2/3 are not in it)
        assert body["version"]["changelog_excerpt"] == "Faster" and body["new_project"] is False
        assert body["mod"]["icon_url"] == "https://indexium.example/api/v1/mods/sodium/icon"
        log = await stack.get(f"/subscriptions/{sub['id']}/deliveries")
        assert [(d["version_number"], d["state"]) for d in log["deliveries"]] == [("1.0", "delivered")]
        assert log["attempts"][0]["outcome"] == "ok" and log["attempts"][0]["response_head"] == "ok"
    finally:
        await receiver.close()
        await stack.db.execute("DELETE FROM notify_subscriptions")


async def test_a_receiver_failing_three_times_gets_the_version_once_it_answers_with_the_same_id(stack):
    receiver = await kit.Receiver(answers=[500, 503, 500]).start()
    try:
        sub = await stack.subscribe(target_url=receiver.url("/b"))
        m = await stack.db.fetchrow("SELECT * FROM mods WHERE slug = 'sodium'")
        vid = await kit.version(stack.db, m, "2.0", [(["fabric"], ["1.20.1"])])
        await stack.publish(m, vid, "2.0")
        await until(lambda: asyncio.sleep(0, len(receiver.received) >= 4))
        await asyncio.sleep(0.5)
        assert [r.status for r in receiver.received] == [500, 503, 500, 200]
        assert {r.headers["X-Indexium-Delivery"] for r in receiver.received} == {
            str(notify_q.delivery_id(sub["id"], vid))}
        assert len({r.body for r in receiver.received}) == 1  # the same body every time
        log = await stack.get(f"/subscriptions/{sub['id']}/deliveries")
        assert [a["outcome"] for a in log["attempts"]] == ["ok", "http_error", "http_error", "http_error"]
        assert log["deliveries"][0]["state"] == "delivered" and log["deliveries"][0]["attempts"] == 4
    finally:
        await receiver.close()
        await stack.db.execute("DELETE FROM notify_subscriptions")


async def test_a_receiver_down_for_24_hours_is_paused_and_shown_paused(stack):
    sub = await stack.subscribe(target_url=f"http://127.0.0.1:{free_port()}/down")  # nothing listens
    m = await stack.db.fetchrow("SELECT * FROM mods WHERE slug = 'sodium'")
    vid = await kit.version(stack.db, m, "3.0", [(["fabric"], ["1.20.1"])])
    await stack.publish(m, vid, "3.0")

    async def paused():
        shown = await stack.get(f"/subscriptions/{sub['id']}")
        return shown if shown["state"] == "paused" else None

    shown = await until(paused, timeout=60, every=0.5)  # 24 h at 7,200x: 12 s
    assert "failed for 24 hours" in shown["paused_reason"] and "connection failed" in shown["paused_reason"]
    assert 10 < shown["consecutive_failures"] < 50  # paused by the day, not by the count
    log = await stack.get(f"/subscriptions/{sub['id']}/deliveries")
    assert log["attempts"] and {a["outcome"] for a in log["attempts"]} == {"network"}
    assert log["deliveries"][0]["state"] == "pending"  # waits for the resume, not given up
    await stack.db.execute("DELETE FROM notify_subscriptions")


async def test_a_name_rebound_to_a_private_address_after_creation_is_refused_at_delivery(stack):
    receiver = await kit.Receiver().start()
    try:
        stack.dns.records["rebind.test"] = "93.184.216.34"  # public when the subscription is made
        sub = await stack.subscribe(target_url=receiver.url("/r", host="rebind.test"))
        stack.dns.records["rebind.test"] = "127.0.0.1"  # then the receiver on loopback
        m = await stack.db.fetchrow("SELECT * FROM mods WHERE slug = 'sodium'")
        vid = await kit.version(stack.db, m, "4.0", [(["fabric"], ["1.20.1"])])
        await stack.publish(m, vid, "4.0")

        async def refused():
            log = await stack.get(f"/subscriptions/{sub['id']}/deliveries")
            return [a for a in log["attempts"] if a["outcome"] == "refused"]

        (first, *_) = await until(refused)
        assert "non-public" in first["error"]
        await asyncio.sleep(0.3)
        assert receiver.received == []
    finally:
        await receiver.close()
        await stack.db.execute("DELETE FROM notify_subscriptions")


def discord_shaped(body: bytes) -> int:
    """What a Discord-shaped receiver says: 204 for a message within Discord's limits, else 400."""
    message = json.loads(body)
    if payloads.discord_problems(message) or message.get("allowed_mentions") != {"parse": []}:
        return 400
    return 204


async def test_a_hostile_version_reaches_a_discord_shaped_receiver_within_discords_limits(stack):
    receiver = await kit.Receiver(check=discord_shaped).start()
    try:
        await stack.subscribe(target_url=receiver.url("/api/webhooks/1/token"), format="discord")
        m = await stack.db.fetchrow("SELECT * FROM mods WHERE slug = 'sodium'")
        await stack.db.execute("UPDATE mods SET name = $1 WHERE id = $2", "W" * 128, m["id"])
        changelog = "# Big\n\n" + "**bold** [link](http://x) @everyone <script>x</script> " * 2000
        versions = [f"1.{minor}.{patch}" for minor in range(14, 21) for patch in range(0, 5)]
        number = "9" * 120
        vid = await kit.version(stack.db, m, number, [(["fabric", "quilt"], versions)], changelog=changelog)
        await stack.publish(m, vid, number)
        await until(lambda: asyncio.sleep(0, receiver.received))
        (got,) = receiver.received
        assert got.status == 204, payloads.discord_problems(json.loads(got.body))
        (embed,) = json.loads(got.body)["embeds"]
        assert embed["thumbnail"]["url"] == "https://indexium.example/api/v1/mods/sodium/icon"
        assert embed["url"] == "https://indexium.example/mods/sodium"
        description = embed["description"]
        assert "\\@everyone" in description and not re.search(r"(?<!\\)[@*<\[]", description)  # all escaped
        assert "script" not in description  # raw HTML dropped
        assert any(f["name"] == "Game versions" and "–" in f["value"] for f in embed["fields"])
    finally:
        await receiver.close()
        await stack.db.execute("UPDATE mods SET name = 'Sodium' WHERE slug = 'sodium'")
        await stack.db.execute("DELETE FROM notify_subscriptions")
