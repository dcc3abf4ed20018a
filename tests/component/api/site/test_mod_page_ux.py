"""What a first visitor reads on a mod page and a search card: the Download button for their
loader and game version, game versions as ranges, an honest empty chart, categories as links,
dependencies in words."""

from __future__ import annotations

import re
from datetime import timedelta

from indexium_api.core.respond import mod_tag
from indexium_api.core.state import API

GH = "https://github.com/o/r/releases/download"
LINE_1_20 = ["1.20.6", "1.20.5", "1.20.5-rc1", "1.20.5-pre1", "24w14a", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20"]


def _button(body: str) -> str | None:
    m = re.search(r'<a class="button primary" href="([^"]+)" id="download-button" aria-describedby="offer-what">'
                  r'Download</a>', body)
    return m.group(1) if m else None


def _offer(body: str) -> str:
    text = body.split('<span class="offer-what" id="offer-what">', 1)[1].split("</p>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", text).split())


async def _lanterns(seed):
    mod = await seed.mod("lumen", name="Lumen Lanterns", summary="Lanterns", categories=["decoration", "utility"])
    await seed.version(mod, "1.0.0", [(["fabric"], ["1.20.1"])], published=seed.T0)
    await seed.version(mod, "2.0.0", [(["fabric", "quilt"], LINE_1_20), (["neoforge"], ["1.21"])],
                       published=seed.T0 + timedelta(days=1))
    await seed.version(mod, "2.1.0-beta.1", [(["fabric"], ["1.21"])], version_type="beta",
                       published=seed.T0 + timedelta(days=2))
    return mod


async def test_the_download_button_offers_the_newest_release_file_and_says_what_it_is_for(client, seed):
    mod = await _lanterns(seed)
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    # The beta is newer, but with no choice the button offers the newest release's primary file.
    assert _button(body) == f"{GH}/2.0.0/f0.jar"
    assert _offer(body).endswith("Lumen Lanterns 2.0.0 for Fabric, Quilt, Minecraft 1.20–1.20.6")
    assert "The newest release." in body
    # The choice is a GET form (no script needed), its options what the mod's files support.
    form = body.split('<form class="download-choice" method="get"', 1)[1].split("</form>", 1)[0]
    assert re.findall(r'<option value="([^"]*)"', form) == [
        "", "fabric", "quilt", "neoforge", "", "1.21", "1.20.6", "1.20.5", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20"]
    # The per-file links stay, each straight to its GitHub asset.
    assert f'<a class="download" href="{GH}/2.0.0/f1.jar" download>' in body


async def test_a_chosen_loader_and_game_version_pick_the_newest_matching_file(client, seed):
    mod = await _lanterns(seed)
    page = f"/mods/{mod['slug']}"
    r = await client.get(page, params={"loader": "neoforge", "game_version": ""})  # the form's "any version"
    body = await r.text()
    assert r.status == 200 and _button(body) == f"{GH}/2.0.0/f1.jar"
    assert _offer(body).endswith("2.0.0 for NeoForge, Minecraft 1.21")
    assert '<option value="neoforge" selected>' in body
    body = await (await client.get(page, params={"loader": "fabric", "game_version": "1.20.1"})).text()
    assert _button(body) == f"{GH}/2.0.0/f0.jar"  # 1.0.0 fits too, but 2.0.0 is newer
    body = await (await client.get(page, params={"loader": "fabric", "game_version": "1.21"})).text()
    assert _button(body) == f"{GH}/2.1.0-beta.1/f0.jar"  # no release fits: the newest beta, said so
    assert "No release fits this choice; this is the newest beta that does." in body
    r = await client.get(page, params={"loader": "forge", "game_version": "1.20.1"})
    body = await r.text()
    assert r.status == 200 and _button(body) is None
    assert "No public file of Lumen Lanterns is for Forge on Minecraft 1.20.1." in body
    # The choice is kept by the page's other links.
    assert f'href="/mods/{mod["slug"]}?loader=forge&amp;game_version=1.20.1&amp;range=90d"' in body
    for bad in ({"loader": "spigot-ish"}, {"game_version": "<script>"}, {"game_version": "1.20.1x"},
                {"snapshots": "yes"}):
        r = await client.get(page, params=bad)
        assert r.status == 400 and r.content_type == "text/html", bad


async def test_game_versions_read_as_ranges_without_snapshots_unless_asked(client, seed):
    mod = await _lanterns(seed)
    only = await seed.mod("snappy", name="Snapshot Only", summary="Lanterns for tomorrow")
    await seed.version(only, "0.1.0", [(["fabric"], ["24w14a", "24w13a"])])
    client.app[API].cache.invalidate("global")
    await client.app[API].search_index.catch_up()
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    row = body.split(f"{GH}/2.0.0/f0.jar", 1)[1].split("</tr>", 1)[0]
    assert "1.20–1.20.6" in row and "24w14a" not in row and "pre1" not in row and "more" not in row
    body = await (await client.get(f"/mods/{mod['slug']}", params={"snapshots": "1"})).text()
    row = body.split(f"{GH}/2.0.0/f0.jar", 1)[1].split("</tr>", 1)[0]
    assert "1.20–1.20.6" in row and "24w14a" in row and "1.20.5-pre1" in row
    assert '<option value="24w14a">' in body  # and the choice offers them
    # A snapshot-only mod shows its snapshots; the search cards follow the same rule.
    assert "24w14a, 24w13a" in await (await client.get(f"/mods/{only['slug']}")).text()
    cards = await (await client.get("/", params={"q": "lanterns"})).text()
    lumen = cards.split(">Lumen Lanterns</a>", 1)[1].split('<li class="hit">', 1)[0]
    assert "<li>1.20–1.21</li>" in lumen and "24w14a" not in lumen, lumen  # 1.21 follows 1.20.6
    assert "24w14a, 24w13a" in cards.split(">Snapshot Only</a>", 1)[1]
    cards = await (await client.get("/", params={"q": "lanterns", "snapshots": "1"})).text()
    assert "24w14a" in cards.split(">Lumen Lanterns</a>", 1)[1].split("</ul>", 1)[0]


async def test_no_servers_is_one_honest_line_and_the_chart_comes_with_data(client, seed, db):
    mod = await _lanterns(seed)
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    assert "No server has reported this mod yet — add the telemetry mod to count yours." in body
    assert '<svg class="chart"' not in body and "By game version" not in body
    await db.execute("INSERT INTO mod_daily_stats (mod_id, day, servers, breakdown) "
                     "VALUES ($1, current_date - 1, 3, '{\"loader\": {\"fabric\": 3}}'::jsonb)", mod["id"])
    client.app[API].cache.invalidate(mod_tag(mod["slug"]))
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    assert '<svg class="chart"' in body and "No server has reported" not in body and "By loader" in body


async def test_categories_are_links_to_a_filtered_search_and_the_filter_is_a_select(client, seed):
    mod = await _lanterns(seed)
    await client.app[API].search_index.catch_up()
    home = await (await client.get("/")).text()
    select = home.split('<select id="category" name="category">', 1)[1].split("</select>", 1)[0]
    assert '<option value="">Any category</option>' in select and '<option value="storage">Storage</option>' in select
    assert '<option value="game-mechanics">Game mechanics</option>' in select
    assert '<a class="tag" href="/?category=decoration">decoration</a>' in home  # on the card
    page = await (await client.get(f"/mods/{mod['slug']}")).text()
    assert '<a class="tag" href="/?category=utility">utility</a>' in page
    filtered = await (await client.get("/", params={"category": "utility"})).text()
    assert '<option value="utility" selected>' in filtered and "Lumen Lanterns" in filtered


async def test_dependencies_read_as_words(client, seed):
    api_mod = await seed.mod("fabric-api", name="Fabric API", summary="Hooks")
    await seed.version(api_mod, "0.92.0", [(["fabric"], ["1.20.1"])],
                       manifests=[[{"loader": "fabric", "mod_id": "fabric-api", "dependencies": []}]])
    mod = await seed.mod("lumen", name="Lumen Lanterns", summary="Lanterns")
    deps = [{"mod_id": "fabric-api", "kind": "required", "version_range": ">=0.92"},
            {"mod_id": "optifabric", "kind": "incompatible"},
            {"mod_id": "modmenu", "kind": "optional", "version_range": ">=7.0 <9", "warn_only": True},
            {"mod_id": "minecraft", "kind": "required", "version_range": "~1.20.1"}]
    await seed.version(mod, "1.0.0", [(["fabric"], ["1.20.1"])],
                       manifests=[[{"loader": "fabric", "mod_id": "lumen", "dependencies": deps}]])
    body = await (await client.get(f"/mods/{mod['slug']}")).text()
    section = body.split('<ul class="deps">', 1)[1].split("</ul>", 1)[0]
    items = [" ".join(re.sub(r"<(?!a )[^>]+>", " ", li).split()) for li in re.findall(r"<li[^>]*>(.*?)</li>", section, re.S)]
    assert items == [
        f'Needs <a href="/mods/{api_mod["slug"]}">Fabric API 0.92 or newer',
        "Works with modmenu 7.0 up to but not including 9 (optional) (not on Indexium)",
        "Breaks optifabric (not on Indexium)",
    ], items
    assert "&gt;=0.92" not in body and "*" not in section  # no raw range, no footnote star
