"""Sign-in, sessions and CSRF against FakeGitHub (a real HTTP server) and a real PostgreSQL/NATS."""

from __future__ import annotations

import asyncio
from datetime import timedelta
import secrets
from urllib.parse import parse_qs, urlsplit

import aiohttp
import nats
import pytest
from aiohttp import CookieJar
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.core.state import API
from indexium_api.settings import Settings
from indexium_contracts import github as github_contract, ingest, onboarding
from indexium_db.queries import deadletters as deadletters_q, site as site_q, github as github_q
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_ops.cli import attribute_dead_letters
from indexium_platform.consumer import PullConsumer
from indexium_platform.settings import SettingsError, load

SECRET = secrets.token_urlsafe(40)


@pytest.fixture
async def gh():
    async with FakeGitHub() as gh:
        user = gh.state.user("alice")
        mine = gh.add_repo("alice", "lanterns")
        gh.add_installation([mine], account=user)
        other = gh.add_repo("bob", "secret")
        gh.add_installation([other], account=gh.state.user("bob"))
        gh.oauth.sign_in_as("alice")
        yield gh


@pytest.fixture
async def site(gh, database_url, nats_url):
    clients: list[TestClient] = []

    async def make(**env) -> TestClient:
        values = {"DATABASE_URL": database_url, "NATS_URL": nats_url,
                  "INDEXIUM_GITHUB_URL": gh.base_url, "INDEXIUM_GITHUB_API_URL": gh.api_url,
                  "INDEXIUM_GITHUB_CLIENT_ID": gh.oauth.client_id,
                  "INDEXIUM_GITHUB_CLIENT_SECRET": gh.oauth.client_secret,
                  "INDEXIUM_SESSION_SECRET": SECRET, "INDEXIUM_ADMIN_LOGINS": "root", **env}
        client = TestClient(TestServer(create_app(load(Settings, values))), cookie_jar=CookieJar(unsafe=True))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for c in clients:
        await c.close()


async def _authorize(client: TestClient) -> str:
    """Start a sign-in and let the fake GitHub approve it: the callback path and query to visit."""
    start = await client.get("/auth/github/login", allow_redirects=False)
    assert start.status == 302
    async with aiohttp.ClientSession() as s, s.get(start.headers["Location"], allow_redirects=False) as r:
        assert r.status == 302
        back = urlsplit(r.headers["Location"])
    return f"{back.path}?{back.query}"


async def _sign_in(client: TestClient) -> None:
    r = await client.get(await _authorize(client), allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/dashboard", await r.text()


async def _csrf(client: TestClient) -> str:
    body = await (await client.get("/dashboard")).text()
    return body.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]


async def test_sign_in_creates_a_server_side_session_with_safe_cookie(site, gh, db):
    client = await site()
    start = await client.get("/auth/github/login", allow_redirects=False)
    query = parse_qs(urlsplit(start.headers["Location"]).query)
    assert query["client_id"] == [gh.oauth.client_id]
    assert query["redirect_uri"][0].endswith("/auth/github/callback") and len(query["state"][0]) >= 32
    nonce = start.cookies["indexium_signin"]
    assert nonce["httponly"] and nonce["samesite"] == "Lax" and nonce["path"] == "/auth/github"
    async with aiohttp.ClientSession() as s, s.get(start.headers["Location"], allow_redirects=False) as r:
        back = urlsplit(r.headers["Location"])
    r = await client.get(f"{back.path}?{back.query}", allow_redirects=False)
    assert r.status == 303
    cookie = r.cookies["indexium_session"]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["secure"] and cookie["path"] == "/"
    rows = await db.fetch("SELECT * FROM site_sessions")
    assert len(rows) == 1 and rows[0]["login"] == "alice"
    stored = " ".join(str(v) for v in rows[0].values())
    assert cookie.value not in stored  # only its HMAC is kept
    (token,) = gh.oauth.tokens  # the user token GitHub issued is kept nowhere
    assert token not in stored
    body = await (await client.get("/dashboard")).text()
    assert "alice/lanterns" in body and "bob/secret" not in body and token not in body


async def test_a_session_unused_for_an_hour_ends_and_its_use_is_written_at_most_every_five_minutes(site, db):
    client = await site()
    await _sign_in(client)

    async def row():
        return await db.fetchrow("SELECT xmin::text AS version, last_seen_at FROM site_sessions")

    signed_at = await row()
    for _ in range(3):
        assert "alice/lanterns" in await (await client.get("/dashboard")).text()
    assert tuple(await row()) == tuple(signed_at)  # within five minutes: reads only, no new row version

    # Last used 6 minutes ago: the next request writes now once, the ones after it nothing.
    await db.execute("UPDATE site_sessions SET last_seen_at = now() - interval '6 minutes'")
    before = await row()
    assert "alice/lanterns" in await (await client.get("/dashboard")).text()
    seen = await row()
    assert seen["version"] != before["version"] and seen["last_seen_at"] > before["last_seen_at"] + timedelta(minutes=5)
    for _ in range(2):
        assert "alice/lanterns" in await (await client.get("/dashboard")).text()
    assert tuple(await row()) == tuple(seen)

    # Unused for an hour: signed out, though 11 of its 12 hours are left.
    await db.execute("UPDATE site_sessions SET last_seen_at = now() - interval '61 minutes'")
    body = await (await client.get("/dashboard")).text()
    assert "alice/lanterns" not in body and "Sign in" in body
    # and the next sign-in purges it.
    await _sign_in(client)
    assert await db.fetchval("SELECT count(*) FROM site_sessions") == 1


async def _dead_letter(db, repo, seq: int, tag: str, *, attributed: bool = True) -> None:
    event = ingest.ReleaseReceived(delivery_id=f"d-{seq}", received_at="2026-11-30T10:00:00Z",
                                   webhook=github_contract.ReleaseWebhook(
        action="published", release=github_contract.Release(id=seq, tag_name=tag),
        repository=github_contract.Repository(id=repo.id, name=repo.name, full_name=repo.full_name,
                                              owner=github_contract.Account(id=repo.owner.id, login=repo.owner.login))))
    payload = ingest.encoder.encode(event)
    repo_id, tag_name = ingest.about_message(payload) if attributed else (None, None)
    await deadletters_q.insert(db, consumer="indexer", subject=ingest.RELEASE, msg_id=f"d-{seq}",
                               stream_sequence=seq, category="corrupt_zip", error=f"{tag}: broken", attempts=1,
                               payload=payload, github_repo_id=repo_id, tag_name=tag_name)


async def test_the_dashboard_reads_only_its_repositories_newest_dead_letters_and_counts_the_rest(site, gh, db):
    mine, other = gh.repo("alice/lanterns"), gh.repo("bob/secret")
    await _dead_letter(db, mine, 1, "v0.legacy", attributed=False)  # written before 0013
    for i in range(2, 14):
        await _dead_letter(db, mine, i, f"v1.{i}")
    for i in range(100, 105):
        await _dead_letter(db, other, i, f"bob-{i}")
    assert await attribute_dead_letters(db) == 1  # the setup step attributes the old row once
    assert await attribute_dead_letters(db) == 0
    client = await site()
    await _sign_in(client)
    body = await (await client.get("/dashboard")).text()
    shown = [f"v1.{i}" for i in range(4, 14)]  # the newest ten of alice's thirteen
    assert all(f"<strong>{tag}</strong>" in body for tag in shown)
    assert "v1.3<" not in body and "v1.2<" not in body and "v0.legacy" not in body
    assert "and 3 more, older." in body
    assert "bob-" not in body


async def test_the_dashboard_shows_a_dead_letters_tag_without_reading_its_payload(site, gh, db):
    """The tag is kept beside the dead letter (0018): the page reads no payload, which is the whole
    release event (up to 1 MiB each, ten a repository)."""
    mine = gh.repo("alice/lanterns")
    await _dead_letter(db, mine, 1, "v2.legacy", attributed=False)  # written before 0018: no tag yet
    await deadletters_q.insert(db, consumer="indexer", subject=ingest.RELEASE, msg_id="d-2", stream_sequence=2,
                               category="corrupt_zip", error="broken", attempts=1, payload=b"\xc1" * 100_000,
                               github_repo_id=mine.id, tag_name="v3.0\x00" + "x" * 300)
    rows = await site_q.open_dead_letters(db, [mine.id], 10)
    assert "payload" not in rows[0].keys() and [r["tag_name"] for r in rows][0] == "v3.0\ufffd" + "x" * 250
    assert await attribute_dead_letters(db) == 1  # the setup step gives the old row its repository and tag
    assert await attribute_dead_letters(db) == 0
    client = await site()
    await _sign_in(client)
    body = await (await client.get("/dashboard")).text()
    assert "<strong>v2.legacy</strong>" in body and "<strong>v3.0\ufffd" in body


async def test_secure_cookie_when_the_public_url_is_https(site):
    client = await site(INDEXIUM_PUBLIC_URL="https://indexium.example")
    start = await client.get("/auth/github/login", allow_redirects=False)
    assert start.cookies["indexium_signin"]["secure"]
    query = parse_qs(urlsplit(start.headers["Location"]).query)
    assert query["redirect_uri"] == ["https://indexium.example/auth/github/callback"]


async def test_missing_forged_and_reused_state_sign_nobody_in(site, gh, db):
    client = await site()
    for path in ("/auth/github/callback?code=x", "/auth/github/callback?code=x&state=forged"):
        r = await client.get(path, allow_redirects=False)
        assert r.status == 400 and "indexium_session" not in r.cookies
        assert "Sign-in link not valid" in await r.text()
    callback = await _authorize(client)
    assert (await client.get(callback, allow_redirects=False)).status == 303
    again = await client.get(callback, allow_redirects=False)
    assert again.status == 400  # single use
    assert await db.fetchval("SELECT count(*) FROM site_sessions") == 1
    assert gh.oauth.exchanges == 1


async def test_state_from_another_browser_is_refused(site, gh, db):
    mine, theirs = await site(), None
    callback = await _authorize(mine)
    theirs = TestClient(mine.server, cookie_jar=CookieJar(unsafe=True))  # same app, no nonce cookie
    try:
        r = await theirs.get(callback, allow_redirects=False)
        assert r.status == 400
    finally:
        await theirs.session.close()
    assert gh.oauth.exchanges == 0 and await db.fetchval("SELECT count(*) FROM site_sessions") == 0


@pytest.mark.parametrize("code, status, text", [
    ("bad_verification_code", 400, "Sign-in expired"),
    ("incorrect_client_credentials", 502, "App credentials"),
])
async def test_github_refusals_are_clear_pages(site, gh, db, code, status, text):
    client = await site()
    callback = await _authorize(client)
    gh.oauth.refuse_next = code  # answered 200 with {"error": code}, as GitHub does
    r = await client.get(callback, allow_redirects=False)
    assert r.status == status and r.content_type == "text/html"
    assert text in await r.text() and "indexium_session" not in r.cookies
    assert await db.fetchval("SELECT count(*) FROM site_sessions") == 0


async def test_wrong_client_secret_is_a_clear_page(site, db):
    client = await site(INDEXIUM_GITHUB_CLIENT_SECRET="not-the-secret")
    r = await client.get(await _authorize(client), allow_redirects=False)
    assert r.status == 502 and "App credentials" in await r.text()


async def test_github_outage_is_a_clear_page_never_a_500(site, gh, db):
    client = await site()
    callback = await _authorize(client)
    gh.fail_next(status=503, count=1, where="api")  # the token exchange
    r = await client.get(callback, allow_redirects=False)
    assert r.status == 502 and "GitHub is not answering" in await r.text()
    callback = await _authorize(client)
    gh.fail_next(status=500, count=1, where="api")
    r = await client.get(callback, allow_redirects=False)  # the exchange works, then GET /user fails
    assert r.status == 502
    dead = await site(INDEXIUM_GITHUB_URL=f"http://127.0.0.1:{free_port()}")  # nothing listens
    start = await dead.get("/auth/github/login", allow_redirects=False)
    state = parse_qs(urlsplit(start.headers["Location"]).query)["state"][0]
    r = await dead.get(f"/auth/github/callback?code=x&state={state}", allow_redirects=False)
    assert r.status == 502 and "GitHub is not answering" in await r.text()
    assert await db.fetchval("SELECT count(*) FROM site_sessions") == 0


async def test_sign_in_not_configured_says_so():
    settings = load(Settings, {"NATS_URL": f"nats://127.0.0.1:{free_port()}"})
    client = TestClient(TestServer(create_app(settings)))
    await client.start_server()
    try:
        r = await client.get("/auth/github/login", allow_redirects=False)
        assert r.status == 200 and "Sign-in is not configured" in await r.text()
    finally:
        await client.close()


@pytest.mark.parametrize("secret", [None, "too-short"])
def test_sign_in_without_a_strong_session_secret_fails_start_up(secret):
    env = {"INDEXIUM_GITHUB_CLIENT_ID": "id", "INDEXIUM_GITHUB_CLIENT_SECRET": "s"}
    if secret:
        env["INDEXIUM_SESSION_SECRET"] = secret
    with pytest.raises(SettingsError, match="INDEXIUM_SESSION_SECRET"):
        load(Settings, env)


async def test_sign_out_needs_the_csrf_token_and_ends_the_session_on_the_server(site, db):
    client = await site()
    await _sign_in(client)
    token = await _csrf(client)
    r = await client.post("/auth/sign-out", data={"csrf_token": "wrong"}, allow_redirects=False)
    assert r.status == 403 and await db.fetchval("SELECT count(*) FROM site_sessions") == 1
    cookie = client.session.cookie_jar.filter_cookies(client.make_url("/"))["indexium_session"].value
    r = await client.post("/auth/sign-out", data={"csrf_token": token}, allow_redirects=False)
    assert r.status == 303 and await db.fetchval("SELECT count(*) FROM site_sessions") == 0
    replay = TestClient(client.server, cookie_jar=CookieJar(unsafe=True))
    try:
        replay.session.cookie_jar.update_cookies({"indexium_session": cookie}, client.make_url("/"))
        assert "Sign in with GitHub" in await (await replay.get("/dashboard")).text()
    finally:
        await replay.session.close()


async def test_check_again_goes_over_jetstream_with_csrf_and_a_rate_limit(site, gh, db, nats_url, github_role):
    client = await site()
    await asyncio.wait_for(client.app[API].bus.subscribed.wait(), 30)
    await _sign_in(client)
    token = await _csrf(client)
    repo = gh.state.find_repo("alice", "lanterns")
    other = gh.state.find_repo("bob", "secret")
    nc = await nats.connect(nats_url)
    try:
        sub = await nc.subscribe(ingest.CATCH_UP)
        r = await client.post("/dashboard/check", data={"repository_id": str(repo.id)}, allow_redirects=False)
        assert r.status == 403  # no CSRF token
        r = await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": str(other.id)},
                              allow_redirects=False)
        assert r.status == 403  # not a repository GitHub listed for alice
        r = await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": str(repo.id)},
                              allow_redirects=False)
        assert r.status == 303 and "checked=" in r.headers["Location"]
        msg = await sub.next_msg(timeout=5)
        event = ingest.decoder.decode(msg.data)
        assert isinstance(event, ingest.CatchUpRequested)
        assert (event.github_repo_id, event.requested_by) == (repo.id, "alice")
        info = await nc.jetstream().stream_info(ingest.STREAM.name)
        assert info.state.messages == 1  # stored on INGEST, for the GitHub role's consumer
        for _ in range(4):
            await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": str(repo.id)},
                              allow_redirects=False)
        r = await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": str(repo.id)},
                              allow_redirects=False)
        assert "limited=" in r.headers["Location"]
        assert (await nc.jetstream().stream_info(ingest.STREAM.name)).state.messages == 5
        assert len(github_role) <= 5  # the GitHub role's reader took them (limits retention keeps them stored)
    finally:
        await nc.drain()
    # The site wrote nothing of the GitHub role's own.
    assert await github_q.get_repository(db, repo.id) is None


async def test_review_needs_an_admin_and_csrf(site, db):
    client = await site()
    await _sign_in(client)  # alice is not in INDEXIUM_ADMIN_LOGINS
    assert (await client.get("/review")).status == 403
    token = await _csrf(client)
    r = await client.post("/review/00000000-0000-0000-0000-000000000000",
                          data={"csrf_token": token, "action": "approve"}, allow_redirects=False)
    assert r.status == 403


@pytest.fixture
async def github_role(nats_url):
    """A reader of INGEST/github as the GitHub role's consumer loop reads it: what it took."""
    taken: list = []

    async def handle(msg) -> None:
        taken.append(ingest.decoder.decode(msg.data))
        await msg.ack()

    nc = await nats.connect(nats_url)
    consumer = PullConsumer(nc.jetstream(), onboarding.GITHUB, handle, concurrency=1, grace_s=1)
    await consumer.start()
    try:
        yield taken
    finally:
        await consumer.stop()
        await nc.drain()


async def test_sign_ins_started_are_capped_per_client_and_in_all(site, db, monkeypatch):
    """1,500 GET /auth/github/login in a second each wrote a row: now one client may hold
    STATES_AT_ONCE of them (then a 429 page), another client its own, and the table at most
    MAX_LIVE_STATES (then a 503 page); nothing over a cap writes a row."""
    from indexium_api.site import oauth
    from indexium_api.core import site as site_state

    monkeypatch.setattr(oauth, "MAX_LIVE_STATES", site_state.STATES_AT_ONCE + 2)
    # The /auth/* rate limit off here: this is the cap on rows, behind it.
    client = await site(INDEXIUM_API_TRUSTED_PROXIES="127.0.0.0/8", INDEXIUM_API_RATE_LIMIT_AUTH_PER_MINUTE="0")
    one, other, third = ({"X-Forwarded-For": f"203.0.113.{n}"} for n in (1, 2, 3))
    statuses = [(await client.get("/auth/github/login", headers=one, allow_redirects=False)).status
                for _ in range(site_state.STATES_AT_ONCE + 5)]
    assert statuses == [302] * site_state.STATES_AT_ONCE + [429] * 5
    refused = await client.get("/auth/github/login", headers=one, allow_redirects=False)
    assert refused.headers["Content-Type"].startswith("text/html") and int(refused.headers["Retry-After"]) >= 1
    assert await db.fetchval("SELECT count(*) FROM site_oauth_states") == site_state.STATES_AT_ONCE
    for _ in range(2):
        assert (await client.get("/auth/github/login", headers=other, allow_redirects=False)).status == 302
    full = await client.get("/auth/github/login", headers=third, allow_redirects=False)
    assert full.status == 503 and full.headers["Retry-After"] == "60" and "busy" in await full.text()
    assert await db.fetchval("SELECT count(*) FROM site_oauth_states") == oauth.MAX_LIVE_STATES


async def test_expired_sign_ins_are_purged_by_time_not_only_at_a_sign_in(site, db, monkeypatch):
    from indexium_api.site import oauth

    monkeypatch.setattr(oauth, "PURGE_EVERY_S", 0.05)
    await db.execute("""INSERT INTO site_oauth_states (state_hash, browser_hash, expires_at) VALUES
                        ('\\x01', '\\x01', now() - interval '1 second'), ('\\x02', '\\x02', now() + interval '5 minutes')""")
    await site()
    for _ in range(100):
        if await db.fetchval("SELECT count(*) FROM site_oauth_states") == 1:
            break
        await asyncio.sleep(0.02)
    assert await db.fetchval("SELECT state_hash FROM site_oauth_states") == b"\x02"  # the live one stays


# ---- the header: a Sign in control on every page, Dashboard and Sign out once signed in ----------

_SIGN_IN = '<a class="button signin" href="/auth/github/login">Sign in</a>'


def _nav(body: str) -> str:
    return body.split('<nav aria-label="Site">', 1)[1].split("</nav>", 1)[0]


async def test_every_page_has_a_sign_in_control_and_signed_in_the_same_pages_say_who(site, db):
    client = await site()
    anonymous = await client.get("/")
    assert anonymous.status == 200 and _SIGN_IN in _nav(await anonymous.text())
    assert "Cookie" in anonymous.headers["Vary"].split(", ") and "ETag" in anonymous.headers
    etag = anonymous.headers["ETag"]
    for path, status in (("/mods/no-such-mod", 404), ("/nowhere", 404), ("/review", 403)):
        r = await client.get(path, headers={"Accept": "text/html"})
        assert r.status == status and _SIGN_IN in _nav(await r.text()), path

    await _sign_in(client)
    token = await _csrf(client)
    # The cached home page, its signed-out ETag offered: a full page with this visitor's header.
    for path, status in (("/", 200), ("/mods/no-such-mod", 404), ("/nowhere", 404), ("/review", 403)):
        r = await client.get(path, headers={"Accept": "text/html", "If-None-Match": etag})
        body = await r.text()
        nav = _nav(body)
        assert r.status == status, path
        assert "Sign in" not in nav and '<a href="/dashboard">Dashboard</a>' in nav, path
        assert f'name="csrf_token" value="{token}"' in nav and "Sign out" in nav and "alice" in nav, path
        assert r.headers["Cache-Control"] == "no-store" and "ETag" not in r.headers, path
        nonce = r.headers["Content-Security-Policy"].split("'nonce-", 1)[1].split("'", 1)[0]
        assert f'<script src="/static/site/site.js" defer nonce="{nonce}"></script>' in body, path
    # Another visitor still gets the shared page, signed out, from the cache.
    other = TestClient(client.server)
    try:
        r = await other.get("/")
        assert r.headers["X-Cache"] == "HIT" and _SIGN_IN in _nav(await r.text())
    finally:
        await other.session.close()
    # Sign out from the header's form on the home page: signed out everywhere after.
    home = await (await client.get("/")).text()
    form_token = _nav(home).split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    r = await client.post("/auth/sign-out", data={"csrf_token": form_token}, allow_redirects=False)
    assert r.status == 303 and await db.fetchval("SELECT count(*) FROM site_sessions") == 0
    assert _SIGN_IN in _nav(await (await client.get("/")).text())


async def test_a_dead_session_cookie_gets_the_shared_page_and_is_cleared(site, db):
    client = await site()
    await _sign_in(client)
    await db.execute("DELETE FROM site_sessions")  # (ended elsewhere: idle, or signed out on another device)
    r = await client.get("/")
    assert _SIGN_IN in _nav(await r.text()) and r.headers["Cache-Control"] == "no-store"
    assert r.cookies["indexium_session"].value == ""  # cleared: no session read on the next page


async def test_the_dashboard_shows_every_project_of_a_repository_with_its_versions(site, gh, db):
    """A repository publishing two mods has two projects (issue 34): the dashboard lists both,
    each with its own versions (it showed one of them before)."""
    from indexium_db.queries import mods as mods_q  # noqa: PLC0415

    repo = gh.repo("alice/lanterns")
    await mods_q.upsert_author(db, repo.owner.id, "alice")
    for manifest_id, name, tag in (("lantern_core", "Lantern Core", "core-1.0"),
                                   ("lantern_glow", "Lantern Glow", "glow-2.0")):
        mod = await mods_q.create(db, github_repo_id=repo.id, repo_full_name="alice/lanterns", owner_id=repo.owner.id,
                                  owner_login="alice", manifest_id=manifest_id, default_branch="main", categories=[],
                                  card=mods_q.Card(name, "", "", [], [], {}, "both"))
        await db.execute("INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, status)"
                         " VALUES ($1, $2::text, 1, $2::text, 'public')", mod["id"], tag)
        await mods_q.refresh_rollup(db, mod["id"])
    client = await site()
    await _sign_in(client)
    body = await (await client.get("/dashboard")).text()
    for slug, name, tag in (("lantern_core", "Lantern Core", "core-1.0"), ("lantern_glow", "Lantern Glow", "glow-2.0")):
        assert f'<a href="/mods/{slug}">{name} on Indexium</a>' in body
        assert f"Versions of {name}" in body
        section = body.split(f"Versions of {name}", 1)[1].split("</ul>", 1)[0]
        assert f"<strong>{tag}</strong>" in section
