"""The players' pages over a real PostgreSQL: /pack (search, add, remove, the resolution with its
reasons, export links, no solution, not on Indexium, caps) and /upgrade (the picker, the
textarea fallback, the per-file answers, bad input as a page)."""

from __future__ import annotations

import html
import io
import re
import zipfile
from urllib.parse import parse_qsl, urlsplit

import pytest

from indexium_api.core import players
from tests.component.api.test_players import GAME, catalogue

pytestmark = pytest.mark.component


async def _page(client, path, status=200, **kw):
    r = await client.get(path, **kw)
    body = await r.text()
    assert r.status == status, body[:400]
    assert r.content_type == "text/html" and "Traceback" not in body
    return body


async def test_nav_links_both_tools(client, seed):
    body = await _page(client, "/")
    assert '<a href="/pack">Build a pack</a>' in body and '<a href="/upgrade">Can I upgrade?</a>' in body


async def test_pack_search_add_resolve_and_export_links(client, seed):
    await catalogue(seed)
    body = await _page(client, "/pack")
    assert '<select id="loader" name="loader">' in body and '<option value="1.21.4" selected>' in body
    assert "No mods yet" in body
    body = await _page(client, "/pack", params={"loader": "fabric", "game_version": GAME, "q": "app"})
    # Each hit is a submit button of the one GET form: only the pressed one is sent.
    assert re.search(r'<button type="submit" class="secondary" name="mod" value="app">Add', body)
    body = await _page(client, "/pack", params=[("loader", "fabric"), ("game_version", GAME), ("mod", "app"),
                                                ("mod", "shader")])
    assert '<input type="hidden" name="mod" value="app">' in body
    assert "The pack: 3 mods for Fabric 1.21.4" in body
    assert html.escape("needed by App 1.0: lib >=1.0") in body or "needed by App 1.0: lib &gt;=1.0" in body
    assert "not on Indexium: flywheel [1.0,2.0), needed by App 1.0" in body
    links = re.findall(r'href="(/api/v1/packs/export\?[^"]+)"', body)
    assert len(links) == 2
    url = html.unescape(links[0])
    assert dict(parse_qsl(urlsplit(url).query))["format"] == "mrpack"
    assert [v for k, v in parse_qsl(urlsplit(url).query) if k == "mod"] == ["app", "shader"]
    r = await client.get(url)  # the link is the export route's own answer
    assert r.status == 200, await r.text()
    with zipfile.ZipFile(io.BytesIO(await r.read())) as z:
        assert "modrinth.index.json" in z.namelist()
    # Remove drops one mod from the choice (no server state).
    body = await _page(client, "/pack", params=[("loader", "fabric"), ("game_version", GAME), ("mod", "app"),
                                                ("mod", "shader"), ("remove", "app")])
    assert '<input type="hidden" name="mod" value="app">' not in body and "The pack: 1 mod for" in body


async def test_pack_without_a_solution_and_unknown_mods_say_why(client, seed):
    await catalogue(seed)
    body = await _page(client, "/pack", params={"loader": "fabric", "game_version": GAME, "mod": "old"})
    assert "No pack for Fabric 1.21.4" in body
    assert "no version of Old Mod supports 1.21.4 on Fabric; its newest is 0.15 for 1.21.1, 1.21" in body
    assert "/api/v1/packs/export" not in body
    body = await _page(client, "/pack", params=[("loader", "fabric"), ("game_version", GAME), ("mod", "app"),
                                                ("mod", "nope")])
    assert "Not on Indexium: <code>nope</code>" in body


async def test_pack_bad_input_is_a_clear_page(client, seed):
    body = await _page(client, "/pack", 400, params={"loader": "bogus"})
    assert "The loader must be one of" in body
    body = await _page(client, "/pack", 400, params={"game_version": "99.99.99x"})
    assert "is not a Minecraft version" in body
    too_many = [("mod", f"m{i}") for i in range(players.MAX_MODS + 1)]
    body = await _page(client, "/pack", 400, params=[("loader", "fabric"), *too_many])
    assert f"at most {players.MAX_MODS} mods" in body
    body = await _page(client, "/pack", 400, params={"mod": "x" * (players.MAX_REF + 1)})
    assert "at most 128 characters" in body


async def test_upgrade_page_says_only_hashes_leave_and_works_without_script(client, seed):
    body = await _page(client, "/upgrade")
    assert "No file leaves your computer" in body
    assert '<input type="file" id="folder" webkitdirectory multiple>' in body
    assert 'data-page-script="upgrade"' in body and '<textarea id="hashes" name="hashes"' in body
    assert "<script>" not in body  # scripts only as static files
    js = await client.get("/static/site/upgrade.js")
    assert js.status == 200 and "crypto.subtle.digest(\"SHA-1\"" in await js.text()


async def test_upgrade_answers_per_file_with_summary(client, seed):
    await catalogue(seed)
    text = "\n".join([f"{seed.hashes(2)['sha1']}  app-0.9.jar", f"{seed.hashes(5)['sha1']}  old.jar", "f" * 40])
    r = await client.post("/upgrade", data={"loader": "fabric", "game_version": GAME, "hashes": text})
    body = await r.text()
    assert r.status == 200, body[:400]
    assert '<h2 id="summary">1 of 3 ready for 1.21.4</h2>' in body
    assert "app-0.9.jar" in body and "✓ 1.0" in body
    assert "none yet" in body and "newest: 0.15 for" in body
    assert "not on Indexium" in body
    assert r.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize("text,why", [
    ("", "Paste at least one hash"),
    ("not-a-hash", "is not a sha1"),
    ("\n".join(f"{i:040x}" for i in range(players.MAX_UPGRADE_HASHES + 1)), "At most 500 files"),
])
async def test_upgrade_bad_input_is_a_clear_page(client, seed, text, why):
    r = await client.post("/upgrade", data={"loader": "fabric", "game_version": GAME, "hashes": text})
    body = await r.text()
    assert r.status == 400 and r.content_type == "text/html" and why in body, body[:300]
    r = await client.post("/upgrade", data={"loader": "bogus", "game_version": GAME, "hashes": "f" * 40})
    assert r.status == 400 and "The loader must be one of" in await r.text()
