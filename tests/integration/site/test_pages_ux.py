"""Issue 35's page half in a real Chromium: the Download button for a chosen loader and game
version (with and without script), signing in from the header on the home page, no console
errors on the pages touched, and screenshots of the home, mod, dashboard and review pages at
1280 and 375 px (in each test's tmp folder and /tmp/site-shots/)."""

from __future__ import annotations

import re
import secrets
import shutil
from datetime import UTC, datetime, timedelta

from playwright.async_api import expect

from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, versions as versions_q

from .conftest import ADMIN, AUTHOR, SHOTS

LINE_1_20 = ["1.20.6", "1.20.5", "1.20.5-pre1", "24w14a", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20"]
# (tag, version type, [(loaders, game versions)]) oldest first; each file is its own release asset.
RELEASES = [
    ("1.0.0", "release", [(["fabric"], ["1.20.1"])]),
    ("2.0.0", "release", [(["fabric", "quilt"], LINE_1_20), (["neoforge"], ["1.21", "1.20.6"])]),
    ("2.1.0-beta.1", "beta", [(["fabric"], ["1.21"])]),
]
DEPS = [{"mod_id": "fabric-api", "kind": "required", "version_range": ">=0.92"},
        {"mod_id": "optifabric", "kind": "incompatible"}]


async def _glowstone(world) -> tuple[str, dict]:
    """A mod with several loaders, game versions and releases, a dependency, a breaks, and a
    chart's worth of servers: its slug and {(tag, loader-set index): asset URL}."""
    gh = world.gh
    repo = gh.add_repo(AUTHOR, "glowstone-tweaks", description="Glowstone")
    gh.add_installation([repo], account=gh.state.user(AUTHOR))
    urls: dict = {}
    conn = await connect(world.db_url)
    try:
        owner = repo.owner
        await mods_q.upsert_author(conn, owner.id, owner.login)
        card = mods_q.Card(name="Glowstone Tweaks", summary="Brighter glowstone, softer light levels",
                           description="Brighter glowstone.", authors=[owner.login], licenses=["MIT"],
                           links={"homepage": "https://example.org/glowstone"}, environment="both")
        mod = await mods_q.create(conn, github_repo_id=repo.id, repo_full_name=repo.full_name, owner_id=owner.id,
                                  owner_login=owner.login, manifest_id="glowstonetweaks", default_branch="main",
                                  categories=["decoration", "utility"], card=card)
        for i, (tag, kind, files) in enumerate(RELEASES):
            names = [f"glowstone-tweaks-{tag}-{'-'.join(lo)}.jar" for lo, _ in files]
            rel = gh.add_release(repo, tag, [(name, b"PK\x05\x06" + bytes(18)) for name in names])
            assets = gh.release_payload(rel)["release"]["assets"]
            vid = await versions_q.upsert_version(
                conn, mod_id=mod["id"], version_number=tag, github_release_id=rel.id, tag_name=tag, name=tag,
                changelog="", version_type=kind, published_at=datetime.now(UTC) - timedelta(days=10 - i),
                status="public", game_versions=sorted({g for _, gv in files for g in gv}),
                loaders=sorted({lo for ls, _ in files for lo in ls}))
            rows = []
            for j, ((loaders, game), name, asset) in enumerate(zip(files, names, assets)):
                urls[(tag, j)] = asset["browser_download_url"]
                rows.append(versions_q.FileRow(
                    github_asset_id=rel.assets[j].id, filename=name, url=asset["browser_download_url"], size=22,
                    content_type="application/java-archive", github_digest=None, sidecar_url=None, loaders=loaders,
                    game_versions=game, manifests=[{"loader": loaders[0], "mod_id": "glowstonetweaks",
                                                    "dependencies": DEPS}], is_primary=j == 0, download_count=3))
            ids = await versions_q.replace_files(conn, vid, rows)
            for fid in ids:
                await conn.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                                   fid, secrets.token_hex(20), secrets.token_hex(32), secrets.token_hex(64))
        await conn.execute(
            """INSERT INTO mod_daily_stats (mod_id, day, servers, breakdown)
               SELECT $1, current_date - d, 20 + (d * 7) % 13,
                      '{"game_version": {"1.20.1": 9, "1.21": 5}, "loader": {"fabric": 10, "neoforge": 4}}'::jsonb
               FROM generate_series(1, 30) d""", mod["id"])
        await mods_q.refresh_rollup(conn, mod["id"])
    finally:
        await conn.close()
    return mod["slug"], urls


def _real_errors(b) -> list[str]:
    # A 403 or 404 page is a failed resource to the console, not a script error.
    return [e for e in b.errors if not re.search(r"status of 40[34]", e)]


async def test_the_download_button_goes_to_the_asset_for_the_chosen_loader_and_version(world, browse):
    slug, urls = await _glowstone(world)
    b = await browse("download", width=1280)
    page = b.page
    await page.goto(f"{world.base}/mods/{slug}")
    button = page.locator("#download-button")
    # No choice: the newest release's file (not the newer beta), saying what it is for.
    assert await button.get_attribute("href") == urls[("2.0.0", 0)]
    await expect(page.locator(".offer-what")).to_contain_text("for Fabric, Quilt, Minecraft 1.20–1.20.6")
    # Choose NeoForge and 1.21: the script submits the GET form on each change.
    await page.get_by_label("Loader", exact=True).select_option("neoforge")
    await page.wait_for_url(re.compile(r".*loader=neoforge.*"))
    await page.locator("#dl-version").select_option("1.21")
    await page.wait_for_url(re.compile(r".*loader=neoforge&game_version=1\.21.*"))
    await expect(page.locator(".offer-what")).to_contain_text("2.0.0 for NeoForge, Minecraft 1.21")
    assert await button.get_attribute("href") == urls[("2.0.0", 1)]
    async with page.expect_request(urls[("2.0.0", 1)]) as asked, page.expect_download() as got:
        await button.click()
    assert (await asked.value).url == urls[("2.0.0", 1)]  # straight to the GitHub asset
    assert (await got.value).suggested_filename == "glowstone-tweaks-2.0.0-neoforge.jar"
    await b.shot("mod-neoforge-1.21")
    # Fabric on 1.21 has only the beta: offered, and said so.
    await page.goto(f"{world.base}/mods/{slug}?loader=fabric&game_version=1.21")
    assert await button.get_attribute("href") == urls[("2.1.0-beta.1", 0)]
    await expect(page.locator(".download-box")).to_contain_text("No release fits this choice")
    assert _real_errors(b) == []

    # Without script the same form works with its button.
    plain = await browse("no-script", width=1280)
    await plain.context.close()
    ctx = await plain.context.browser.new_context(java_script_enabled=False, viewport={"width": 1280, "height": 900})
    try:
        p = await ctx.new_page()
        await p.goto(f"{world.base}/mods/{slug}")
        await p.locator("#dl-loader").select_option("fabric")
        await p.locator("#dl-version").select_option("1.20.1")
        await p.get_by_role("button", name="Find the file").click()
        await p.wait_for_url(re.compile(r".*loader=fabric&game_version=1\.20\.1.*"))
        assert await p.locator("#download-button").get_attribute("href") == urls[("2.0.0", 0)]
    finally:
        await ctx.close()


async def test_sign_in_from_the_header_on_the_home_page(world, browse):
    b = await browse("header", width=1280)
    page = b.page
    await page.goto(world.base + "/")
    header = page.locator("header.top")
    await header.get_by_role("link", name="Sign in", exact=True).click()
    await page.wait_for_url(world.base + "/dashboard")  # FakeGitHub approves at once
    await page.goto(world.base + "/")
    await expect(header.get_by_role("link", name="Dashboard")).to_be_visible()
    await expect(header.get_by_role("button", name=re.compile("Sign out"))).to_contain_text(AUTHOR)
    await expect(header.get_by_role("link", name="Sign in", exact=True)).to_have_count(0)
    # The same header on a mod page and on a 404 page.
    await page.goto(world.base + "/mods/" + world.slugs["lumenlanterns"])
    await expect(header.get_by_role("button", name=re.compile("Sign out"))).to_be_visible()
    response = await page.goto(world.base + "/mods/no-such-mod")
    assert response.status == 404
    await expect(header.get_by_role("button", name=re.compile("Sign out"))).to_be_visible()
    # Sign out from the home page's header: signed out, the Sign in control back.
    await page.goto(world.base + "/")
    await header.get_by_role("button", name=re.compile("Sign out")).click()
    await page.wait_for_url(world.base + "/")
    await expect(header.get_by_role("link", name="Sign in", exact=True)).to_be_visible()
    assert _real_errors(b) == []


async def test_screenshots_of_the_pages_at_1280_and_375(world, browse):
    slug, _ = await _glowstone(world)
    for width in (1280, 375):
        author = await browse(f"author-{width}", width=width, height=900)
        page = author.page
        await page.goto(world.base + "/")
        await author.shot("home")
        await page.goto(f"{world.base}/mods/{slug}")
        await expect(page.locator("#download-button")).to_be_visible()
        await author.shot("mod")
        # What a phone shows first, unscaled: the Download button must be on it.
        await page.screenshot(path=str(author.shots_dir / f"{author.name}-mod-first-screen.png"))
        shutil.copy(author.shots_dir / f"{author.name}-mod-first-screen.png", SHOTS)
        assert (await page.locator("#download-button").bounding_box())["y"] < 900
        await page.goto(world.base + "/mods/" + world.slugs["lumenlanterns"])  # no servers: the one line
        await author.shot("mod-no-servers")
        await page.get_by_role("link", name="Sign in", exact=True).click()
        await page.wait_for_url(world.base + "/dashboard")
        await author.shot("dashboard")
        response = await page.goto(world.base + "/review")
        assert response.status == 403
        await expect(page.locator("header.top")).to_contain_text("Sign out")  # the same header
        await author.shot("403")
        assert await page.evaluate("document.documentElement.scrollWidth") <= width
        assert _real_errors(author) == []

        world.gh.oauth.sign_in_as(ADMIN)
        try:
            admin = await browse(f"admin-{width}", width=width, height=900)
            await admin.page.goto(world.base + "/auth/github/login")
            await admin.page.wait_for_url(world.base + "/dashboard")
            await admin.page.goto(world.base + "/review")
            await expect(admin.page.locator("dl.legend")).to_contain_text("high")
            await admin.shot("review")
            assert await admin.page.evaluate("document.documentElement.scrollWidth") <= width
            assert _real_errors(admin) == []
        finally:
            world.gh.oauth.sign_in_as(AUTHOR)
