"""Webhook subscriptions in a real Chromium, end to end: a signed-in user subscribes from a mod's
page to a receiver on loopback; a release goes through ingest, the indexer, the scan stage and
the notify role as processes (real JetStream, real PostgreSQL, FakeGitHub's signed webhook and
Range reads); the delivery appears in the dashboard's log; "Redeliver" has the receiver see the
same delivery id again. The subscription pages at 1280 and 375 px, with no console errors."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from aiohttp import web
from playwright.async_api import expect

from indexium_api.app import create_app
from indexium_api.core.state import API
from indexium_api.settings import Settings
from indexium_db.pool import connect
from indexium_devstack import jars, notifykit as kit
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_notify import signing
from indexium_platform.settings import load

from .conftest import SESSION_SECRET, browse, browser, world  # noqa: F401 - fixtures

WEBHOOK_SECRET = "subs-browser-webhook-secret"
NOTIFY_KEY = "subs-browser-notify-key-of-32-bytes-or-more"
AUTHOR = "demo-author"
# Loopback receivers, as the notify tests allow them: an operator setting, off by default.
NOTIFY_POLICY = {"INDEXIUM_NOTIFY_ALLOW_HTTP": "true", "INDEXIUM_NOTIFY_ALLOWED_TARGETS": "127.0.0.1",
                 "INDEXIUM_NOTIFY_SECRET_KEY": NOTIFY_KEY}


@pytest.fixture
async def pipeline(database_url, nats_url, tmp_path):
    gh = FakeGitHub()
    await gh.start()
    repo = gh.add_repo(AUTHOR, "lumen-lanterns", description="Lanterns")
    gh.add_installation([repo], account=gh.state.user(AUTHOR))
    gh.oauth.sign_in_as(AUTHOR)
    env = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_WEBHOOK_SECRET": WEBHOOK_SECRET,
           "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}", "INDEXIUM_LOG_FORMAT": "json",
           "INDEXIUM_NOTIFY_POLL_SECONDS": "0.2", **NOTIFY_POLICY}
    procs = {name: ServiceProcess(BY_NAME[name], port=free_port(), env=env, log_path=tmp_path / f"{name}.log")
             for name in ("ingest", "indexer", "scan", "notify")}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    app = create_app(load(Settings, {
        "DATABASE_URL": database_url, "NATS_URL": nats_url, "INDEXIUM_PUBLIC_URL": base,
        "INDEXIUM_GITHUB_URL": gh.base_url, "INDEXIUM_GITHUB_API_URL": gh.api_url,
        "INDEXIUM_GITHUB_CLIENT_ID": gh.oauth.client_id, "INDEXIUM_GITHUB_CLIENT_SECRET": gh.oauth.client_secret,
        "INDEXIUM_GITHUB_APP_SLUG": "indexium-test", "INDEXIUM_SESSION_SECRET": SESSION_SECRET,
        "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0", **NOTIFY_POLICY}))
    runner = web.AppRunner(app)
    receiver = await kit.Receiver().start()
    try:
        for p in procs.values():
            p.start()
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in procs.values()))
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await asyncio.wait_for(app[API].bus.subscribed.wait(), 30)
        yield {"gh": gh, "repo": repo, "base": base, "receiver": receiver, "procs": procs, "db_url": database_url}
    finally:
        await runner.cleanup()
        codes = {name: await asyncio.to_thread(p.stop, 30) for name, p in procs.items()}
        await receiver.close()
        await gh.close()
    for name, p in procs.items():
        log = p.log_path.read_text()
        assert codes[name] == 0 and "Traceback" not in log, f"{name}: {log[-3000:]}"


async def _release(pipeline, tag: str) -> None:
    gh, repo = pipeline["gh"], pipeline["repo"]
    jar = jars.fabric_jar("lumenlanterns", tag, "Lumen Lanterns", "Colourful hanging lanterns.",
                          minecraft="~1.20.1", authors=[AUTHOR])
    release = gh.add_release(repo, tag, [(f"lumenlanterns-{tag}.jar", jar)])
    status = await gh.send_webhook(f"{pipeline['procs']['ingest'].url}/webhooks/github", "release",
                                   gh.release_payload(release, action="published"), WEBHOOK_SECRET,
                                   delivery_id=f"release-{tag}")
    assert status == 202


async def _until(check, timeout=60.0, every=0.2):
    deadline = asyncio.get_running_loop().time() + timeout
    while not (result := await check()):
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(every)
    return result


async def _public(pipeline, tag: str) -> bool:
    conn = await connect(pipeline["db_url"])
    try:
        return await conn.fetchval(
            "SELECT status = 'public' AND NOT hidden FROM mod_versions WHERE version_number = $1", tag) or False
    finally:
        await conn.close()


async def test_subscribe_from_a_mod_page_receive_a_release_and_redeliver_it(pipeline, browse):
    base, receiver = pipeline["base"], pipeline["receiver"]
    await _release(pipeline, "1.0.0")
    await _until(lambda: _public(pipeline, "1.0.0"))

    b = await browse("desktop", width=1280)
    page = b.page
    await page.goto(f"{base}/mods/lumenlanterns")
    await page.get_by_role("link", name="Subscribe to new versions").click()
    # Not signed in: the sign-in page, which comes back to the prefilled form.
    await page.get_by_role("link", name="Sign in with GitHub").click()
    await page.wait_for_url(re.compile(r".*/dashboard/subscriptions\?kind=mod&mod=lumenlanterns.*"))
    await expect(page.get_by_label("Mod slug")).to_have_value("lumenlanterns")
    await expect(page.locator("#kind-mod")).to_be_checked()
    await page.get_by_label("fabric").check()
    await page.locator("#gv-min").check()
    await page.get_by_label("Oldest game version").fill("1.20.1")
    await page.get_by_label(re.compile("^Target URL")).fill(receiver.url("/lumen"))
    await page.get_by_role("button", name="Subscribe", exact=True).click()
    await expect(page.locator("#created-h")).to_contain_text("Subscribed")
    secret = await page.get_by_role("textbox", name="Signing secret").input_value()
    assert secret.startswith("whsec_")
    await b.shot("created")

    # A refusal is said on the page, with what was typed kept.
    await page.goto(f"{base}/dashboard/subscriptions?kind=mod&mod=lumenlanterns")
    await page.get_by_label(re.compile("^Target URL")).fill("http://10.20.30.40/hook")
    await page.get_by_role("button", name="Subscribe", exact=True).click()
    await expect(page.get_by_role("alert")).to_contain_text("non-public")
    await expect(page.get_by_label(re.compile("^Target URL"))).to_have_value("http://10.20.30.40/hook")
    # The refusal is a real 400 (Chromium logs any non-2xx document as a failed resource: not a
    # script error); that line and nothing else.
    assert b.errors == ["console error: Failed to load resource: the server responded with a status of 400 "
                        "(Bad Request)"], b.errors
    b.errors.clear()

    await _release(pipeline, "1.1.0")
    await _until(lambda: asyncio.sleep(0, receiver.for_path("/lumen")))
    (first,) = receiver.for_path("/lumen")
    assert signing.verify(secret, first.body, first.headers["X-Indexium-Signature-256"])
    assert json.loads(first.body)["version"]["version_number"] == "1.1.0"
    delivery_id = first.headers["X-Indexium-Delivery"]

    await page.goto(f"{base}/dashboard/subscriptions")
    await page.get_by_role("link", name="Delivery log").click()
    entry = page.locator(f"#delivery-{delivery_id}")

    async def delivered():
        await page.reload()
        return await entry.count() and "delivered" in (await entry.inner_text())

    await _until(delivered, timeout=20, every=0.5)
    await expect(entry).to_contain_text("lumenlanterns 1.1.0")
    row = entry.locator("table.attempts tbody tr").first
    await expect(row).to_contain_text("ok")
    await expect(row).to_contain_text("200")
    await expect(row).to_contain_text(" ms")
    await b.shot("log")

    await entry.get_by_role("button", name=re.compile("Redeliver")).click()
    await expect(page.get_by_role("status")).to_contain_text("Queued to be sent again")
    await _until(lambda: asyncio.sleep(0, len(receiver.for_path("/lumen")) >= 2), timeout=20)
    again = receiver.for_path("/lumen")[1]
    assert again.headers["X-Indexium-Delivery"] == delivery_id  # the receiver can dedupe on it
    assert again.headers["X-Indexium-Redelivery"] == "true" and again.body == first.body
    assert signing.verify(secret, again.body, again.headers["X-Indexium-Signature-256"])

    async def two_attempts():
        await page.reload()
        return await entry.locator("table.attempts tbody tr").count() == 2

    await _until(two_attempts, timeout=20, every=0.5)
    await expect(entry).to_contain_text("redelivered")
    await b.shot("redelivered")
    await page.goto(f"{base}/dashboard/subscriptions")
    await b.shot("list-1280")

    # The same pages at phone width: nothing wider than the screen.
    phone = await browse("phone", width=375, height=800)
    await phone.context.add_cookies(await b.context.cookies())
    await phone.page.goto(base + "/dashboard/subscriptions")
    assert await phone.page.evaluate("document.documentElement.scrollWidth") <= 375
    await phone.shot("list-375")
    await phone.page.get_by_role("link", name="Delivery log").click()
    assert await phone.page.evaluate("document.documentElement.scrollWidth") <= 375
    await phone.shot("log-375")
    assert b.errors == [] and phone.errors == []


async def test_paused_subscription_resume_and_tokens_work_without_javascript(world, browser):
    """No script at all (JavaScript off in the context): every form still works. A paused
    subscription shows why and its last errors (a hostile answer shown as text), Resume
    resumes it; a token is made, shown once, and revoked. Screenshots at 375 and 1280 px."""
    from datetime import UTC, datetime, timedelta  # noqa: PLC0415

    from indexium_db.queries import notify as notify_q  # noqa: PLC0415

    from .conftest import AUTHOR as WORLD_AUTHOR, SHOTS  # noqa: PLC0415

    shots = []
    for width in (375, 1280):
        ctx = await browser.new_context(viewport={"width": width, "height": 900}, java_script_enabled=False)
        page = await ctx.new_page()
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        await page.goto(world.base + "/dashboard/subscriptions")
        await page.get_by_role("link", name="Sign in with GitHub").click()
        await page.wait_for_url(world.base + "/dashboard/subscriptions")
        conn = await connect(world.db_url)
        try:
            uid = world.gh.state.user(WORLD_AUTHOR).id
            await conn.execute("DELETE FROM notify_subscriptions WHERE github_user_id = $1", uid)
            mod_id = await conn.fetchval("SELECT id FROM mods WHERE slug = $1", world.slugs["lumenlanterns"])
            sub = await notify_q.create_subscription(
                conn, limit=25, github_user_id=uid, owner_login=WORLD_AUTHOR, kind="mod", mod_id=mod_id,
                loaders=["fabric"], game_version_min="1.20.1", format="discord",
                target_url="https://discord.com/api/webhooks/1234567890/" + "t" * 68, secret_salt=signing.new_salt())
            vid = await conn.fetchval("SELECT id FROM mod_versions WHERE mod_id = $1 AND status = 'public'", mod_id)
            now = datetime.now(UTC)
            (delivery,) = await notify_q.enqueue(conn, vid, [sub["id"]], event="version.published", now=now,
                                                 give_up_s=86400)
            for i in range(3):
                await notify_q.log_attempt(
                    conn, subscription_id=sub["id"], delivery=delivery, at=now + timedelta(seconds=i),
                    outcome="http_error", response_code=502, latency_ms=120 + i,
                    response_head='<img src=x onerror="alert(1)"><b>Bad gateway</b>', error="HTTP 502", keep=200)
            await conn.execute("UPDATE notify_deliveries SET attempts = 3, last_status = 502 WHERE id = $1", delivery)
            await conn.execute(
                """UPDATE notify_subscriptions SET state = 'paused', paused_at = now(), consecutive_failures = 50,
                          paused_reason = '50 deliveries failed in a row; last: HTTP 502' WHERE id = $1""", sub["id"])
        finally:
            await conn.close()
        await page.goto(world.base + "/dashboard")  # the dashboard's own section says it is paused
        summary = page.locator("section.subs-summary")
        await expect(summary).to_contain_text("1 subscription, 1 paused.")
        await expect(summary).to_contain_text("50 deliveries failed in a row")
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        await page.screenshot(path=str(SHOTS / f"dashboard-subscriptions-{width}.png"))
        await page.goto(world.base + "/dashboard/subscriptions")
        card = page.locator(f"#sub-{sub['id']}")
        await expect(card).to_contain_text("paused")
        await expect(card).to_contain_text("50 deliveries failed in a row")
        await card.get_by_role("link", name="Delivery log").click()
        await expect(page.locator("#paused-h")).to_contain_text("Paused")
        await expect(page.locator("ul.errors li")).to_have_count(3)
        head = page.locator("code.head").first
        await expect(head).to_have_text('<img src=x onerror="alert(1)"><b>Bad gateway</b>')  # text, not markup
        assert await page.locator("main img").count() == 0
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        shots.append(SHOTS / f"subscriptions-paused-{width}.png")
        SHOTS.mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(shots[-1]), full_page=True)
        await page.get_by_role("button", name="Resume").click()
        await expect(page.locator("p.flash")).to_contain_text("Resumed")
        await expect(page.locator("h1 .status")).to_have_text("active")

        await page.goto(world.base + "/dashboard/subscriptions#tokens")
        await page.get_by_label("Name of a new token").fill(f"release script {width}")
        await page.get_by_role("button", name="Create token").click()
        token = await page.get_by_role("textbox", name="API token").input_value()
        assert token.startswith("idx_")
        await page.screenshot(path=str(SHOTS / f"subscriptions-token-{width}.png"), full_page=True)
        await page.goto(world.base + "/dashboard/subscriptions")
        assert token not in await page.content()
        await page.get_by_role("button", name=f"Revoke the token release script {width}").click()
        await expect(page.locator("p.flash")).to_contain_text("Token revoked")
        assert errors == [], errors
        await ctx.close()
