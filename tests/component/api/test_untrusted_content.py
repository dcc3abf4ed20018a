"""Rows stored before the one URL policy and the category vocabulary (issue 33) are served safe
by every surface: /api/v1, /v2, forge_updates.json and the web site; the category filters of
every surface, and the search index against the SQL path, agree on them; and a fuzz of the
rendered links with the OWASP filter-evasion payloads."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings, strategies as st

from indexium_api.site import pages, render, review
from indexium_content.categories import VOCABULARY
from indexium_devstack import xss

FABRIC_120 = ["fabric"], ["1.20.1"]
HOSTILE_LINKS = {
    "homepage": "javascript:fetch('/review').then(r=>r.text())", "wiki": "jav\tascript:alert(1)",
    "issues": "https://user:pass@evil.example/", "sources": "https:\\\\evil.example", "donate": "data:text/html,x",
    "<img src=x onerror=alert(1)>": "https://example.org", "discord": "https://discord.gg/lumen",
}
HOSTILE_TOPICS = ["<script>alert('topic')</script>", "fabric", "forge", "minecraft", "storage", "tech", "lighting"]
_C0_OR_SPACE = "".join(map(chr, range(0x21)))


class _Links(HTMLParser):
    """Every URL-valued attribute of a page, its character references decoded as a browser does."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str, str]] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src", "action", "formaction", "poster", "data") and value is not None:
                self.urls.append((tag, name, value))
            if name.startswith("on"):
                self.handlers.append(f"{tag} {name}")


def assert_links_safe(html: str) -> list[str]:
    """Every URL on the page is our own path or an http(s) URL as a browser reads it (C0 and
    spaces trimmed, tab/LF/CR removed, then the scheme); no inline event handler anywhere."""
    parser = _Links()
    parser.feed(html)
    assert parser.handlers == []
    seen = []
    for tag, attr, value in parser.urls:
        read = re.sub(r"[\t\n\r]", "", value.strip(_C0_OR_SPACE))
        scheme = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", read)
        if scheme is None:
            assert read.startswith(("/", "?", "#")) and not read.startswith(("//", "/\\")), (tag, attr, value)
        else:
            assert scheme[1].lower() in ("http", "https"), (tag, attr, value)
            assert "@" not in re.split(r"[/?#\\]", read[scheme.end():].lstrip("/\\"), maxsplit=1)[0], value
        seen.append(value)
    return seen


async def _stored_before(seed, db):
    """A listed mod whose row holds what the indexer wrote before issue 33 (straight SQL)."""
    mod = await seed.mod("lumen", name="Lumen", categories=["storage"])
    await seed.version(mod, "1.0.0", [(*FABRIC_120, seed.hashes(1))])
    await db.execute("UPDATE mods SET links = $2::jsonb, categories = $3, tags = $4, repo_url = $5 WHERE id = $1",
                     mod["id"], HOSTILE_LINKS, HOSTILE_TOPICS, ["lighting", "<b>bold</b>"],
                     "javascript:alert(1)//owner/lumen")
    await db.execute("UPDATE version_files SET url = 'javascript:alert(1)' WHERE filename LIKE 'lumen-%'")
    return mod


async def test_rows_stored_before_the_policy_are_served_safe_everywhere(client, seed, db):
    await _stored_before(seed, db)
    card = await (await client.get("/api/v1/mods/lumen")).json()
    assert card["links"] == {"discord": "https://discord.gg/lumen"}
    assert card["categories"] == ["storage"] and card["tags"] == ["lighting"]
    (version,) = await (await client.get("/api/v1/mods/lumen/versions")).json()
    assert version["files"][0]["url"] == ""
    hits = (await (await client.get("/api/v1/mods", params={"q": "lumen"})).json())["hits"]
    assert hits[0]["categories"] == ["storage"]

    project = await (await client.get("/v2/project/lumen")).json()
    assert project["wiki_url"] is None and project["discord_url"] == "https://discord.gg/lumen"
    assert project["issues_url"] == "https://github.com/owner/lumen/issues" and project["categories"] == ["storage"]
    (hit,) = (await (await client.get("/v2/search", params={"query": "lumen"})).json())["hits"]
    assert hit["categories"] == ["storage", "fabric"]  # + its loader, as Modrinth's hits carry them
    tags = await (await client.get("/v2/tag/category")).json()
    assert {t["name"] for t in tags} == VOCABULARY  # never a topic, never a loader
    forge = await (await client.get("/updates/lumen/forge_updates.json")).json()
    assert forge["homepage"] == "https://github.com/owner/lumen"

    page = await client.get("/mods/lumen")
    html = await page.text()
    hrefs = assert_links_safe(html)
    assert "https://discord.gg/lumen" in hrefs and not any("evil" in h or "javascript" in h for h in hrefs)
    assert "<script>alert" not in html and "&lt;script&gt;alert" not in html  # the topic is not shown at all
    assert "#lighting" in html and 'href="/?category=storage"' in html


async def test_category_filters_agree_on_every_surface_and_in_both_search_paths(make_client, seed, db):
    await _stored_before(seed, db)
    other = await seed.mod("crate", name="Crate", categories=["storage", "technology", "lighting"])
    await seed.version(other, "1.0.0", [(*FABRIC_120, seed.hashes(2))])
    for env in ({}, {"INDEXIUM_API_SEARCH_INDEX": "false"}):  # the in-process index, then SQL alone
        client = await make_client(**env)

        async def v1(**query):
            resp = await client.get("/api/v1/mods", params=query)
            return resp.status, sorted(h["slug"] for h in (await resp.json()).get("hits", []))

        async def v2(facets):
            resp = await client.get("/v2/search", params={"facets": json.dumps(facets)})
            assert resp.status == 200
            return sorted(h["slug"] for h in (await resp.json())["hits"])

        assert await v1(category="storage") == (200, ["crate", "lumen"])
        assert await v1(category="technology") == (200, ["crate"])  # lumen's stored "tech" is no category
        assert await v1(category="tech") == (200, ["crate"])  # a synonym means its category
        assert (await v1(category="<script>alert('topic')</script>"))[0] == 400
        assert (await v1(category="lighting"))[0] == 400  # a tag is never a category
        assert await v2([["categories:storage"]]) == ["crate", "lumen"]
        assert await v2([["categories:technology"]]) == ["crate"]
        assert await v2([["categories:<script>alert('topic')</script>"]]) == []
        assert await v2([["categories:lighting"]]) == []
        assert await v2([["categories!=lighting"]]) == ["crate", "lumen"]
        assert await v2([["categories:fabric"]]) == ["crate", "lumen"]  # a loader, from the jars
        site = await client.get("/", params={"category": "Storage tech"})
        assert site.status == 200 and "Crate" in await site.text() and "Lumen" not in await site.text()
        assert (await client.get("/", params={"category": "fabric"})).status == 400


def _row(links=None, files_url="https://github.com/o/r/releases/download/1/a.jar", categories=(), tags=()):
    return {"slug": "lumen", "name": "Lumen", "summary": "s", "description": "d", "authors": ["a"], "owner": "o",
            "licenses": ["MIT"], "links": links or {}, "categories": list(categories), "tags": list(tags),
            "environment": "both", "loaders": ["fabric"], "game_versions": ["1.20.1"], "latest_version": "1",
            "downloads": 1, "repo_full_name": "o/lumen", "repo_url": "javascript:alert(1)//o/lumen", "created_at": None,
            "updated_at": None, "has_icon": True, "fork": False,
            "active_servers": 0, "project_type": "mod"}


def _version(url):
    return {"version_number": "1", "version_type": "release", "published_at": None,
            "files": [{"url": url, "filename": "a.jar", "size": 1, "loaders": ["fabric"],
                       "game_versions": ["1.20.1"], "game_versions_inferred": False,
                       "hashes": {"sha1": "a" * 40, "sha512": "b" * 128}}]}


_PAYLOAD = st.one_of(st.sampled_from(xss.REFUSED + xss.ALLOWED), st.text(max_size=30),
                     st.builds(lambda a, b: a + b, st.sampled_from(xss.REFUSED), st.text(max_size=8)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(links=st.dictionaries(st.sampled_from(["homepage", "issues", "wiki", "discord", "sources", "x"]), _PAYLOAD,
                             max_size=5),
       file_url=_PAYLOAD, topics=st.lists(st.sampled_from(xss.TOPICS), max_size=5))
def test_fuzz_rendered_links_of_the_mod_and_review_pages(client, links, file_url, topics):
    """Whatever a row holds, the page renders only our own paths and http(s) URLs (the review
    queue's file links too: the operator's page)."""
    app = client.app
    context = pages.mod_context(app, _row(links, categories=topics, tags=topics), [_version(file_url)], [], [],
                                None, range_key="30d")
    assert_links_safe(render.text(app, "mod.html", **context))
    item = {"row": {"id": "00000000-0000-0000-0000-000000000000", "repo_full_name": "o/lumen", "mod_name": "Lumen",
                    "version_number": "1", "updated_at": None, "tag_name": "1",
                    "files": [{"url": file_url, "filename": "a.jar", "size": 1, "scan_status": "suspicious",
                               "scan_reason": None, "sha256": None}]}, "findings": [],
            "ownership": ["claims the mod id lumen of o/lumen"], "reupload": False}
    assert_links_safe(render.text(app, "review.html", items=[item], done=None, severities=review.SEVERITIES))
