"""The site's public pages over a real PostgreSQL: search, a mod page, 404s, cache and invalidation."""

from __future__ import annotations

import re

from indexium_api.core.respond import mod_tag
from indexium_api.core.state import API
from indexium_db.queries import mods as mods_q
from indexium_jar import formats


async def _listed(seed, manifest_id="lumen", name="Lumen Lanterns", summary="Colourful lanterns", **kw):
    mod = await seed.mod(manifest_id, name=name, summary=summary, **kw)
    await seed.version(mod, "1.0.0", [(["fabric"], ["1.20.1"], _hashes(1))])
    return mod


def _hashes(n):
    return {"sha1": f"{n:040x}", "sha256": f"{n:064x}", "sha512": f"{n:0128x}"}


async def test_home_lists_and_searches(client, seed):
    await _listed(seed)
    await _listed(seed, "quarry", name="Quarry Logistics", summary="Automated quarries")
    r = await client.get("/")
    assert r.status == 200 and r.content_type == "text/html"
    body = await r.text()
    assert '<input type="search" id="q" name="q"' in body and '<label for="q">' in body
    assert "Lumen Lanterns" in body and "Quarry Logistics" in body
    r = await client.get("/", params={"q": "quarries"})
    body = await r.text()
    assert "Quarry Logistics" in body and "Lumen Lanterns" not in body
    assert re.search(r"<h2 id=\"results-h\">1 mod for “quarries”</h2>", body)


async def test_home_filters_by_type_and_shows_it_on_every_card(client, seed):
    await _listed(seed)
    pack = await _listed(seed, "glowpack", name="Glow Textures", summary="Glowing textures")
    await mods_q.set_project_type(seed.db, pack["id"], formats.RESOURCEPACK)
    body = await (await client.get("/")).text()
    # The registry's every type, by its readable name.
    options = re.search(r'<select id="type" name="type">(.*?)</select>', body, re.S).group(1)
    assert re.findall(r'<option value="(\w*)"', options) == ["", *formats.PROJECT_TYPES]
    assert f'<option value="{formats.RESOURCEPACK}">Resource pack</option>' in options
    cards = dict(re.findall(r'<a href="/mods/([\w-]+)">.*?<li class="type">([^<]+)</li>', body, re.S))
    assert cards == {"lumen": "Mod", "glowpack": "Resource pack"}, cards
    r = await client.get("/", params={"type": formats.RESOURCEPACK})
    body = await r.text()
    assert r.status == 200 and "Glow Textures" in body and "Lumen Lanterns" not in body
    assert f'<option value="{formats.RESOURCEPACK}" selected>' in body
    assert f"type={formats.RESOURCEPACK}" in body  # the links (subscribe, pages) keep it
    body = await (await client.get("/", params={"type": formats.MOD})).text()
    assert "Lumen Lanterns" in body and "Glow Textures" not in body
    assert (await client.get("/", params={"type": "banana"})).status == 400


async def test_empty_search_says_so_with_200(client, seed):
    await _listed(seed)
    r = await client.get("/", params={"q": "zzzzqqqq"})
    assert r.status == 200
    assert "No mods found" in await r.text()


async def test_bad_filter_is_an_html_400(client):
    r = await client.get("/", params={"sort": "sideways"})
    assert r.status == 400 and r.content_type == "text/html"
    assert "sort" in await r.text()


async def test_mod_page(client, seed):
    mod = await _listed(seed, description="Long text\nsecond line")
    r = await client.get(f"/mods/{mod['slug']}")
    assert r.status == 200
    body = await r.text()
    assert body.count("<h1>") == 1 and "<h1>Lumen Lanterns</h1>" in body
    assert 'property="og:title" content="Lumen Lanterns · Indexium"' in body
    assert 'property="og:description" content="Colourful lanterns"' in body
    assert 'href="https://github.com/o/r/releases/download/1.0.0/f0.jar"' in body  # the asset itself
    assert f'data-copy="{1:040x}"' in body and f'data-copy="{1:0128x}"' in body
    assert f"/api/v1/badges/{mod['slug']}/servers.svg" in body
    # No server has reported it: one honest line, not an empty axis (test_mod_page_ux.py: the chart).
    assert "<svg class=\"chart\"" not in body and "No server has reported this mod yet" in body


async def test_unknown_and_hidden_mods_are_html_404(client, seed):
    r = await client.get("/mods/no-such-mod")
    assert r.status == 404 and r.content_type == "text/html"
    assert "Mod not found" in await r.text()
    r = await client.get("/mods/NOT_A_SLUG!")
    assert r.status == 404 and r.content_type == "text/html"
    mod = await seed.mod("hidden", name="Hidden Mod")
    vid = await seed.version(mod, "1.0.0", [(["fabric"], ["1.20.1"])])
    await seed.set_status(mod, vid, "quarantined")
    r = await client.get(f"/mods/{mod['slug']}")
    assert r.status == 404 and "Hidden Mod" not in await r.text()


async def test_unknown_path_html_for_browsers_json_for_others(client):
    r = await client.get("/nowhere", headers={"Accept": "text/html"})
    assert r.status == 404 and r.content_type == "text/html"
    r = await client.get("/api/v1/nowhere", headers={"Accept": "text/html"})
    assert r.status == 404 and r.content_type == "application/json"


async def test_mod_page_is_cached_and_invalidated_with_the_card(client, seed):
    mod = await _listed(seed)
    first = await client.get(f"/mods/{mod['slug']}")
    assert first.headers["X-Cache"] == "MISS"
    again = await client.get(f"/mods/{mod['slug']}")
    assert again.headers["X-Cache"] == "HIT" and "ETag" in again.headers
    r304 = await client.get(f"/mods/{mod['slug']}", headers={"If-None-Match": again.headers["ETag"]})
    assert r304.status == 304
    await seed.version(mod, "2.0.0", [(["fabric"], ["1.20.1"])], published=seed.T0 + seed.days(1))
    assert "2.0.0" not in await (await client.get(f"/mods/{mod['slug']}")).text()  # still cached
    client.app[API].cache.invalidate(mod_tag(mod["slug"]))  # what a VersionIndexed event does
    fresh = await client.get(f"/mods/{mod['slug']}")
    assert fresh.headers["X-Cache"] == "MISS" and "2.0.0" in await fresh.text()


async def test_static_assets(client):
    r = await client.get("/static/site/site.css")
    assert r.status == 200
    r = await client.get("/static/site/logo.png")
    assert r.status == 200 and (await r.read()).startswith(b"\x89PNG")


async def test_a_cached_results_page_carries_only_its_own_search_in_its_links(client, seed):
    for i in range(21):  # two pages
        await _listed(seed, f"lamp{i}", name=f"Lamp {i}", summary="a lantern for caves")
    first = await (await client.get("/", params={"q": "lantern", "utm_source": "evil"})).text()
    assert 'href="/?q=lantern&amp;page=2"' in first and "evil" not in first
    again = await client.get("/", params={"q": "lantern"})
    assert again.headers["X-Cache"] == "HIT"  # the stray parameter changed nothing
    other = await (await client.get("/", params={"q": "lantern", "sort": "downloads"})).text()
    assert 'href="/?q=lantern&amp;sort=downloads&amp;page=2"' in other


async def test_the_mod_page_chart_moves_on_at_midnight(client, seed, db, monkeypatch):
    from datetime import date, datetime, timezone

    from indexium_api.site import pages

    mod = await _listed(seed)
    await db.execute("INSERT INTO mod_daily_stats (mod_id, day, servers) VALUES ($1, $2, 2)", mod["id"], date(2026, 11, 29))
    monkeypatch.setattr(pages, "now", lambda: datetime(2026, 11, 30, 23, 59, tzinfo=timezone.utc))
    assert (await client.get(f"/mods/{mod['slug']}")).headers["X-Cache"] == "MISS"
    assert (await client.get(f"/mods/{mod['slug']}")).headers["X-Cache"] == "HIT"
    monkeypatch.setattr(pages, "now", lambda: datetime(2026, 12, 1, 0, 1, tzinfo=timezone.utc))
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    assert "2026-11-30" in body  # the last complete day is now the 30th, not the 29th


async def _owned(seed, mod, n):
    """Mod ``mod`` publishes the file of hashes ``n``: its owner (content_owners), as the indexer records it."""
    await seed.db.execute("INSERT INTO content_owners (sha256, mod_id) VALUES ($1, $2) ON CONFLICT (sha256) "
                          "DO UPDATE SET mod_id = EXCLUDED.mod_id", _hashes(n)["sha256"], mod["id"])


async def _pack(seed, slug, name, number, files, published):
    """A listed modpack whose version ``number`` holds ``files`` [(path, hashes n)] (pack_files)."""
    pack = await seed.mod(slug, name=name, summary="A pack")
    vid = await seed.version(pack, number, [(["fabric"], ["1.20.1"])], published=published)
    fid = await seed.db.fetchval("SELECT id FROM version_files WHERE version_id = $1", vid)
    for path, n in files:
        await seed.db.execute(
            "INSERT INTO pack_files (file_id, path, sha1, sha512, downloads) VALUES ($1, $2, $3, $4, $5)",
            fid, path, _hashes(n)["sha1"], _hashes(n)["sha512"], [f"https://cdn.example/{path}"])
    await mods_q.set_project_type(seed.db, pack["id"], formats.MODPACK)
    return pack


async def test_a_modpack_lists_its_mods_and_a_mod_the_modpacks_that_include_it(client, seed):
    lumen = await _listed(seed)  # its file is hashes 1
    await _owned(seed, lumen, 1)
    copycat = await _listed(seed, "copycat", name="Copy Cat", summary="Re-uploads")
    # The same bytes (sha512) uploaded by another owner: never what a pack's file resolves to.
    await seed.db.execute("UPDATE version_files SET sha512 = $1 WHERE filename LIKE 'copycat-%'", _hashes(1)["sha512"])
    await _owned(seed, lumen, 1)
    old = await _pack(seed, "oldpack", "Old Pack", "1.0", [("mods/lumen.jar", 1)], seed.T0)
    new = await _pack(seed, "newpack", "New Pack", "2.0", [("mods/lumen.jar", 1), ("mods/elsewhere.jar", 99)],
                      seed.T0 + seed.days(1))
    await _pack(seed, "otherpack", "Other Pack", "1.0", [("mods/elsewhere.jar", 99)], seed.T0)
    body = await (await client.get(f"/mods/{new['slug']}")).text()
    section = re.search(r'<ul class="pack-files">(.*?)</ul>', body, re.S).group(1)
    # Linked where indexed, to the project that owns those bytes (not a re-upload); the rest by path.
    assert re.findall(r'<li>(.*?)</li>', section, re.S) == [
        "mods/elsewhere.jar <span class=\"muted\">(not on Indexium)</span>",
        f'<a href="/mods/{lumen["slug"]}">Lumen Lanterns</a> <span class="muted">mods/lumen.jar</span>']
    assert copycat["slug"] not in section and 'class="in-packs"' not in body
    body = await (await client.get(f"/mods/{lumen['slug']}")).text()
    packs = re.search(r'<ul class="in-packs">(.*?)</ul>', body, re.S).group(1)
    assert re.findall(r'href="/mods/([\w-]+)"', packs) == [new["slug"], old["slug"]]  # newest first
    assert 'class="pack-files"' not in body
    assert 'class="in-packs"' not in await (await client.get(f"/mods/{copycat['slug']}")).text()


def _loader_select(body: str) -> str:
    return re.search(r'<select id="loader" name="loader">(.*?)</select>', body, re.S).group(1)


async def test_the_loader_filter_groups_loaders_by_project_type_and_narrows_to_the_chosen_type(client, seed):
    await _listed(seed)
    select = _loader_select(await (await client.get("/")).text())
    groups = re.findall(r'<optgroup label="([^"]+)">(.*?)</optgroup>', select, re.S)
    by_group = {label: re.findall(r'<option value="([\w-]+)"', opts) for label, opts in groups}
    # Every loader once, under the type it is for; the pack loaders in their own groups, not among mods.
    assert sorted(n for names in by_group.values() for n in names) == sorted(formats.LOADERS)
    assert {n for names in by_group.values() for n in names} == set(formats.LOADERS)
    assert by_group[formats.PROJECT_TYPE_TITLES[formats.MOD]][:4] == ["fabric", "quilt", "forge", "neoforge"]
    assert by_group[formats.PROJECT_TYPE_TITLES[formats.RESOURCEPACK]] == ["minecraft"]
    assert by_group[formats.PROJECT_TYPE_TITLES[formats.DATAPACK]] == ["datapack"]
    assert set(by_group[formats.PROJECT_TYPE_TITLES[formats.SHADER]]) == {"canvas", "iris", "optifine"}
    assert "minecraft" not in by_group[formats.PROJECT_TYPE_TITLES[formats.MOD]]
    assert '<option value="neoforge">NeoForge</option>' in select  # the loaders' display names
    # A type chosen: that type's loaders alone, no groups; a loader the query names stays shown.
    select = _loader_select(await (await client.get("/", params={"type": formats.SHADER})).text())
    assert "<optgroup" not in select
    assert re.findall(r'<option value="([\w-]+)"', select) == list(formats.loaders_of(formats.SHADER))
    select = _loader_select(await (await client.get("/", params={"type": formats.SHADER, "loader": "fabric"})).text())
    assert '<option value="fabric" selected>Fabric</option>' in select
    select = _loader_select(await (await client.get("/", params={"type": formats.MODPACK})).text())
    assert re.findall(r'<option value="([\w-]+)"', select) == ["fabric", "quilt", "forge", "neoforge"]


async def test_api_v1_loader_tags_name_their_project_types(client):
    tags = {t["name"]: t["project_types"] for t in await (await client.get("/api/v1/tags/loaders")).json()}
    assert list(tags) == list(formats.LOADERS)
    assert tags["fabric"] == [formats.MOD, formats.MODPACK]
    assert tags["paper"] == [formats.PLUGIN]
    assert tags["minecraft"] == [formats.RESOURCEPACK] and tags["datapack"] == [formats.DATAPACK]
    assert tags["iris"] == tags["canvas"] == [formats.SHADER]
