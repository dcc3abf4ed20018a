"""The dashboard's subscription and token forms (site/subscriptions.py) through the app on a
real PostgreSQL: CSRF and cross-site refusals, refusals shown on the page (never a silent
drop), the limits, the secret and the token shown once, and ownership: another user's
subscription, delivery or token is never seen or acted on."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_db.queries import notify as notify_q
from indexium_devstack import notifykit as kit
from indexium_notify import signing
from indexium_platform.settings import load

from .test_auth import gh  # noqa: F401 - a fixture

SESSION_SECRET = "s" * 40
KEY = "k" * 40
PUBLIC_TARGET = "https://93.184.216.34/hook"


@pytest.fixture
def site(make_client, db):
    def make(**env):
        return make_client(**{"INDEXIUM_SESSION_SECRET": SESSION_SECRET, "INDEXIUM_NOTIFY_SECRET_KEY": KEY,
                              "INDEXIUM_API_SEARCH_INDEX": "false", **env})
    return make


class Browser:
    """One signed-in user posting the site's forms as a browser would (same-origin)."""

    def __init__(self, client, cookie, csrf):
        self.client, self.cookie, self.csrf = client, cookie, csrf

    async def get(self, path):
        r = await self.client.get(path, headers={"Cookie": f"indexium_session={self.cookie}"}, allow_redirects=False)
        return r.status, await r.text(), r

    async def post(self, path, data=None, *, csrf=True, fetch_site="same-origin"):
        form = list((data or {}).items()) if isinstance(data, dict) else list(data or [])
        if csrf:
            form.append(("csrf_token", self.csrf))
        headers = {"Cookie": f"indexium_session={self.cookie}"}
        if fetch_site:
            headers["Sec-Fetch-Site"] = fetch_site
        r = await self.client.post(path, data=form, headers=headers, allow_redirects=False)
        return r.status, await r.text(), r


async def browser(client, db, uid=1, login="alice") -> Browser:
    cookie, csrf = await kit.sign_in(db, SESSION_SECRET, github_user_id=uid, login=login)
    return Browser(client, cookie, csrf)


@pytest.fixture
async def sodium(db):
    m = await kit.mod(db, "sodium", owner="caffeine", owner_id=77)
    await kit.version(db, m, "1.0", [(["fabric"], ["1.20.1"])])
    return m


def form(**over):
    return {"kind": "mod", "mod": "sodium", "gv_mode": "any", "target_url": PUBLIC_TARGET, "format": "indexium", **over}


def refusal(html: str) -> str:
    found = re.search(r'<p class="refused" role="alert">(.*?)</p>', html, re.S)
    assert found, html[:3000]
    return unescape(re.sub(r"<[^>]+>", "", found.group(1)))


async def test_the_page_needs_a_session_and_carries_a_nonce_csp(site, db):
    client = await site()
    r = await client.get("/dashboard/subscriptions")
    assert r.status == 200 and "Sign in with GitHub" in await r.text()
    alice = await browser(client, db)
    status, html, r = await alice.get("/dashboard/subscriptions")
    assert status == 200 and "New subscription" in html and "Personal API tokens" in html
    csp = r.headers["Content-Security-Policy"]
    assert "'unsafe-inline'" not in csp and "'nonce-" in csp and r.headers["Cache-Control"] == "no-store"
    assert not re.search(r"<script(?![^>]*\bsrc=)", html) and not re.search(r"\son[a-z]+=", html)


async def test_create_shows_the_secret_once_and_lists_it(site, db, sodium):
    alice = await browser(await site(), db)
    status, html, r = await alice.post("/dashboard/subscriptions", [*form().items(), ("loader", "fabric"),
                                                                     ("version_type", "release")])
    assert status == 201, html[:2000]
    assert r.headers["Cache-Control"] == "no-store"
    row = await db.fetchrow("SELECT * FROM notify_subscriptions")
    secret = signing.secret_for(KEY.encode(), row["secret_salt"])
    assert secret in html and "shown only this once" in html
    assert (row["kind"], list(row["loaders"]), list(row["version_types"])) == ("mod", ["fabric"], ["release"])
    status, again, _ = await alice.get("/dashboard/subscriptions")
    assert status == 200 and "Mod sodium" in again and secret not in again
    status, detail, _ = await alice.get(f"/dashboard/subscriptions/{row['id']}")
    assert status == 200 and secret not in detail and "No version has matched yet" in detail


async def test_author_search_and_game_version_modes_are_the_api_bodies(site, db, sodium):
    alice = await browser(await site(), db)
    assert (await alice.post("/dashboard/subscriptions", form(kind="author", author="Caffeine", gv_mode="min",
                                                              game_version_min="1.20.1")))[0] == 201
    assert (await alice.post("/dashboard/subscriptions", form(
        kind="search", q="  fast   rendering ", category="optimization", gv_mode="exact",
        game_versions="1.20.1, 1.20.4", format="discord", game_version_min="ignored")))[0] == 201
    rows = await db.fetch("SELECT * FROM notify_subscriptions ORDER BY created_at")
    assert (rows[0]["kind"], rows[0]["author_login"], rows[0]["game_version_min"]) == ("author", "caffeine", "1.20.1")
    assert (rows[1]["kind"], rows[1]["search_q"], list(rows[1]["search_categories"]), list(rows[1]["game_versions"]),
            rows[1]["game_version_min"], rows[1]["format"]) == (
        "search", "fast rendering", ["optimization"], ["1.20.1", "1.20.4"], None, "discord")


async def test_posts_without_the_csrf_token_or_from_another_site_are_refused(site, db, sodium):
    alice = await browser(await site(), db)
    status, html, _ = await alice.post("/dashboard/subscriptions", form(), csrf=False)
    assert status == 403 and "Form expired" in html
    for fetch_site in ("cross-site", "same-site"):
        status, html, _ = await alice.post("/dashboard/subscriptions", form(), fetch_site=fetch_site)
        assert status == 403 and "only be taken from Indexium's own pages" in unescape(html)
    status, _, _ = await alice.post("/dashboard/tokens", {"name": "bot"}, csrf=False)
    assert status == 403
    status, _, _ = await alice.post("/dashboard/tokens", {"name": "bot"}, fetch_site="cross-site")
    assert status == 403
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions") == 0
    assert await db.fetchval("SELECT count(*) FROM user_api_tokens") == 0
    # A browser's own form post without Sec-Fetch-Site (an older browser) is left to the token.
    assert (await alice.post("/dashboard/subscriptions", form(), fetch_site=None))[0] == 201
    nobody = Browser(alice.client, "not-a-session", alice.csrf)
    status, html, _ = await nobody.post("/dashboard/subscriptions", form())
    assert status == 403 and "Not signed in" in html


@pytest.mark.parametrize("over, status, says", [
    ({"target_url": "https://10.1.2.3/hook"}, 400, "non-public"),
    ({"target_url": "https://127.0.0.1/hook"}, 400, "non-public"),
    ({"target_url": "http://93.184.216.34/hook"}, 400, "https"),
    ({"target_url": "not a url"}, 400, "target_url refused"),
    ({"target_url": "https://93.184.216.34/" + "a" * 2100}, 400, "at most 2048 characters"),
    ({"target_url": ""}, 400, "Give the address"),
    ({"mod": "no-such-mod"}, 400, "No mod 'no-such-mod'"),
    ({"mod": ""}, 400, "Give the mod's slug"),
    ({"gv_mode": "min", "game_version_min": "9.9.9"}, 400, "is not a Minecraft version"),
    ({"kind": "search", "q": "x" * 201}, 400, "at most 200 characters"),
    ({"format": "carrier-pigeon"}, 400, "format: 'indexium' (signed JSON) or 'discord'"),
    ({"kind": "search", "category": "storage " * 21}, 400, "search.category: at most 20 values"),
    ({"gv_mode": "exact", "game_versions": " ".join(["1.20.1"] * 51)}, 400, "game_versions: at most 50 values"),
])
async def test_refusals_are_said_on_the_page_with_the_form_kept(site, db, sodium, over, status, says):
    alice = await browser(await site(), db)
    got, html, _ = await alice.post("/dashboard/subscriptions", form(**over))
    assert got == status, html[:2000]
    if says is None:
        return
    assert says in refusal(html)
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions") == 0
    # What was typed is still in the form (escaped), to correct and send again.
    shown = (over.get("target_url") or "")[:200]
    if shown:
        assert shown in unescape(html)


async def test_too_many_loaders_and_an_unknown_loader_are_refused(site, db, sodium):
    alice = await browser(await site(), db)
    got, html, _ = await alice.post("/dashboard/subscriptions", [*form().items(), ("loader", "spigot")])
    assert got == 400 and "unknown loader 'spigot'" in refusal(html)
    many = [*form().items(), *[("loader", f"l{i}") for i in range(25)]]
    got, html, _ = await alice.post("/dashboard/subscriptions", many)
    assert got == 400 and "at most 20 values" in refusal(html)


async def test_the_per_user_limits_are_said_on_the_page(site, db, sodium):
    client = await site(INDEXIUM_NOTIFY_MAX_SUBSCRIPTIONS_PER_USER="1", INDEXIUM_API_MAX_TOKENS_PER_USER="1")
    alice = await browser(client, db)
    assert (await alice.post("/dashboard/subscriptions", form()))[0] == 201
    got, html, _ = await alice.post("/dashboard/subscriptions", form(target_url="https://93.184.216.34/second"))
    assert got == 403 and "You have 1 subscriptions, the most one user may have; delete one first." in refusal(html)
    assert "https://93.184.216.34/second" in html  # kept in the form
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions") == 1
    assert (await alice.post("/dashboard/tokens", {"name": "one"}))[0] == 201
    got, html, _ = await alice.post("/dashboard/tokens", {"name": "two"})
    assert got == 403 and "You have 1 API tokens" in html
    assert await db.fetchval("SELECT count(*) FROM user_api_tokens") == 1


async def test_a_form_body_past_16_kib_is_refused(site, db, sodium):
    alice = await browser(await site(), db)
    got, html, _ = await alice.post("/dashboard/subscriptions", form(q="x" * 20_000))
    assert got == 413
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions") == 0


async def test_without_the_notify_key_the_page_says_so(site, db, sodium):
    alice = await browser(await site(INDEXIUM_NOTIFY_SECRET_KEY=None), db)
    status, html, _ = await alice.get("/dashboard/subscriptions")
    assert status == 200 and "not configured on this server" in html
    got, html, _ = await alice.post("/dashboard/subscriptions", form())
    assert got == 503 and "INDEXIUM_NOTIFY_SECRET_KEY" in refusal(html)


async def _subscription_with_a_delivery(db, sodium, uid=1, login="alice"):
    sub = await notify_q.create_subscription(
        db, limit=25, github_user_id=uid, owner_login=login, kind="mod", mod_id=sodium["id"], format="indexium",
        target_url=PUBLIC_TARGET, secret_salt=signing.new_salt())
    vid = await db.fetchval("SELECT id FROM mod_versions WHERE mod_id = $1", sodium["id"])
    now = datetime.now(UTC)
    (delivery,) = await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=now, give_up_s=86400)
    for i, (code, head) in enumerate(((500, "<script>alert('x')</script>"), (503, "busy"))):
        await notify_q.log_attempt(db, subscription_id=sub["id"], delivery=delivery, at=now + timedelta(seconds=i),
                                   outcome="http_error", response_code=code, latency_ms=40 + i, response_head=head,
                                   error=f"HTTP {code}", keep=200)
    await db.execute("""UPDATE notify_subscriptions SET state = 'paused', paused_at = now(),
                        paused_reason = '50 deliveries failed in a row; last: HTTP 503' WHERE id = $1""", sub["id"])
    await db.execute("UPDATE notify_deliveries SET state = 'failed', attempts = 2, last_status = 503 WHERE id = $1",
                     delivery)
    return sub, delivery


async def test_a_paused_subscription_shows_its_last_errors_and_resumes(site, db, sodium):
    alice = await browser(await site(), db)
    sub, delivery = await _subscription_with_a_delivery(db, sodium)
    status, listed, _ = await alice.get("/dashboard/subscriptions")
    assert "paused" in listed and "50 deliveries failed in a row" in listed
    status, html, _ = await alice.get(f"/dashboard/subscriptions/{sub['id']}")
    assert status == 200 and "Last errors" in html and "HTTP 503" in html and ">Resume</button>" in html
    # The receiver's answer is shown escaped, never as markup.
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "40 ms" in html and "41 ms" in html
    status, _, r = await alice.post(f"/dashboard/subscriptions/{sub['id']}/resume")
    assert status == 303 and r.headers["Location"] == f"/dashboard/subscriptions/{sub['id']}?resumed=1"
    assert await db.fetchval("SELECT state FROM notify_subscriptions WHERE id = $1", sub["id"]) == "active"


async def test_redeliver_queues_the_same_delivery_again(site, db, sodium):
    alice = await browser(await site(), db)
    sub, delivery = await _subscription_with_a_delivery(db, sodium)
    status, _, r = await alice.post(f"/dashboard/subscriptions/{sub['id']}/deliveries/{delivery}/redeliver")
    assert status == 303 and f"redelivered={delivery}" in r.headers["Location"]
    row = await db.fetchrow("SELECT id, state, redeliver FROM notify_deliveries")
    assert (row["id"], row["state"], row["redeliver"]) == (delivery, "pending", True)  # the same id
    status, html, _ = await alice.get(r.headers["Location"])
    assert "Queued to be sent again" in html and "X-Indexium-Redelivery: true" in html


async def test_another_users_subscription_cannot_be_seen_resumed_redelivered_or_deleted(site, db, sodium):
    client = await site()
    alice, bob = await browser(client, db), await browser(client, db, uid=2, login="bob")
    sub, delivery = await _subscription_with_a_delivery(db, sodium)
    before = dict(await db.fetchrow("SELECT state, paused_reason FROM notify_subscriptions"))
    status, html, _ = await bob.get(f"/dashboard/subscriptions/{sub['id']}")
    assert status == 404 and "HTTP 503" not in html and PUBLIC_TARGET not in html
    status, html, _ = await bob.get("/dashboard/subscriptions")
    assert status == 200 and PUBLIC_TARGET not in html and "Mod sodium" not in html
    for path in (f"/dashboard/subscriptions/{sub['id']}/resume",
                 f"/dashboard/subscriptions/{sub['id']}/deliveries/{delivery}/redeliver",
                 f"/dashboard/subscriptions/{sub['id']}/delete"):
        status, _, _ = await bob.post(path)
        assert status == 404, path
    assert dict(await db.fetchrow("SELECT state, paused_reason FROM notify_subscriptions")) == before
    assert await db.fetchval("SELECT redeliver FROM notify_deliveries") is False
    # A delivery of alice's other subscription is not one of this subscription's.
    other, _ = await _subscription_with_a_delivery(db, sodium)
    status, _, _ = await alice.post(f"/dashboard/subscriptions/{other['id']}/deliveries/{delivery}/redeliver")
    assert status == 404
    status, _, _ = await alice.post(f"/dashboard/subscriptions/{uuid.uuid4()}/delete")
    assert status == 404
    status, _, r = await alice.post(f"/dashboard/subscriptions/{sub['id']}/delete")
    assert status == 303 and r.headers["Location"] == "/dashboard/subscriptions?deleted=1"
    assert await db.fetchval("SELECT count(*) FROM notify_subscriptions WHERE id = $1", sub["id"]) == 0
    assert (await alice.get("/dashboard/subscriptions/not-a-uuid"))[0] == 404


async def test_tokens_are_shown_once_listed_and_revoked_by_their_owner_only(site, db):
    client = await site()
    alice, bob = await browser(client, db), await browser(client, db, uid=2, login="bob")
    status, html, r = await alice.post("/dashboard/tokens", {"name": "  my   bot "})
    assert status == 201 and r.headers["Cache-Control"] == "no-store"
    token = re.search(r'value="(idx_[^"]+)"', html).group(1)
    assert "shown only this once" in html
    row = await db.fetchrow("SELECT * FROM user_api_tokens")
    assert row["name"] == "my bot" and token not in str(dict(row))
    status, html, _ = await alice.get("/dashboard/subscriptions")
    assert "my bot" in html and token not in html and token[:10] in html and "last used never" in html
    # The token works on the API, and its use is recorded and shown.
    r = await client.get("/api/v1/subscriptions", headers={"Authorization": f"Bearer {token}"})
    assert r.status == 200
    assert "last used just now" in (await alice.get("/dashboard/subscriptions"))[1]
    for name in ("", "   ", "x" * 101):
        status, html, _ = await alice.post("/dashboard/tokens", {"name": name})
        assert status == 400 and "No token made" in html
    assert (await bob.post(f"/dashboard/tokens/{row['id']}/revoke"))[0] == 404
    assert "my bot" not in (await bob.get("/dashboard/subscriptions"))[1]
    assert (await alice.post(f"/dashboard/tokens/{row['id']}/revoke", csrf=False))[0] == 403
    status, _, r = await alice.post(f"/dashboard/tokens/{row['id']}/revoke")
    assert status == 303
    assert await db.fetchval("SELECT count(*) FROM user_api_tokens") == 0
    r = await client.get("/api/v1/subscriptions", headers={"Authorization": f"Bearer {token}"})
    assert r.status == 401


async def test_subscribe_links_prefill_the_form(site, db, sodium):
    client = await site()
    alice = await browser(client, db)
    html = await (await client.get("/mods/sodium")).text()
    link = unescape(re.search(r'href="(/dashboard/subscriptions\?kind=mod[^"]*)"', html).group(1))
    assert link == "/dashboard/subscriptions?kind=mod&mod=sodium&author=caffeine#new"
    status, page, _ = await alice.get(link.split("#")[0])
    assert 'id="kind-mod" name="kind" value="mod" checked' in page and 'name="mod" value="sodium"' in page
    html = await (await client.get("/?q=fast&loader=fabric&game_version=1.20.1&category=optimization")).text()
    link = unescape(re.search(r'href="(/dashboard/subscriptions\?kind=search[^"]*)"', html).group(1))
    status, page, _ = await alice.get(link.split("#")[0])
    assert 'id="kind-search" name="kind" value="search" checked' in page and 'name="q" value="fast"' in page
    assert 'value="fabric" checked' in page and 'id="gv-exact" name="gv_mode" value="exact" checked' in page
    assert 'name="game_versions" value="1.20.1"' in page and 'name="category" value="optimization"' in page
    # The search page without a search offers no subscription to "everything".
    assert "Subscribe to this search" not in await (await client.get("/")).text()


async def test_the_delivery_log_is_paged(site, db, sodium):
    alice = await browser(await site(), db)
    sub = await notify_q.create_subscription(
        db, limit=25, github_user_id=1, owner_login="alice", kind="mod", mod_id=sodium["id"], format="indexium",
        target_url=PUBLIC_TARGET, secret_salt=signing.new_salt())
    now = datetime.now(UTC)
    for i in range(25):
        vid = await kit.version(db, sodium, f"2.{i}", [(["fabric"], ["1.20.1"])])
        await notify_q.enqueue(db, vid, [sub["id"]], event="version.published", now=now + timedelta(seconds=i),
                               give_up_s=86400)
    first = (await alice.get(f"/dashboard/subscriptions/{sub['id']}"))[1]
    second = (await alice.get(f"/dashboard/subscriptions/{sub['id']}?page=2"))[1]
    assert first.count('class="card delivery"') == 20 and second.count('class="card delivery"') == 5
    assert "sodium 2.24" in first and "sodium 2.0<" in second and "Page 2 of 2" in second
    assert (await alice.get(f"/dashboard/subscriptions/{sub['id']}?page=x"))[0] == 200


async def test_sign_in_from_a_subscribe_link_returns_to_the_prefilled_form(gh, database_url, nats_url):
    from aiohttp import ClientSession, CookieJar  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    from indexium_api.site.oauth import return_path  # noqa: PLC0415

    from .test_auth import SECRET  # noqa: PLC0415

    app = create_app(load(Settings, {
        "DATABASE_URL": database_url, "NATS_URL": nats_url, "INDEXIUM_GITHUB_URL": gh.base_url,
        "INDEXIUM_GITHUB_API_URL": gh.api_url, "INDEXIUM_GITHUB_CLIENT_ID": gh.oauth.client_id,
        "INDEXIUM_GITHUB_CLIENT_SECRET": gh.oauth.client_secret, "INDEXIUM_SESSION_SECRET": SECRET}))
    async with TestClient(TestServer(app), cookie_jar=CookieJar(unsafe=True)) as client:
        html = await (await client.get("/dashboard/subscriptions?kind=mod&mod=sodium")).text()
        start = unescape(re.search(r'href="(/auth/github/login\?next=[^"]*)"', html).group(1))
        assert start == "/auth/github/login?next=/dashboard/subscriptions%3Fkind%3Dmod%26mod%3Dsodium"
        r = await client.get(start, allow_redirects=False)
        async with ClientSession() as s, s.get(r.headers["Location"], allow_redirects=False) as back:
            back = urlsplit(back.headers["Location"])
        r = await client.get(f"{back.path}?{back.query}", allow_redirects=False)
        assert r.status == 303 and r.headers["Location"] == "/dashboard/subscriptions?kind=mod&mod=sodium"
        page = await (await client.get(r.headers["Location"])).text()
        assert 'name="mod" value="sodium"' in page
        # Elsewhere: the dashboard, as before (and no return cookie is left behind).
        r = await client.get("/auth/github/login?next=https://evil.example/", allow_redirects=False)
        assert "indexium_return" not in r.cookies
    for bad in ("https://evil.example/", "//evil.example/dashboard", "/dashboard/../review", "/dashboardx",
                "/dashboard\\@evil", "/review", "/dashboard/subscriptions?x=<script>", "/dashboard" + "a" * 1100):
        assert return_path(bad) is None, bad
    assert return_path("/dashboard/subscriptions?kind=search&q=a+b&loader=fabric") is not None


async def test_a_discord_urls_token_is_not_shown_on_the_pages(site, db, sodium):
    alice = await browser(await site(), db)
    token = "Abc" * 22
    url = f"https://93.184.216.34/api/webhooks/1234567890/{token}?wait=true"
    assert (await alice.post("/dashboard/subscriptions", form(target_url=url, format="discord")))[0] == 201
    sub_id = await db.fetchval("SELECT id FROM notify_subscriptions")
    for path in ("/dashboard/subscriptions", f"/dashboard/subscriptions/{sub_id}"):
        html = unescape((await alice.get(path))[1])
        assert token[:8] not in html and "https://93.184.216.34/api/webhooks/1234567890/AbcA…?…" in html, path


async def test_the_hourly_delivery_limit_is_said_when_reached(site, db):
    alice = await browser(await site(INDEXIUM_NOTIFY_MAX_DELIVERIES_PER_HOUR="3"), db)
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    await db.execute("INSERT INTO notify_user_hours (github_user_id, hour, deliveries) VALUES (1, $1, 2)", hour)
    html = (await alice.get("/dashboard/subscriptions"))[1]
    assert "2 of 3 deliveries this hour" in html and "reached" not in html
    await db.execute("UPDATE notify_user_hours SET deliveries = 3")
    html = unescape((await alice.get("/dashboard/subscriptions"))[1])
    assert f"reached 3 deliveries this hour: the rest wait until {(hour + timedelta(hours=1)):%H:%M} UTC" in html


async def test_the_dashboard_counts_subscriptions_and_shows_the_paused_ones(site, db, sodium):
    alice = await browser(await site(), db)
    html = (await alice.get("/dashboard"))[1]
    assert "Webhook subscriptions" in html and "None yet." in html
    sub, _ = await _subscription_with_a_delivery(db, sodium)
    await notify_q.create_subscription(
        db, limit=25, github_user_id=1, owner_login="alice", kind="author", author_github_id=77,
        author_login="caffeine", format="indexium", target_url=PUBLIC_TARGET, secret_salt=signing.new_salt())
    html = unescape((await alice.get("/dashboard"))[1])
    assert "2 subscriptions, 1 paused." in html
    assert f'<a href="/dashboard/subscriptions/{sub["id"]}">Mod sodium</a>' in html
    assert "50 deliveries failed in a row; last: HTTP 503" in html
    bob = await browser(alice.client, db, uid=2, login="bob")
    assert "None yet." in (await bob.get("/dashboard"))[1]
