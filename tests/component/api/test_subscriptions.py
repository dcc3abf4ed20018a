"""/api/v1/subscriptions and /api/v1/tokens: who may call, what is refused, and the limits,
through the app on a real PostgreSQL."""

import hashlib
from datetime import UTC, datetime

import pytest

from indexium_db.queries import notify as notify_q
from indexium_devstack import notifykit as kit
from indexium_notify import signing

SESSION_SECRET = "s" * 40
KEY = "k" * 40


@pytest.fixture
def api(make_client, db):
    def make(**env):
        return make_client(**{"INDEXIUM_SESSION_SECRET": SESSION_SECRET, "INDEXIUM_NOTIFY_SECRET_KEY": KEY,
                              "INDEXIUM_API_SEARCH_INDEX": "false", **env})
    return make


class User:
    def __init__(self, client, cookie, csrf):
        self.client, self.cookie, self.csrf = client, cookie, csrf

    def _headers(self, csrf=True, token=None):
        if token:
            return {"Authorization": f"Bearer {token}"}
        h = {"Cookie": f"indexium_session={self.cookie}"}
        if csrf:
            h["X-CSRF-Token"] = self.csrf
        return h

    async def call(self, method, path, *, json=None, csrf=True, token=None):
        r = await self.client.request(method, f"/api/v1{path}", json=json, headers=self._headers(csrf, token))
        body = await r.json() if r.content_type == "application/json" else None
        return r.status, body


async def user(client, db, uid=1, login="alice") -> User:
    cookie, csrf = await kit.sign_in(db, SESSION_SECRET, github_user_id=uid, login=login)
    return User(client, cookie, csrf)


@pytest.fixture
async def sodium(db):
    m = await kit.mod(db, "sodium", owner="caffeine", owner_id=77)
    await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    return m


def body(**over):
    return {"target_url": "https://93.184.216.34/hook", "mod": "sodium", **over}


async def test_nobody_gets_in_without_a_session_or_a_token(api, db, sodium):
    client = await api()
    for method, path in (("GET", "/subscriptions"), ("POST", "/subscriptions"), ("GET", "/me"),
                         ("POST", "/tokens"), ("DELETE", "/subscriptions/6f1d3c1e-2b8e-4e55-9a51-0c6c4f3d9a21")):
        r = await client.request(method, f"/api/v1{path}", json=body())
        assert r.status == 401, (method, path)
        assert (await r.json())["error"] == "unauthenticated"
    r = await client.get("/api/v1/subscriptions", headers={"Authorization": "Bearer idx_nothing"})
    assert r.status == 401 and (await r.json())["error"] == "invalid_token"


async def test_a_session_creates_with_its_csrf_token_and_sees_the_secret_once(api, db, sodium):
    alice = await user(await api(), db)
    status, answer = await alice.call("POST", "/subscriptions", json=body(), csrf=False)
    assert status == 403 and answer["error"] == "csrf_failed"
    status, answer = await alice.call("POST", "/subscriptions", json=body(loaders=["Fabric"], version_types=["release"]))
    assert status == 201, answer
    assert answer["kind"] == "mod" and answer["mod"] == "sodium" and answer["loaders"] == ["fabric"]
    salt = await db.fetchval("SELECT secret_salt FROM notify_subscriptions")
    assert answer["secret"] == signing.secret_for(KEY.encode(), salt)  # derived, never stored
    assert answer["secret"].encode() not in b"".join(
        str(v).encode() for r in await db.fetch("SELECT * FROM notify_subscriptions") for v in r.values())
    status, listed = await alice.call("GET", "/subscriptions")
    assert status == 200 and [s["id"] for s in listed["subscriptions"]] == [answer["id"]]
    assert "secret" not in listed["subscriptions"][0]
    assert listed["limits"] == {"subscriptions": 25, "subscriptions_used": 1, "deliveries_per_hour": 500,
                                "deliveries_this_hour": 0}
    status, me = await alice.call("GET", "/me")
    assert me == {"login": "alice", "github_user_id": 1, "via": "session", "csrf_token": alice.csrf}


async def test_personal_tokens_are_made_with_the_session_stored_hashed_and_revocable(api, db, sodium):
    alice = await user(await api(), db)
    status, made = await alice.call("POST", "/tokens", json={"name": "my bot"})
    assert status == 201 and made["token"].startswith("idx_") and made["token"].startswith(made["prefix"])
    stored = await db.fetchrow("SELECT * FROM user_api_tokens")
    assert bytes(stored["token_hash"]) == hashlib.sha256(made["token"].encode()).digest()
    assert made["token"].encode() not in b"".join(str(v).encode() for v in stored.values())
    status, answer = await alice.call("POST", "/subscriptions", json=body(), token=made["token"])  # no CSRF needed
    assert status == 201, answer
    status, me = await alice.call("GET", "/me", token=made["token"])
    assert me["via"] == "token" and me["csrf_token"] is None
    status, refused = await alice.call("POST", "/tokens", json={"name": "x"}, token=made["token"])
    assert status == 403 and refused["error"] == "session_required"
    status, listed = await alice.call("GET", "/tokens")
    assert [t["name"] for t in listed["tokens"]] == ["my bot"] and "token" not in listed["tokens"][0]
    assert (await alice.call("DELETE", f"/tokens/{made['id']}", csrf=False))[0] == 403
    assert (await alice.call("DELETE", f"/tokens/{made['id']}"))[0] == 204
    status, gone = await alice.call("GET", "/subscriptions", token=made["token"])
    assert status == 401 and gone["error"] == "invalid_token"


@pytest.mark.parametrize("url, why", [
    ("http://93.184.216.34/hook", "https"),
    ("https://10.1.2.3/hook", "non-public"),
    ("https://127.0.0.1:8080/hook", "non-public"),
    ("https://169.254.169.254/latest/meta-data", "non-public"),
    ("https://[::1]/hook", "non-public"),
    ("https://user:pw@93.184.216.34/hook", "user or password"),
    ("ftp://93.184.216.34/hook", "https"),
])
async def test_targets_off_the_public_internet_are_refused_at_creation(api, db, sodium, url, why):
    alice = await user(await api(), db)
    status, answer = await alice.call("POST", "/subscriptions", json=body(target_url=url))
    assert status == 400 and answer["error"] == "invalid_target" and why in answer["description"]
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions") == 0


async def test_a_name_resolving_to_a_private_address_is_refused_and_the_test_allowance_is_explicit(api, db, sodium):
    dns = await kit.TinyDns().start()
    try:
        dns.records.update({"inside.test": "10.0.0.7", "outside.test": "93.184.216.34"})
        alice = await user(await api(INDEXIUM_NOTIFY_NAMESERVER=dns.address), db)
        status, answer = await alice.call("POST", "/subscriptions", json=body(target_url="https://inside.test/h"))
        assert status == 400 and "non-public" in answer["description"]
        assert (await alice.call("POST", "/subscriptions", json=body(target_url="https://outside.test/h")))[0] == 201
        assert (await alice.call("POST", "/subscriptions", json=body(target_url="https://nowhere.test/h")))[0] == 400
        # tests and intranets only: http and named hosts/CIDRs, both off unless set
        bob = await user(await api(INDEXIUM_NOTIFY_NAMESERVER=dns.address, INDEXIUM_NOTIFY_ALLOW_HTTP="true",
                                   INDEXIUM_NOTIFY_ALLOWED_TARGETS="127.0.0.1,10.0.0.0/24"), db, 2, "bob")
        for url in ("http://127.0.0.1:9/h", "http://inside.test/h"):
            assert (await bob.call("POST", "/subscriptions", json=body(target_url=url)))[0] == 201, url
        assert (await bob.call("POST", "/subscriptions", json=body(target_url="http://127.0.0.2/h")))[0] == 400
    finally:
        dns.close()


async def test_what_is_subscribed_to_is_checked(api, db, sodium):
    alice = await user(await api(), db)
    cases = [
        (body(mod=None), "exactly one"),
        (body(author="caffeine"), "exactly one"),
        (body(mod="nosuchmod"), "No mod"),
        (body(loaders=["spigot"]), "unknown loader"),
        (body(game_versions=["1.20.99"]), "not a Minecraft version"),
        (body(game_versions=["1.20.1"], game_version_min="1.20"), "not both"),
        (body(version_types=["stable"]), "not release"),
        (body(format="slack"), "format"),
        (body(unexpected=1), "unknown field"),
        ({**body(mod=None), "search": {"q": "x" * 201}}, "200"),
    ]
    for sent, why in cases:
        status, answer = await alice.call("POST", "/subscriptions", json=sent)
        assert status == 400 and why.lower() in answer["description"].lower(), (sent, answer)
    for sent in (body(mod=None, author="Caffeine", game_version_min="1.20.1"),
                 {**body(mod=None), "search": {"q": "fast", "category": ["optimization"]}, "format": "discord"}):
        status, answer = await alice.call("POST", "/subscriptions", json=sent)
        assert status == 201, answer
    assert answer["search"] == {"q": "fast", "category": ["optimization"]} and answer["format"] == "discord"


async def test_the_subscription_limit_is_a_clear_refusal(api, db, sodium):
    alice = await user(await api(INDEXIUM_NOTIFY_MAX_SUBSCRIPTIONS_PER_USER="2"), db)
    for _ in range(2):
        assert (await alice.call("POST", "/subscriptions", json=body()))[0] == 201
    status, answer = await alice.call("POST", "/subscriptions", json=body())
    assert status == 403 and answer["error"] == "subscription_limit" and "2 subscriptions" in answer["description"]


async def test_a_users_subscriptions_are_their_own_and_resume_redeliver_delete_work(api, db, sodium):
    client = await api()
    alice, bob = await user(client, db), await user(client, db, 2, "bob")
    _, made = await alice.call("POST", "/subscriptions", json=body())
    sid = made["id"]
    for method, path in (("GET", ""), ("DELETE", ""), ("POST", "/resume"), ("GET", "/deliveries")):
        assert (await bob.call(method, f"/subscriptions/{sid}{path}"))[0] == 404
    await db.execute("UPDATE notify_subscriptions SET state = 'paused', paused_reason = 'HTTP 500', "
                     "consecutive_failures = 50")
    vid = await db.fetchval("SELECT id FROM mod_versions")
    (did,) = await notify_q.enqueue(db, vid, [made["id"]], event="version.published", now=datetime.now(UTC),
                                    give_up_s=60)
    await db.execute("UPDATE notify_deliveries SET state = 'failed'")
    status, shown = await alice.call("GET", f"/subscriptions/{sid}")
    assert shown["state"] == "paused" and shown["paused_reason"] == "HTTP 500"
    status, resumed = await alice.call("POST", f"/subscriptions/{sid}/resume")
    assert status == 200 and resumed["state"] == "active" and resumed["consecutive_failures"] == 0
    assert (await alice.call("POST", f"/subscriptions/{sid}/deliveries/{did}/redeliver"))[0] == 202
    status, log = await alice.call("GET", f"/subscriptions/{sid}/deliveries")
    assert [(d["id"], d["state"], d["redelivered"]) for d in log["deliveries"]] == [(str(did), "pending", True)]
    assert (await alice.call("DELETE", f"/subscriptions/{sid}"))[0] == 204
    assert await db.fetchval("SELECT count(*) FROM notify_deliveries") == 0


async def test_without_a_key_subscriptions_say_they_are_off(api, db, sodium):
    alice = await user(await api(INDEXIUM_NOTIFY_SECRET_KEY=None), db)
    status, answer = await alice.call("POST", "/subscriptions", json=body())
    assert status == 503 and answer["error"] == "notifications_off"
