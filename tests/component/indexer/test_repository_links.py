"""One rule for a mod's repository links: the html_url GitHub sent (stored as mods.repo_url),
the same on the site's mod page and in /v2's source_url and issues_url; the local GitHub
stand-in answers those pages with something a person can read."""

from __future__ import annotations

import re

import aiohttp

from indexium_devstack import jars


async def test_the_site_and_v2_link_the_repository_github_named(gh, releases, api, db):
    repo = gh.add_repo("alice", "lumen", description="Light mod")
    rel = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))])
    await releases.handle(rel)
    page = f"{gh.base_url}/alice/lumen"  # the stand-in's html_url, not github.com's
    assert await db.fetchval("SELECT repo_url FROM mods") == page

    async with api.get("/mods/lumen") as resp:
        html = await resp.text()
    assert re.search(r'<a href="([^"]+)">GitHub repository</a>', html).group(1) == page
    assert f'<a href="{page}/issues">Issues</a>' in html
    async with api.get("/v2/project/lumen") as resp:
        project = await resp.json()
    assert (project["source_url"], project["issues_url"]) == (page, f"{page}/issues")

    async with aiohttp.ClientSession() as http:
        for url in (page, f"{page}/issues"):
            async with http.get(url) as resp:
                assert resp.status == 200 and resp.content_type == "text/html", url
                assert "alice/lumen" in await resp.text()
        async with http.get(f"{gh.base_url}/alice/nothing") as resp:
            assert resp.status == 404


async def test_a_page_that_is_not_the_repositorys_is_not_stored(gh, releases, api, db):
    repo = gh.add_repo("alice", "lumen")
    rel = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))])
    payload = gh.release_payload(rel)
    payload["repository"]["html_url"] = "javascript:alert(1)//alice/lumen"
    await releases.indexer.handle(releases.event_from(payload))
    assert await db.fetchval("SELECT repo_url FROM mods") is None
    async with api.get("/v2/project/lumen") as resp:
        assert (await resp.json())["source_url"] == "https://github.com/alice/lumen"
