"""Issue 33's operator chain in a real Chromium: a mod whose repository homepage is a
``javascript:`` URL that approves every held version with the operator's own CSRF token.

The mod arrives as it would from GitHub: FakeGitHub's repository and release, a signed
``release`` webhook to ingest, the indexer as its own process (real JetStream, PostgreSQL and
Range reads). An operator signs in, opens the mod page and follows every link on it: nothing
is approved. Then the page as it would be had the URL policy missed it (the test-only route of
conftest.py, sent with the site's own headers): the browser refuses the script, the homepage
click and the inline handler, and reports the violations, which /metrics counts.
"""

from __future__ import annotations

import asyncio
import re

import aiohttp
import pytest
from playwright.async_api import expect

from indexium_db.pool import connect
from indexium_devstack import jars

from .conftest import ADMIN, HOSTILE_SCRIPT, POLICY_MISSED_PATH, WEBHOOK_SECRET as SECRET

HOMEPAGE = "javascript:" + HOSTILE_SCRIPT


async def _publish_hostile_mod(world, pipeline) -> str:
    gh = world.gh
    repo = gh.add_repo("mallory", "glowbugs", description="Glowing bugs", homepage=HOMEPAGE,
                       topics=["<script>alert('topic')</script>", "fabric", "decoration"])
    jar = jars.fabric_jar("glowbugs", "1.0.0", "Glow Bugs", "Bugs that glow.", minecraft="~1.20.1")
    release = gh.add_release(repo, "1.0.0", [("glowbugs-1.0.0.jar", jar)])
    status = await gh.send_webhook(f"{pipeline['ingest'].url}/webhooks/github", "release",
                                   gh.release_payload(release, action="published"), SECRET, delivery_id="hostile-1")
    assert status == 202
    async with aiohttp.ClientSession() as http:
        for _ in range(300):
            async with http.get(f"{world.base}/api/v1/mods/glowbugs") as resp:
                if resp.status == 200:
                    return "glowbugs"
            await asyncio.sleep(0.1)
    raise AssertionError("the mod never appeared:\n" + pipeline["indexer"].log_path.read_text()[-3000:])


async def _held(world) -> list[tuple[str, str]]:
    conn = await connect(world.db_url)
    try:
        approved = await conn.fetchval("SELECT count(*) FROM quarantine_decisions WHERE action = 'approved'")
        assert approved == 0, "a held version was approved"
        return [tuple(r) for r in await conn.fetch(
            "SELECT version_number, status FROM mod_versions WHERE status <> 'public' ORDER BY version_number")]
    finally:
        await conn.close()


async def _counted(world, directive: str) -> float:
    async with aiohttp.ClientSession() as http, http.get(f"{world.base}/metrics") as resp:
        text = await resp.text()
    m = re.search(rf'^indexium_api_csp_violations_total{{directive="{directive}"}} (\S+)$', text, re.M)
    return float(m[1]) if m else 0.0


async def test_an_operator_following_every_link_of_a_hostile_mod_page_approves_nothing(world, pipeline, browse):
    slug = await _publish_hostile_mod(world, pipeline)
    held = await _held(world)
    assert held == [("0.9.0", "quarantined"), ("1.3.0", "quarantined")]

    world.gh.oauth.sign_in_as(ADMIN)
    b = await browse("operator")
    page = b.page
    await page.goto(world.base + "/dashboard")
    await page.get_by_role("link", name="Sign in with GitHub").click()
    await page.wait_for_url(world.base + "/dashboard")
    await expect(page.get_by_role("link", name="Review queue")).to_be_visible()
    mod_url = f"{world.base}/mods/{slug}"
    await page.goto(mod_url)
    await expect(page.locator("h1")).to_have_text("Glow Bugs")
    await b.shot("hostile-mod")
    hrefs = [await a.get_attribute("href") for a in await page.locator("a[href]").all()]
    assert hrefs and not any(h.strip().lower().startswith(("javascript", "data", "vbscript")) for h in hrefs), hrefs
    body = await page.content()
    assert "alert('topic')" not in body and "decoration" in body  # the topic markup is nowhere, the category is
    # Every link on the page, clicked as the operator (a download, GitHub, the badge, the filters...).
    for i in range(len(hrefs)):
        if page.url != mod_url:
            await page.goto(mod_url)
        link = page.locator("a[href]").nth(i)
        if await link.is_visible() and await link.bounding_box():
            try:
                await link.click(no_wait_after=True, timeout=2000)
            except Exception:  # noqa: BLE001 - covered or off-screen: follow it as a script would
                await link.evaluate("a => a.click()")
        else:  # (the skip link, visible only once focused)
            await link.evaluate("a => a.click()")
        await page.wait_for_timeout(150)
    await page.wait_for_timeout(500)  # anything a click started has had time to post
    assert await _held(world) == held

    # Had the URL policy missed the homepage (and an inline script and handler got in): the
    # browser refuses all three and reports them.
    reports_before = await _counted(world, "script-src-elem"), await _counted(world, "script-src-attr")
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    await page.goto(world.base + POLICY_MISSED_PATH)
    homepage = page.get_by_role("link", name="Homepage")
    assert (await homepage.get_attribute("href")).startswith("javascript:")
    await homepage.click(no_wait_after=True)
    await page.wait_for_timeout(500)
    await b.shot("policy-missed")
    assert await _held(world) == held
    assert len(violations) >= 3, violations  # the inline script, the onerror handler, the javascript: URL
    for directive, before in zip(("script-src-elem", "script-src-attr"), reports_before):
        for _ in range(100):
            if await _counted(world, directive) > before:
                break
            await asyncio.sleep(0.1)
        assert await _counted(world, directive) > before, directive
    assert [e for e in b.errors if "Content Security Policy" not in e and "404" not in e
            and "ERR_" not in e] == []
