"""Issue 36's Atom feeds read by a real feed parser (feedparser, what feed readers run) over real
HTTP: mods arrive as they would from GitHub (FakeGitHub's releases, signed ``release``
webhooks to ingest, the indexer as its own process over real JetStream and PostgreSQL, Range
reads of real jars), the API (site included) serves on a real port and invalidates its cache
from the indexer's events. Entries, the search's filters held per file, a version that
becomes hidden leaving every feed, and 304s on If-None-Match and If-Modified-Since.
"""

from __future__ import annotations

import asyncio
import time

import feedparser

from indexium_devstack import jars

from .conftest import WEBHOOK_SECRET

NOTES = "Brighter bugs.\n\n<script>alert('notes')</script> ]]> done"


async def _parse(url: str, **conditional) -> feedparser.FeedParserDict:
    d = await asyncio.to_thread(feedparser.parse, url, **conditional)
    assert not d.get("bozo"), d.get("bozo_exception")  # well-formed Atom, as the parser reads it
    return d


async def _until(url: str, check, timeout: float = 30.0) -> feedparser.FeedParserDict:
    """The feed once ``check(d)`` holds (the indexer works in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        d = await asyncio.to_thread(feedparser.parse, url)
        if d.get("status") == 200 and not d.get("bozo") and check(d):
            return d
        if time.monotonic() > deadline:
            raise AssertionError(f"{url}: {d.get('status')} {[e.title for e in d.entries]}")
        await asyncio.sleep(0.2)


def _titles(d) -> list[str]:
    return [e.title for e in d.entries]


async def _release(world, pipeline, repo, tag: str, assets, *, action: str = "published", body: str = ""):
    gh = world.gh
    release = gh.add_release(repo, tag, assets, body=body) if action == "published" else gh.remove_release(repo, tag)
    status = await gh.send_webhook(f"{pipeline['ingest'].url}/webhooks/github", "release",
                                   gh.release_payload(release, action=action), WEBHOOK_SECRET,
                                   delivery_id=f"feeds-{repo.name}-{tag}-{action}")
    assert status == 202
    return release


async def test_feeds_through_a_real_feed_parser(world, pipeline):
    gh = world.gh
    repo = gh.add_repo("bugmaker", "glowbugs", description="Glowing bugs")
    fabric = jars.fabric_jar("glowbugs", "1.0.0", "Glow Bugs", "Bugs that glow.", minecraft="~1.20.1")
    await _release(world, pipeline, repo, "1.0.0", [("glowbugs-fabric-1.0.0.jar", fabric)], body=NOTES)
    mod_url = f"{world.base}/mods/glowbugs/versions.atom"
    # (Indexed before the next is sent: the mod's first version is the one Indexium saw first,
    # and two releases sent at once may be indexed in either order.)
    await _until(mod_url, lambda d: len(d.entries) == 1)
    # 1.1.0: fabric on 1.20.1 and forge on 1.19.2, in two files: never forge on 1.20.1.
    fabric2 = jars.fabric_jar("glowbugs", "1.1.0", "Glow Bugs", "Bugs that glow.", minecraft="~1.20.1")
    forge2 = jars.forge_jar("glowbugs", "1.1.0", "Glow Bugs", "Bugs that glow.", minecraft="[1.19.2]")
    second = await _release(world, pipeline, repo, "1.1.0", [("glowbugs-fabric-1.1.0.jar", fabric2),
                                                             ("glowbugs-forge-1.1.0.jar", forge2)])

    base = world.base
    d = await _until(mod_url, lambda d: len(d.entries) == 2)
    assert d.feed.title == "Glow Bugs: new versions"
    assert _titles(d) == ["Glow Bugs 1.1.0", "Glow Bugs 1.0.0"]
    newest, first = d.entries
    assert newest.id.startswith("urn:uuid:") and newest.id != first.id
    assert newest.published_parsed and newest.updated_parsed
    assert newest.link == f"{base}/mods/glowbugs"
    terms = [t.term for t in newest.tags]
    # Game versions as compact ranges: ~1.20.1 is 1.20.1 up to 1.20.6, [1.19.2] is 1.19.2.
    assert {"fabric", "forge", "1.19.2", "1.20.1–1.20.6"} <= set(terms), terms
    # (~1.20.1 takes 1.20.2-pre1 and the like too: left out, as on the site's pages, and counted.)
    assert not [t for t in terms if "-pre" in t or "-rc" in t], terms
    assert "snapshots or pre-releases)." in newest.summary
    assert "Loaders: fabric, forge. Minecraft: 1.19.2, 1.20.1–1.20.6" in newest.summary, newest.summary
    # The download link: one of the release's files, on GitHub.
    (enclosure,) = [link.href for link in newest.links if link.rel == "enclosure"]
    assert enclosure in {a["browser_download_url"] for a in gh.release_payload(second)["release"]["assets"]}
    assert "new-project" in {t.term for t in first.tags}
    # The release notes: the site's renderer's sanitized HTML.
    assert first.content[0].type == "text/html" and "Brighter bugs." in first.content[0].value
    assert "alert(" not in first.content[0].value

    # The search feed: the site search's filters, held per file.
    search = f"{base}/search.atom"
    assert _titles(await _parse(f"{search}?q=glow")) == ["Glow Bugs 1.1.0", "Glow Bugs 1.0.0"]
    assert _titles(await _parse(f"{search}?q=glow&loader=forge")) == ["Glow Bugs 1.1.0"]
    assert _titles(await _parse(f"{search}?q=glow&loader=forge&game_version=1.20.1")) == []
    assert _titles(await _parse(f"{search}?q=glow&loader=fabric&game_version=1.20.1")) == [
        "Glow Bugs 1.1.0", "Glow Bugs 1.0.0"]
    assert _titles(await _parse(f"{search}?q=glow&game_version=1.18.2")) == []
    everything = _titles(await _parse(search))
    assert "Lumen Lanterns 1.2.0" in everything
    # Quarantined (held) versions never appear: the world's Lumen Lanterns 1.3.0, Harvest Almanac 0.9.0.
    assert not {"Lumen Lanterns 1.3.0", "Harvest Almanac 0.9.0"} & set(everything)
    author_url = f"{base}/authors/bugmaker/versions.atom"
    assert _titles(await _parse(author_url)) == ["Glow Bugs 1.1.0", "Glow Bugs 1.0.0"]

    # Conditional GETs: what the parser remembered comes back as If-None-Match / If-Modified-Since.
    assert d.etag and d.modified
    assert (await _parse(mod_url, etag=d.etag)).status == 304
    assert (await _parse(mod_url, modified=d.modified)).status == 304
    filtered = await _parse(f"{search}?q=glow&loader=forge")
    assert (await _parse(f"{search}?q=glow&loader=forge", etag=filtered.etag, modified=filtered.modified)).status == 304

    # The release is deleted on GitHub: the version is hidden and leaves every feed, through
    # the indexer's event (no cache is cleared by hand), and the old validators no longer match.
    await asyncio.sleep(1.0)  # (Last-Modified has whole seconds: the hide must fall in a later one)
    await _release(world, pipeline, repo, "1.1.0", [], action="deleted")
    after = await _until(mod_url, lambda d: _titles(d) == ["Glow Bugs 1.0.0"])
    assert after.etag != d.etag
    assert (await _parse(mod_url, etag=d.etag)).status == 200
    assert (await _parse(mod_url, modified=d.modified)).status == 200
    assert _titles(await _parse(f"{search}?q=glow")) == ["Glow Bugs 1.0.0"]
    assert _titles(await _parse(f"{search}?q=glow&loader=forge")) == []
    assert _titles(await _parse(author_url)) == ["Glow Bugs 1.0.0"]
