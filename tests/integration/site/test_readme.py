"""The README and release notes in a real Chromium (issue 35): the mod page shows the rendered
README (a table, a task list, its image from the repository) and the newest version's notes open
with older ones behind <details>; the changelog page holds them all. A README of the OWASP
filter-evasion payloads (indexium_devstack.xss) opens no dialog, runs nothing, and sends no
request to any host but ours and the README's real images (every request the page makes is
seen: images are answered by the test, nothing reaches the network)."""

from __future__ import annotations

from urllib.parse import urlsplit

from indexium_api.core.state import API
from indexium_content import markdown
from indexium_db.pool import connect
from indexium_db.queries import readmes as readmes_q
from indexium_devstack import xss

# A 1x1 PNG: what the README's image hosts answer here (the machine has no network).
PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cf"
                    "c0f01f0005000201d6f5e9a60000000049454e44ae426082")
README = """# Lumen Lanterns

<p align="center"><img src="docs/lantern.png" alt="A lit lantern" width="64"></p>

Colourful hanging lanterns for **every** wood type. ~~No~~ Dynamic light optional.

| Loader | Minecraft |
|:--|--:|
| Fabric | 1.20.1 |

- [x] oak, spruce, birch
- [ ] bamboo

See [the wiki](docs/WIKI.md) or https://example.org/lanterns.
"""
NOTES = {"1.2.0": "## Added\n\n- Cherry lanterns ([#4](https://github.com/demo-author/lumen-lanterns/issues/4))\n",
         "1.1.0": "First public release."}


async def _store_readme(world, slug: str, text: str) -> markdown.Rendered:
    conn = await connect(world.db_url)
    try:
        row = await conn.fetchrow("SELECT github_repo_id, repo_full_name FROM mods WHERE slug = $1", slug)
        owner, name = row["repo_full_name"].split("/")
        rendered = markdown.render(text, markdown.Repository(owner, name, "main", "README.md"))
        await readmes_q.store(conn, row["github_repo_id"], etag='"t"', path="README.md", branch="main", raw_text=text,
                              html=rendered.html, plain_text=rendered.text, truncated=rendered.truncated,
                              renderer=markdown.RENDERER)
        return rendered
    finally:
        await conn.close()


async def _watch(page, base: str, images: tuple[str, ...]) -> dict:
    """Every request the page makes: ours go on, the README's images get a PNG, anything else
    is recorded and refused. Dialogs are recorded and dismissed."""
    seen = {"foreign": [], "images": [], "dialogs": []}
    ours = urlsplit(base).netloc

    async def route(r):
        url = r.request.url
        if urlsplit(url).netloc == ours:
            await r.continue_()
        elif url in images:
            seen["images"].append(url)
            await r.fulfill(status=200, body=PNG, content_type="image/png")
        else:
            seen["foreign"].append(url)
            await r.abort()

    async def dialog(d):
        seen["dialogs"].append(d.message)
        await d.dismiss()

    await page.route("**/*", route)
    page.on("dialog", dialog)
    return seen


async def test_the_mod_page_shows_the_readme_and_the_release_notes(world, browse):
    slug = world.slugs["lumenlanterns"]
    rendered = await _store_readme(world, slug, README)
    conn = await connect(world.db_url)
    try:
        # 1.1.0: an older public version, for the closed <details>
        await conn.execute("""UPDATE mod_versions v SET version_number = '1.1.0', status = 'public',
                                     published_at = now() - interval '40 days' FROM mods m
                              WHERE m.id = v.mod_id AND m.slug = $1 AND v.version_number = '1.3.0'""", slug)
        for tag, text in NOTES.items():
            await conn.execute("""UPDATE mod_versions v SET changelog = $2 FROM mods m
                                  WHERE m.id = v.mod_id AND m.slug = $1 AND v.version_number = $3""", slug, text, tag)
    finally:
        await conn.close()
    world.app[API].cache.invalidate_all()  # rows written behind the API's back (no event)

    b = await browse("readme", width=1280)
    seen = await _watch(b.page, world.base, rendered.images)
    await b.page.goto(f"{world.base}/mods/{slug}")
    readme = b.page.locator("section.readme")
    assert await readme.locator("h2").first.inner_text() == "Lumen Lanterns"
    assert await readme.locator("table td").first.inner_text() == "Fabric"
    assert await readme.locator("input[type=checkbox]").count() == 2
    assert await readme.locator("s").inner_text() == "No"
    image = readme.locator("img")
    await image.wait_for()
    assert await image.evaluate("i => i.complete && i.naturalWidth") == 1  # loaded, from its own origin
    assert seen["images"] == ["https://raw.githubusercontent.com/demo-author/lumen-lanterns/main/docs/lantern.png"]
    assert await readme.locator("a", has_text="the wiki").get_attribute("href") == (
        "https://github.com/demo-author/lumen-lanterns/blob/main/docs/WIKI.md")
    await b.shot("mod-1280")

    notes = b.page.locator("section.notes details.release")
    assert await notes.count() == 2
    assert await notes.nth(0).get_attribute("open") is not None
    assert await notes.nth(1).get_attribute("open") is None
    assert await notes.nth(0).locator("li").first.inner_text() == "Cherry lanterns (#4)"
    assert not await notes.nth(1).locator(".markdown").is_visible()
    await notes.nth(1).locator("summary").click()
    assert await notes.nth(1).locator(".markdown").inner_text() == "First public release."

    await b.page.click("text=Release notes on one page")
    await b.page.wait_for_url(f"{world.base}/mods/{slug}/changelog")
    assert await b.page.locator("h1").inner_text() == "Release notes of Lumen Lanterns"
    assert await b.page.locator("section.release h2 .vnum").all_inner_texts() == ["1.2.0", "1.1.0"]
    await b.shot("changelog-1280")
    narrow = await browse("narrow", width=375)
    await _watch(narrow.page, world.base, rendered.images)
    await narrow.page.goto(f"{world.base}/mods/{slug}")
    overflow = await narrow.page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, overflow  # the README's table scrolls inside its box, not the page
    await narrow.shot("mod-375")
    await narrow.page.goto(f"{world.base}/mods/{slug}/changelog")
    assert await narrow.page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    await narrow.shot("changelog-375")
    assert seen["foreign"] == [] and seen["dialogs"] == []
    assert b.errors == [] and narrow.errors == []


async def test_a_hostile_readme_opens_no_dialog_and_calls_no_foreign_host(world, browse):
    slug = world.slugs["secrettools"]
    rendered = await _store_readme(world, slug, xss.hostile_markdown())
    conn = await connect(world.db_url)
    try:
        await conn.execute("""UPDATE mod_versions v SET changelog = $2 FROM mods m
                              WHERE m.id = v.mod_id AND m.slug = $1""", slug,
                           xss.hostile_markdown().replace("\x00", "\ufffd"))  # (as the indexer stores it)
    finally:
        await conn.close()
    world.app[API].cache.invalidate_all()
    # the notes' images too: they are rendered with the same renderer against the same repository
    notes = markdown.render(xss.hostile_markdown(), markdown.Repository("stranger", "secret-tools", "main", ""),
                            heading_shift=2, max_chars=markdown.NOTES_MAX_HTML)
    allowed = tuple(dict.fromkeys((*rendered.images, *notes.images)))
    assert allowed  # (the payload README has real images: repository paths and https URLs)

    b = await browse("hostile", width=1280)
    seen = await _watch(b.page, world.base, allowed)
    for path in (f"/mods/{slug}", f"/mods/{slug}/changelog"):
        await b.page.goto(world.base + path)
        await b.page.wait_for_load_state("networkidle")
        # hover every link the README kept, as a curious visitor would (no mouseover runs), and
        # check each is an http(s) URL (a link the policy refused keeps its text and no href)
        links = b.page.locator(".markdown a[href]")
        for i in range(min(await links.count(), 60)):
            href = await links.nth(i).get_attribute("href")
            assert href and href.startswith(("https://", "http://")), href
            await links.nth(i).hover()
        assert await b.page.evaluate("typeof window.__xss") == "undefined"
        await b.page.mouse.wheel(0, 100_000)
        await b.page.wait_for_timeout(300)
    await b.shot("hostile")
    assert seen["dialogs"] == []
    assert seen["foreign"] == [], seen["foreign"]
    assert seen["images"], "the README's real images were requested"
    assert not [e for e in b.errors if "Content Security Policy" not in e], b.errors
