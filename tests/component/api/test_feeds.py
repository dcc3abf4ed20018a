"""The Atom feeds through the app (aiohttp test client, real PostgreSQL): what each feed holds,
its filters (per file), the conditional GETs, its errors and rate limit, the pages' links to
it; and the XML builder (atom.py) on hostile strings."""

from __future__ import annotations

import asyncio
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime

from indexium_api.feeds import atom
from indexium_api.feeds.routes import MAX_ENTRIES
from indexium_api.core.state import API
from indexium_db.queries import mods as mods_q
from indexium_jar import formats

NS = {"a": atom.NAMESPACE}
FABRIC_120 = (["fabric"], ["1.20.1"])
FORGE_119 = (["forge"], ["1.19.2"])
FORGE_120 = (["forge"], ["1.20.1"])
ATOM = "application/atom+xml; charset=utf-8"


def titles(body: bytes) -> list[str]:
    return [e.findtext("a:title", namespaces=NS) for e in ET.fromstring(body).findall("a:entry", NS)]


async def feed(client, path: str, **params) -> list[str]:
    resp = await client.get(path, params=params)
    assert resp.status == 200, await resp.text()
    assert resp.headers["Content-Type"] == ATOM
    return titles(await resp.read())


# ---- the XML builder -------------------------------------------------------------------------

HOSTILE = "Evil ]]> <script>alert(1)</script> & \"q\" 'a'\x00\x01\x08\x0b\x1f\x7f\ud800\ufffe end"


def test_hostile_strings_make_a_well_formed_document_with_the_text_intact():
    entry = atom.Entry(id="urn:uuid:1", title=HOSTILE, updated=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                       published=datetime(2026, 1, 1, tzinfo=UTC), authors=(HOSTILE,),
                       links=(atom.Link("https://example.org/?a=1&b=<2>", "enclosure", "application/java-archive",
                                        HOSTILE, 12),),
                       categories=(atom.Category(HOSTILE, None, HOSTILE),), summary=HOSTILE,
                       content="<p>notes</p>]]>" + HOSTILE, content_type="html")
    body = atom.render(atom.Feed(id="https://x.example/f", title=HOSTILE, updated=None, subtitle=HOSTILE,
                                 entries=(entry,)))
    root = ET.fromstring(body)  # raises on a document that is not well-formed
    assert body.startswith(b"<?xml version='1.0' encoding='utf-8'?>")
    clean = "Evil ]]> <script>alert(1)</script> & \"q\" 'a' end"  # every character XML cannot carry dropped
    e = root.find("a:entry", NS)
    assert root.findtext("a:title", namespaces=NS) == clean
    assert e.findtext("a:title", namespaces=NS) == clean
    assert e.findtext("a:author/a:name", namespaces=NS) == clean
    assert e.find("a:category", NS).get("term") == clean and e.find("a:category", NS).get("label") == clean
    assert e.find("a:link", NS).get("href") == "https://example.org/?a=1&b=<2>"
    assert e.find("a:link", NS).get("title") == clean and e.find("a:link", NS).get("length") == "12"
    content = e.find("a:content", NS)
    assert content.get("type") == "html" and content.text == "<p>notes</p>]]>" + clean
    # Nothing of the hostile text is markup: no element but Atom's, no raw "<script" or "]]>".
    assert {el.tag.split("}")[1] for el in root.iter()} <= {
        "feed", "id", "title", "subtitle", "updated", "generator", "author", "name", "entry", "published",
        "link", "category", "summary", "content"}
    assert b"<script" not in body and b"]]>" not in body
    assert e.findtext("a:updated", namespaces=NS) == "2026-01-02T03:04:05Z"
    assert e.findtext("a:published", namespaces=NS) == "2026-01-01T00:00:00Z"


def test_control_characters_and_lengths_are_bounded():
    assert atom.xml_text("a\x00b\x1bc\td\ne\rf\u0085g") == "abc\td\ne\rfg"
    assert atom.xml_text("x" * 600, atom.TITLE_CHARS) == "x" * (atom.TITLE_CHARS - 1) + "…"
    assert atom.xml_text("\U0001F600 ok") == "\U0001F600 ok"  # astral characters are XML


def test_an_empty_feed_is_still_atom():
    root = ET.fromstring(atom.render(atom.Feed(id="urn:x", title="t", updated=None)))
    assert root.tag == f"{{{atom.NAMESPACE}}}feed"
    # RFC 4287: id, title, updated, and an author for entries that name none.
    assert root.findtext("a:updated", namespaces=NS) == "1970-01-01T00:00:00Z"
    assert root.findtext("a:author/a:name", namespaces=NS) == "Indexium"


# ---- the feeds through the app ---------------------------------------------------------------

async def test_mod_feed_holds_public_versions_newest_first(client, seed):
    m = await seed.mod("lanterns", name="Lanterns")
    await seed.version(m, "1.0", [FABRIC_120], published=seed.T0,
                       changelog="First **light** <script>alert(1)</script> [x](javascript:alert(1)) ]]>")
    await seed.version(m, "1.1", [FABRIC_120, FORGE_119], published=seed.T0 + seed.days(1))
    await seed.version(m, "1.2", [FABRIC_120], published=seed.T0 + seed.days(2), status="quarantined")
    await seed.version(m, "1.3", [FABRIC_120], published=seed.T0 + seed.days(3), status="pending_scan")
    hidden = await seed.version(m, "1.4", [FABRIC_120], published=seed.T0 + seed.days(4))
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", hidden)
    resp = await client.get("/mods/lanterns/versions.atom")
    assert resp.status == 200 and resp.headers["Content-Type"] == ATOM
    root = ET.fromstring(await resp.read())
    assert titles(await resp.read()) == ["Lanterns 1.1", "Lanterns 1.0"]
    newest, first = root.findall("a:entry", NS)
    assert newest.findtext("a:id", namespaces=NS).startswith("urn:uuid:")
    assert newest.findtext("a:published", namespaces=NS) == "2025-01-02T00:00:00Z"
    assert newest.findtext("a:summary", namespaces=NS) == "Loaders: fabric, forge. Minecraft: 1.19.2, 1.20.1."
    links = {link.get("rel"): link.get("href") for link in newest.findall("a:link", NS)}
    assert links == {"alternate": "http://127.0.0.1:8080/mods/lanterns",
                     "enclosure": "https://github.com/o/r/releases/download/1.1/f0.jar",
                     "related": "https://github.com/owner/lanterns/releases/tag/1.1"}
    assert {c.get("term") for c in newest.findall("a:category", NS)} == {"fabric", "forge", "1.19.2", "1.20.1"}
    first_terms = {c.get("term") for c in first.findall("a:category", NS)}
    assert "new-project" in first_terms and first.findtext("a:summary", namespaces=NS).startswith("New project.")
    # The notes: the site's Markdown renderer and sanitizer, carried as escaped text (type="html").
    content = first.find("a:content", NS)
    assert content.get("type") == "html" and "First <strong>light</strong>" in content.text
    # (markdown-it leaves a javascript: link as the text it was; the HTML escapes ">".)
    assert "<script" not in content.text and 'href="javascript' not in content.text and "]]&gt;" in content.text
    assert not list(content)  # no element of the author's inside the document
    # Filters hold per file: 1.1's forge file is for 1.19.2 only.
    assert await feed(client, "/mods/lanterns/versions.atom", loader="forge") == ["Lanterns 1.1"]
    assert await feed(client, "/mods/lanterns/versions.atom", loader="forge", game_version="1.20.1") == []
    assert await feed(client, "/mods/lanterns/versions.atom", loader="fabric", game_version="1.20.1") == [
        "Lanterns 1.1", "Lanterns 1.0"]


async def test_author_feed_covers_the_owners_listed_mods(client, seed):
    a = await seed.mod("alpha", name="Alpha", owner="Maker")
    b = await seed.mod("beta", name="Beta", owner="maker")
    other = await seed.mod("gamma", name="Gamma", owner="someone", authors=("Maker",))
    await seed.version(a, "1.0", [FABRIC_120], published=seed.T0)
    await seed.version(b, "2.0", [FORGE_120], published=seed.T0 + seed.days(1))
    await seed.version(other, "3.0", [FABRIC_120], published=seed.T0 + seed.days(2))
    assert await feed(client, "/authors/maker/versions.atom") == ["Beta 2.0", "Alpha 1.0"]
    assert await feed(client, "/authors/MAKER/versions.atom", loader="fabric") == ["Alpha 1.0"]
    missing = await client.get("/authors/nobody/versions.atom")
    assert missing.status == 404 and (await missing.json())["error"] == "not_found"
    bad = await client.get("/authors/-bad-/versions.atom")
    assert bad.status == 404 and bad.headers["Content-Type"].startswith("application/json")


async def test_search_feed_uses_the_search_filters_per_file(client, seed):
    lamps = await seed.mod("lamps", name="Lamps", summary="Bright lamps", categories=["decoration"])
    mixed = await seed.mod("mixedlamps", name="Mixed Lamps", summary="Lamps for both",
                           categories=["decoration"])
    crops = await seed.mod("crops", name="Crops", summary="Farming", categories=["food"])
    await seed.version(lamps, "1.0", [FABRIC_120], published=seed.T0)
    await seed.version(lamps, "1.1", [FORGE_119], published=seed.T0 + seed.days(1))
    # Forge on 1.19.2 and fabric on 1.20.1, never forge on 1.20.1 in one file.
    await seed.version(mixed, "5.0", [FORGE_119, FABRIC_120], published=seed.T0 + seed.days(2))
    await seed.version(crops, "0.1", [FORGE_120], published=seed.T0 + seed.days(3))
    assert await feed(client, "/search.atom") == ["Crops 0.1", "Mixed Lamps 5.0", "Lamps 1.1", "Lamps 1.0"]
    assert await feed(client, "/search.atom", q="lamps") == ["Mixed Lamps 5.0", "Lamps 1.1", "Lamps 1.0"]
    assert await feed(client, "/search.atom", q="lamps", loader="forge") == ["Mixed Lamps 5.0", "Lamps 1.1"]
    assert await feed(client, "/search.atom", loader="forge", game_version="1.20.1") == ["Crops 0.1"]
    assert await feed(client, "/search.atom", category="food") == ["Crops 0.1"]
    assert await feed(client, "/search.atom", q="lamps", game_version="1.20.1") == ["Mixed Lamps 5.0", "Lamps 1.0"]
    # The project type, as the site's search and /api/v1 filter it: a resource pack is not a mod.
    await mods_q.set_project_type(seed.db, crops["id"], formats.RESOURCEPACK)
    assert await feed(client, "/search.atom", type="resourcepack") == ["Crops 0.1"]
    assert await feed(client, "/search.atom", type="mod") == ["Mixed Lamps 5.0", "Lamps 1.1", "Lamps 1.0"]
    # The site search's parser and bounds: a bad value is a 400 naming it.
    for query, name in (({"category": "nonsense"}, "category"), ({"environment": "moon"}, "environment"),
                        ({"q": "x" * 201}, "q"), ({"loader": [f"l{i}" for i in range(21)]}, "loader"),
                        ({"type": "texturepack"}, "type")):
        resp = await client.get("/search.atom", params=query)
        assert resp.status == 400, query
        assert resp.headers["Content-Type"].startswith("application/json")
        assert name in (await resp.json())["description"]


async def test_a_feed_holds_at_most_max_entries(client, seed):
    m = await seed.mod("busy", name="Busy")
    for i in range(MAX_ENTRIES + 3):
        await seed.version(m, f"1.{i}", [FABRIC_120], published=seed.T0 + seed.days(i))
    got = await feed(client, "/mods/busy/versions.atom")
    assert len(got) == MAX_ENTRIES and got[0] == f"Busy 1.{MAX_ENTRIES + 2}"


async def test_conditional_gets_answer_304(client, seed):
    m = await seed.mod("cond", name="Cond")
    await seed.version(m, "1.0", [FABRIC_120])
    await seed.version(m, "1.1", [FABRIC_120], published=seed.T0 + seed.days(1))
    first = await client.get("/mods/cond/versions.atom")
    etag, last_modified = first.headers["ETag"], first.headers["Last-Modified"]
    stamp = parsedate_to_datetime(last_modified)
    updated = datetime.fromisoformat(ET.fromstring(await first.read()).findtext("a:updated", namespaces=NS))
    assert stamp == updated  # Last-Modified is the feed's <updated>
    for headers in ({"If-None-Match": etag}, {"If-Modified-Since": last_modified},
                    {"If-Modified-Since": format_datetime(stamp + timedelta(hours=1), usegmt=True)}):
        resp = await client.get("/mods/cond/versions.atom", headers=headers)
        assert resp.status == 304, headers
        assert resp.headers["ETag"] == etag and resp.headers["Last-Modified"] == last_modified
        assert await resp.read() == b""
    for headers in ({"If-None-Match": '"other"'}, {"If-Modified-Since": "not a date"},
                    {"If-Modified-Since": format_datetime(stamp - timedelta(seconds=1), usegmt=True)},
                    # If-None-Match decides when both come (RFC 9110 13.2.2)
                    {"If-None-Match": '"other"', "If-Modified-Since": last_modified}):
        assert (await client.get("/mods/cond/versions.atom", headers=headers)).status == 200, headers
    # Hiding the newest version writes its updated_at: the stamp moves forward although the newest
    # entry left, so the old date is no longer "not modified".
    await asyncio.sleep(1.1)
    await seed.db.execute("UPDATE mod_versions SET hidden = true, updated_at = now() WHERE version_number = '1.1'")
    client.app[API].cache.invalidate("global", "mod:cond")  # what the version_hidden event does
    resp = await client.get("/mods/cond/versions.atom", headers={"If-Modified-Since": last_modified})
    assert resp.status == 200 and titles(await resp.read()) == ["Cond 1.0"]
    assert parsedate_to_datetime(resp.headers["Last-Modified"]) > stamp and resp.headers["ETag"] != etag


async def test_feeds_are_cached_and_invalidated_with_the_mods_pages(client, seed):
    m = await seed.mod("cachedfeed", name="Cached Feed")
    v = await seed.version(m, "1.0", [FABRIC_120])
    assert (await client.get("/mods/cachedfeed/versions.atom")).headers["X-Cache"] == "MISS"
    assert (await client.get("/mods/cachedfeed/versions.atom")).headers["X-Cache"] == "HIT"
    await seed.version(m, "1.1", [FABRIC_120], published=seed.T0 + seed.days(1))
    assert await feed(client, "/mods/cachedfeed/versions.atom") == ["Cached Feed 1.0"]  # cached
    # What a version event for the mod does (invalidation.tags_for: the global tag and the mod's).
    client.app[API].cache.invalidate("global", "mod:cachedfeed")
    assert await feed(client, "/mods/cachedfeed/versions.atom") == ["Cached Feed 1.1", "Cached Feed 1.0"]
    assert await feed(client, "/search.atom", q="cached") == ["Cached Feed 1.1", "Cached Feed 1.0"]
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", v)
    client.app[API].cache.invalidate("global", "mod:cachedfeed")
    assert await feed(client, "/mods/cachedfeed/versions.atom") == ["Cached Feed 1.1"]
    assert await feed(client, "/search.atom", q="cached") == ["Cached Feed 1.1"]


async def test_errors_are_the_json_envelope(client, seed):
    for path in ("/mods/nope/versions.atom", "/mods/NO!/versions.atom"):
        resp = await client.get(path, headers={"Accept": "text/html"})
        assert resp.status == 404 and (await resp.json())["error"] == "not_found"


async def test_feeds_count_against_the_api_rate_limit_and_429_is_json(make_client, seed):
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="2", INDEXIUM_API_RATE_LIMIT_SITE_PER_MINUTE="100")
    m = await seed.mod("limited", name="Limited")
    await seed.version(m, "1.0", [FABRIC_120])
    assert (await client.get("/mods/limited/versions.atom")).headers["X-RateLimit-Limit"] == "2"
    await client.get("/search.atom")
    limited = await client.get("/authors/owner/versions.atom", headers={"Accept": "application/atom+xml"})
    assert limited.status == 429 and int(limited.headers["Retry-After"]) >= 1
    assert limited.headers["Content-Type"].startswith("application/json")
    assert (await limited.json())["error"] == "rate_limited"


async def test_pages_link_their_feeds(client, seed):
    m = await seed.mod("linked", name="Linked", owner="linker")
    await seed.version(m, "1.0", [FABRIC_120])
    page = await (await client.get("/mods/linked")).text()
    assert '<link rel="alternate" type="application/atom+xml" title="Linked: new versions" ' \
           'href="/mods/linked/versions.atom">' in page
    assert 'href="/authors/linker/versions.atom"' in page
    home = await (await client.get("/", params={"q": "linked", "loader": "fabric", "sort": "downloads"})).text()
    assert 'type="application/atom+xml"' in home and 'href="/search.atom?q=linked&amp;loader=fabric"' in home
    assert 'href="/search.atom"' in await (await client.get("/")).text()


async def test_the_search_walk_finds_the_newest_matching_versions_batch_by_batch(client, seed, monkeypatch):
    from indexium_db.queries import feeds as feeds_q  # noqa: PLC0415

    monkeypatch.setattr(feeds_q, "SEARCH_BATCH", 2)
    # Recently updated mods whose newest versions are fabric-only, their forge files old; and an
    # older mod with a forge version newer than those: the walk must go past the first batches.
    for i in range(5):
        m = await seed.mod(f"recent{i}", name=f"Recent {i}")
        await seed.version(m, "1.0", [FORGE_120], published=seed.T0 + seed.days(i))
        await seed.version(m, "2.0", [FABRIC_120], published=seed.T0 + seed.days(100 + i))
    older = await seed.mod("older", name="Older")
    await seed.version(older, "1.0", [FORGE_120], published=seed.T0 + seed.days(50))
    got = await feed(client, "/search.atom", loader="forge")
    assert got == ["Older 1.0", "Recent 4 1.0", "Recent 3 1.0", "Recent 2 1.0", "Recent 1 1.0", "Recent 0 1.0"]
    assert await feed(client, "/search.atom") == [f"Recent {i} 2.0" for i in range(4, -1, -1)] + [
        "Older 1.0"] + [f"Recent {i} 1.0" for i in range(4, -1, -1)]
    monkeypatch.setattr(feeds_q, "SEARCH_MAX_MODS", 2)  # the bound: the walk stops there
    client.app[API].cache.invalidate_all()
    assert await feed(client, "/search.atom", loader="forge") == ["Recent 4 1.0", "Recent 3 1.0"]


async def test_a_mod_leaving_a_search_feed_moves_its_last_modified(client, seed):
    keep = await seed.mod("keeper", name="Keeper")
    await seed.version(keep, "1.0", [FABRIC_120])
    leaving = await seed.mod("leaver", name="Leaver")
    v = await seed.version(leaving, "1.0", [FABRIC_120], published=seed.T0 + seed.days(1))
    first = await client.get("/search.atom")
    assert titles(await first.read()) == ["Leaver 1.0", "Keeper 1.0"]
    await asyncio.sleep(1.1)
    # The release is deleted: the version hidden and the mod, with no public version, unlisted.
    await seed.db.execute("UPDATE mod_versions SET hidden = true, updated_at = now() WHERE id = $1", v)
    from indexium_db.queries import mods as mods_q  # noqa: PLC0415

    await mods_q.refresh_rollup(seed.db, leaving["id"])
    client.app[API].cache.invalidate("global", "mod:leaver")
    resp = await client.get("/search.atom", headers={"If-Modified-Since": first.headers["Last-Modified"]})
    assert resp.status == 200 and titles(await resp.read()) == ["Keeper 1.0"]
    assert parsedate_to_datetime(resp.headers["Last-Modified"]) > parsedate_to_datetime(first.headers["Last-Modified"])
    # Nothing in the catalogue changed since: both validators answer 304.
    for headers in ({"If-Modified-Since": resp.headers["Last-Modified"]}, {"If-None-Match": resp.headers["ETag"]}):
        assert (await client.get("/search.atom", headers=headers)).status == 304
