"""The README and release notes on every surface (issue 35; issue 33's links in release notes):
the mod page's rendered README (its image origins in the page's own CSP), the newest version's
notes open and the rest in <details>, /mods/{slug}/changelog, /v2 body (sanitized HTML),
/api/v1 description_html, and raw changelogs whose refused links are neutralised on /v2,
/api/v1 and forge_updates.json; a README change reaches the cached page, the JSON and search
through mod_changed.v1."""

from __future__ import annotations

import asyncio
import re

import nats

from indexium_api.core.state import API
from indexium_content import markdown
from indexium_contracts import versions as events
from indexium_db.queries import readmes as readmes_q

from .site.test_ownership_pages import gh, site  # noqa: F401 (fixtures: FakeGitHub and a site to sign in to)
from .test_untrusted_content import assert_links_safe

FABRIC_120 = (["fabric"], ["1.20.1"])
README = """# Lumen

<p align="center"><img src="docs/logo.png" alt="Lumen logo" onerror="alert(1)"></p>

Dynamic **lights** for ~~caves~~ everything. ![badge](https://img.shields.io/badge/mc-1.20-green)

| loader | since |
|---|--:|
| fabric | 1.0 |

- [x] torches
- [ ] lanterns

<script>alert('readme')</script><iframe src="https://evil.example/"></iframe>
[docs](docs/USAGE.md) [bad](javascript:alert(1)) <a href="jav&#x09;ascript:alert(2)">tab</a>
"""
HOSTILE_NOTES = ("## Fixed\n\n- crash on load ([#12](https://github.com/owner/lumen/issues/12))\n"
                 "- [click me](javascript:alert('notes')) <img src=x onerror=alert(3)>\n\n"
                 "[ref]: vbscript:msgbox(1)\n")


async def store_readme(db, mod, text: str = README) -> markdown.Rendered:
    rendered = markdown.render(text, markdown.Repository("owner", "lumen", "main", "README.md"))
    repo_id = await db.fetchval("SELECT github_repo_id FROM mods WHERE id = $1", mod["id"])
    await readmes_q.store(db, repo_id, etag='"e1"', path="README.md", branch="main", raw_text=text,
                          html=rendered.html, plain_text=rendered.text, truncated=rendered.truncated,
                          renderer=markdown.RENDERER)
    return rendered


async def lumen(seed, db):
    mod = await seed.mod("lumen", name="Lumen", summary="Dynamic lights.", description="Long text.")
    await seed.version(mod, "1.0.0", [FABRIC_120], changelog="First release.", published=_t(1))
    await seed.version(mod, "1.1.0", [FABRIC_120], changelog="", published=_t(2))  # no notes
    await seed.version(mod, "1.2.0", [FABRIC_120], changelog=HOSTILE_NOTES, published=_t(3))
    return mod


def _t(day: int):
    from datetime import UTC, datetime

    return datetime(2026, 11, day, tzinfo=UTC)


async def test_the_mod_page_shows_the_readme_and_release_notes(client, seed, db):
    mod = await lumen(seed, db)
    rendered = await store_readme(db, mod)
    assert await db.fetchval("SELECT readme_text FROM mods WHERE id = $1", mod["id"]) == rendered.text
    resp = await client.get("/mods/lumen")
    html = await resp.text()
    assert resp.status == 200
    assert_links_safe(html)
    readme = html.split('<section class="readme markdown"', 1)[1].split("</section>", 1)[0]
    assert "<h2>Lumen</h2>" in readme and "<strong>lights</strong>" in readme and "<s>caves</s>" in readme
    assert 'src="https://raw.githubusercontent.com/owner/lumen/main/docs/logo.png"' in readme
    assert 'href="https://github.com/owner/lumen/blob/main/docs/USAGE.md"' in readme
    assert "<table>" in readme and 'type="checkbox"' in readme
    for hostile in ("onerror", "<script", "<iframe", "evil.example", 'href="jav'):
        assert hostile not in readme, hostile  # ("[bad](javascript:alert(1))" stays, as text)
    # the page's own CSP allows exactly the README's image origins, and still no inline anything
    csp = resp.headers["Content-Security-Policy"]
    img = re.search(r"img-src ([^;]+)", csp)[1].split()
    assert img == ["'self'", "https://avatars.githubusercontent.com", "https://img.shields.io",
                   "https://raw.githubusercontent.com"]
    assert "unsafe-inline" not in csp and "script-src 'self'" in csp
    # the manifest's description gives way to the README
    assert "Long text." not in html
    # release notes: newest with notes open, the one without notes absent, older ones closed
    notes = html.split('<section class="notes"', 1)[1].split("</section>", 1)[0]
    details = re.findall(r"<details class=\"release\"( open)?>\s*<summary><span class=\"vnum\">([^<]+)", notes)
    assert details == [(" open", "1.2.0"), ("", "1.0.0")]
    assert "<h4>Fixed</h4>" in notes  # under the page's h2 "Release notes"
    assert 'href="https://github.com/owner/lumen/issues/12"' in notes
    assert "onerror" not in notes and 'href="vbscript' not in notes and 'href="jav' not in notes
    assert 'href="/mods/lumen/changelog"' in notes
    # cached: the second answer is a hit with the same CSP
    again = await client.get("/mods/lumen")
    assert again.headers["X-Cache"] == "HIT" and again.headers["Content-Security-Policy"] == csp


async def test_the_changelog_page_holds_every_versions_notes(client, seed, db):
    await lumen(seed, db)
    resp = await client.get("/mods/lumen/changelog")
    html = await resp.text()
    assert resp.status == 200
    assert_links_safe(html)
    assert re.findall(r'<span class="vnum">([^<]+)</span>', html) == ["1.2.0", "1.0.0"]
    assert "First release." in html and "<h4>Fixed</h4>" in html and "onerror" not in html
    assert 'href="https://github.com/owner/lumen/releases/tag/1.2.0"' in html
    # (the notes' <img src=x> is a path in the repository: raw.githubusercontent.com, its only image)
    assert ("img-src 'self' https://avatars.githubusercontent.com https://raw.githubusercontent.com;"
            in resp.headers["Content-Security-Policy"])
    assert (await client.get("/mods/nope/changelog")).status == 404


async def test_json_surfaces_serve_the_readme_html_and_neutralised_changelogs(client, seed, db):
    mod = await lumen(seed, db)
    card = await (await client.get("/api/v1/mods/lumen")).json()
    assert card["description_html"] is None and card["description"] == "Long text."
    project = await (await client.get("/v2/project/lumen")).json()
    assert project["body"] == "Long text."  # no README read yet: the manifest's description, as before
    rendered = await store_readme(db, mod)
    from indexium_api.core.state import API

    client.app[API].cache.invalidate_all()
    card = await (await client.get("/api/v1/mods/lumen")).json()
    assert card["description_html"] == rendered.html
    (project,) = await (await client.get("/v2/projects", params={"ids": '["lumen"]'})).json()
    assert project["body"] == rendered.html and "onerror" not in project["body"]

    versions = await (await client.get("/api/v1/mods/lumen/versions")).json()
    notes = {v["version_number"]: v["changelog"] for v in versions}
    assert notes["1.2.0"] == ("## Fixed\n\n- crash on load ([#12](https://github.com/owner/lumen/issues/12))\n"
                              "- [click me](#) <img src=\"#\" onerror=alert(3)>\n\n[ref]: #\n")
    assert notes["1.0.0"] == "First release."
    v2 = await (await client.get("/v2/project/lumen/version")).json()
    assert {v["version_number"]: v["changelog"] for v in v2}["1.2.0"] == notes["1.2.0"]
    forge = await (await client.get("/updates/lumen/forge_updates.json")).json()
    assert "javascript" not in str(forge) and "vbscript" not in str(forge)


async def test_a_readme_change_reaches_the_cached_page_json_and_search(make_client, nats_url, seed, db):
    client = await make_client(NATS_URL=nats_url)
    await asyncio.wait_for(client.app[API].bus.subscribed.wait(), 10)
    mod = await lumen(seed, db)
    await store_readme(db, mod)
    assert "Dynamic <strong>lights</strong>" in await (await client.get("/mods/lumen")).text()
    assert (await client.get("/mods/lumen")).headers["X-Cache"] == "HIT"
    await (await client.get("/api/v1/mods/lumen")).json()
    # the GitHub role stores a new README, then announces the repository's mod after commit
    await store_readme(db, mod, "# Lumen\n\nNow with quokkas.")
    nc = await nats.connect(nats_url)
    await nc.jetstream().publish(events.MOD_CHANGED, events.encoder.encode(events.ModChanged(
        mod_id=str(mod["id"]), slug="lumen", visible=True, cause="readme")))
    await nc.drain()
    for _ in range(200):
        page = await (await client.get("/mods/lumen")).text()
        if "quokkas" in page:
            break
        await asyncio.sleep(0.02)
    assert "quokkas" in page and "Dynamic <strong>lights</strong>" not in page
    assert "quokkas" in (await (await client.get("/api/v1/mods/lumen")).json())["description_html"]
    for _ in range(200):  # the search index re-read the mod: a README-only word finds it
        hits = (await (await client.get("/api/v1/mods", params={"q": "quokkas"})).json())["hits"]
        if hits:
            break
        await asyncio.sleep(0.05)
    assert [h["slug"] for h in hits] == ["lumen"]


async def test_a_signed_in_visitor_gets_the_same_readme_under_a_nonce_policy_with_its_images(site, gh, seed, db):
    """The cached page, sent to a signed-in visitor with the signed-in header swapped in
    (render.for_visitor), keeps the page's image origins in its per-response policy."""
    from .site.test_ownership_pages import sign_in

    mod = await lumen(seed, db)
    await store_readme(db, mod)
    await sign_in(site, gh, "alice")
    resp = await site.get("/mods/lumen")
    html = await resp.text()
    assert "Sign out" in html and "<strong>lights</strong>" in html
    csp = resp.headers["Content-Security-Policy"]
    assert "'nonce-" in csp and "'strict-dynamic'" in csp and "unsafe-inline" not in csp
    assert re.search(r"img-src ([^;]+)", csp)[1].split() == [
        "'self'", "https://avatars.githubusercontent.com", "https://img.shields.io", "https://raw.githubusercontent.com"]
