"""Pack pages in a browser (issue 34): a resource pack released on FakeGitHub, indexed by the
indexer as its own process (Range reads of the real zip, its pack.png read within the budget),
shows its pack.png as the page's icon, served like a mod's icon, with its type and its game
versions as a compact range in the header."""

from __future__ import annotations

import asyncio
import time

import aiohttp

from indexium_devstack import jars, packs

from .conftest import WEBHOOK_SECRET


async def _release(world, pipeline, repo, tag: str, assets) -> None:
    gh = world.gh
    release = gh.add_release(repo, tag, assets)
    assert await gh.send_webhook(f"{pipeline['ingest'].url}/webhooks/github", "release", gh.release_payload(release),
                                 WEBHOOK_SECRET, delivery_id=f"packs-{repo.name}-{tag}") == 202


async def _until_page(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            async with http.get(url) as resp:
                if resp.status == 200:
                    return
            assert time.monotonic() < deadline, f"{url} never answered 200"
            await asyncio.sleep(0.3)


async def test_a_resource_pack_page_shows_its_icon_and_game_versions(world, pipeline, browse):
    icon = jars.png_icon(64, seed="crisp")
    zip_bytes = packs.zip_of({
        "pack.mcmeta": {"pack": {"pack_format": 15, "description": "Crisp and clean textures"}},
        "assets/minecraft/textures/item/apple.png": jars.png_icon(16, seed="apple"),
        "pack.png": icon,
    }, filler=200)
    repo = world.gh.add_repo("painter", "crisp-textures", description="Crisp textures")
    await _release(world, pipeline, repo, "v1.0", [("Crisp-1.0.zip", zip_bytes)])
    page_url = f"{world.base}/mods/crisp-textures"
    await _until_page(page_url)

    async with aiohttp.ClientSession() as http, http.get(f"{world.base}/api/v1/mods/crisp-textures/icon") as resp:
        assert resp.status == 200 and resp.content_type == "image/png" and await resp.read() == icon

    b = await browse("pack")
    await b.page.goto(page_url)
    img = b.page.locator("header.mod-head img.icon.big")
    assert await img.get_attribute("src") == "/api/v1/mods/crisp-textures/icon"
    assert await img.evaluate("i => i.complete && i.naturalWidth") == 64  # the pack.png itself, loaded
    assert (await b.page.locator(".mod-head .type").inner_text()).strip() == "Resource pack"
    # pack_format 15 is the resource format of 1.20 and 1.20.1: one compact range.
    assert (await b.page.locator(".mod-head .game-versions").inner_text()).strip() == "Minecraft 1.20–1.20.1"
    # The offer names no loader a resource pack implies ("for Minecraft, Minecraft ..." before).
    assert (await b.page.locator(".offer-what").inner_text()).split("\n")[-1].strip() == \
        "crisp-textures v1.0 for Minecraft 1.20–1.20.1"
    # Servers report the mods they load: a resource pack's page offers no server count or badge.
    assert await b.page.locator("#stats-h").count() == 0 and await b.page.locator("#badge-h").count() == 0
    assert "active server" not in await b.page.locator(".mod-head").inner_text()
    await b.shot("resource-pack")
    assert b.errors == []
