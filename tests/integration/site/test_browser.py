"""The site in a real Chromium: public pages, sign-in with GitHub, the dashboard, the review queue."""

from __future__ import annotations

import re

from indexium_db.pool import connect

from playwright.async_api import expect


async def _sign_in(b, world):
    page = b.page
    await page.goto(world.base + "/dashboard")
    await page.get_by_role("link", name="Sign in with GitHub").click()
    await page.wait_for_url(world.base + "/dashboard")
    return page


async def test_search_results_mod_page_download_link(world, browse):
    b = await browse("desktop")
    page = b.page
    await page.goto(world.base + "/")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Minecraft mods, straight from GitHub")
    await b.shot("home")
    await page.get_by_label("Search mods").fill("lanterns")
    await page.get_by_role("button", name="Search").click()
    await page.wait_for_url(re.compile(r".*q=lanterns.*"))
    await expect(page.locator("#results-h")).to_have_text("1 mod for “lanterns”")
    await b.shot("results")
    await page.get_by_role("link", name="Lumen Lanterns").click()
    await page.wait_for_url(world.base + "/mods/" + world.slugs["lumenlanterns"])
    await expect(page.locator("h1")).to_have_text("Lumen Lanterns")
    link = page.locator("a.download").first
    assert await link.get_attribute("href") == world.download_urls[("lumenlanterns", "1.2.0")]
    # The held-back version is not offered.
    assert await page.locator("a.download").count() == 1
    for img in await page.locator("img").all():
        assert await img.get_attribute("alt") is not None
    await b.shot("mod")
    # As-you-type: typing alone (no submit) swaps in the results for what was typed.
    await page.goto(world.base + "/")
    await page.get_by_label("Search mods").press_sequentially("almanac", delay=20)
    await expect(page.locator("#results-h")).to_have_text("No mods found")  # its only version is held
    await page.get_by_label("Search mods").fill("")
    await page.get_by_label("Search mods").press_sequentially("lumen", delay=20)
    await expect(page.locator("#results-h")).to_have_text("1 mod for “lumen”")
    assert "q=lumen" in page.url
    await page.goto(world.base + "/?q=zzzznothing")
    await expect(page.locator("#results-h")).to_have_text("No mods found")
    await page.goto(world.base + "/mods/no-such-mod")
    await expect(page.locator("h1")).to_have_text("Mod not found")
    await b.shot("404")
    # 404s are real 404s (the browser logs them as a failed resource; that is not a script error).
    b.errors = [e for e in b.errors if "404" not in e]
    assert b.errors == []


async def test_phone_width(world, browse):
    b = await browse("phone", width=375, height=800)
    page = b.page
    await page.goto(world.base + "/")
    await b.shot("home")
    await page.goto(world.base + "/mods/" + world.slugs["lumenlanterns"])
    # Nothing is wider than the screen except the scrollable versions table inside its box.
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 375, width
    await b.shot("mod")
    assert b.errors == []


async def test_sign_in_dashboard_sign_out(world, browse):
    b = await browse("author")
    page = await _sign_in(b, world)
    await expect(page.locator("h1")).to_have_text("Your repositories")
    body = await page.content()
    assert "demo-author/lumen-lanterns" in body and "demo-author/harvest-almanac" in body
    assert "stranger/secret-tools" not in body  # GitHub does not list it for this user
    notes = page.locator("section.repo", has_text="demo-author/modding-notes")
    await expect(notes).to_contain_text("Not a mod: no mod manifest found on the default branch")
    lumen = page.locator("section.repo", has_text="demo-author/lumen-lanterns")
    await expect(lumen).to_contain_text("1.3.0")
    await expect(lumen).to_contain_text("Held for review")
    await expect(lumen).to_contain_text("starts another program on the player's computer (ProcessBuilder)")
    await expect(lumen.locator("li", has_text="1.2.0")).to_contain_text("Public")
    dead = lumen.locator("li", has_text="1.5.0")  # dead-lettered, with the reason
    await expect(dead).to_contain_text("corrupt zip")
    await expect(dead).to_contain_text("no end of central directory")
    skipped = lumen.locator("li", has_text="lumenlanterns-1.4.0-dev.jar")  # an asset left out, and why
    await expect(skipped).to_contain_text("no fabric.mod.json, quilt.mod.json, mods.toml or mcmod.info")
    install = page.get_by_role("link", name="Install the App on more repositories")
    assert await install.get_attribute("href") == f"{world.gh.base_url}/apps/indexium-test/installations/new"
    await b.shot("dashboard")
    cookies = {c["name"]: c for c in await b.context.cookies()}
    session = cookies["indexium_session"]
    assert session["httpOnly"] and session["sameSite"] == "Lax" and not session["secure"]  # http public URL

    # Another browser without the cookie sees no dashboard.
    other = await browse("other")
    await other.page.goto(world.base + "/dashboard")
    await expect(other.page.locator("h1")).to_have_text("For mod authors")
    assert "lumen-lanterns" not in await other.page.content()
    await other.shot("no-cookie")

    await page.get_by_role("button", name=re.compile("Sign out")).click()
    await page.wait_for_url(world.base + "/")
    await page.goto(world.base + "/dashboard")
    await expect(page.locator("h1")).to_have_text("For mod authors")
    # The old cookie is dead on the server too: replaying it signs nobody in.
    replay = await browse("replay")
    await replay.context.add_cookies([{"name": "indexium_session", "value": session["value"], "url": world.base}])
    await replay.page.goto(world.base + "/dashboard")
    await expect(replay.page.locator("h1")).to_have_text("For mod authors")
    assert b.errors == [] and other.errors == [] and replay.errors == []


async def test_forged_state_is_refused(world, browse):
    b = await browse("forger")
    page = b.page
    response = await page.goto(world.base + "/auth/github/callback?code=abc&state=forged-state")
    assert response.status == 400
    await expect(page.locator("h1")).to_have_text("Sign-in link not valid")
    await b.shot("forged")
    await page.goto(world.base + "/dashboard")
    await expect(page.locator("h1")).to_have_text("For mod authors")
    assert world.gh.oauth.exchanges == 0  # the code was never even sent to GitHub
    assert [e for e in b.errors if "400" not in e] == []


async def test_non_admin_gets_403_on_the_review_queue(world, browse):
    b = await browse("author")
    page = await _sign_in(b, world)
    response = await page.goto(world.base + "/review")
    assert response.status == 403
    await expect(page.locator("h1")).to_have_text("Operators only")
    await b.shot("403")
    anonymous = await browse("anonymous")
    response = await anonymous.page.goto(world.base + "/review")
    assert response.status == 403
    assert [e for e in b.errors + anonymous.errors if "403" not in e] == []


async def test_admin_approves_and_the_version_appears_in_search(world, browse):
    world.gh.oauth.sign_in_as("op-admin")
    b = await browse("admin")
    page = await _sign_in(b, world)
    # Harvest Almanac has only a quarantined version: not in search yet.
    await page.goto(world.base + "/?q=almanac")
    await expect(page.locator("#results-h")).to_have_text("No mods found")
    await page.goto(world.base + "/dashboard")  # (public pages are the same for everyone: no session nav)
    await page.get_by_role("link", name="Review queue").click()
    await expect(page.locator("h1")).to_have_text("Review queue")
    items = page.locator("section.review")
    await expect(items).to_have_count(2)
    await expect(items.first).to_contain_text("Lumen Lanterns")  # oldest first
    almanac = items.filter(has_text="Harvest Almanac")
    await expect(almanac).to_contain_text("META-INF/jars/helper.jar!/com/x/Boot.class")
    await expect(almanac).to_contain_text("com/x/Boot")
    await expect(almanac).to_contain_text("<clinit>()V")
    await b.shot("queue")
    await almanac.get_by_label("Note (recorded with your decision)").fill("Checked by hand: the helper is the updater")
    await almanac.get_by_role("button", name="Approve").click()
    await page.wait_for_url(re.compile(r".*/review\?done=.*"))
    await expect(page.locator("section.review")).to_have_count(1)
    await b.shot("approved")
    conn = await connect(world.db_url)
    try:
        decision = await conn.fetchrow(
            "SELECT action, actor, reason FROM quarantine_decisions d JOIN mod_versions v ON v.id = d.version_id "
            "WHERE v.version_number = '0.9.0' ORDER BY d.created_at DESC, d.id DESC LIMIT 1")
    finally:
        await conn.close()
    assert tuple(decision) == ("approved", "op-admin", "Checked by hand: the helper is the updater")
    await page.goto(world.base + "/?q=almanac")
    await expect(page.locator("#results-h")).to_have_text("1 mod for “almanac”")
    await b.shot("search-after")
    assert b.errors == []
