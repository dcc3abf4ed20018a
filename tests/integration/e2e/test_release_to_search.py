"""End to end: a signed release webhook travels through every service as a real process
and comes out of the public API — real JetStream, real PostgreSQL, real Range reads."""

import asyncio
import hashlib

import aiohttp
import pytest

from indexium_db.pool import connect
from indexium_devstack import jars
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import SERVICES, ServiceProcess

SECRET = "e2e-secret"


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


@pytest.fixture
async def services(nats_url, database_url, gh, tmp_path):
    env = {
        "NATS_URL": nats_url,
        "DATABASE_URL": database_url,
        "INDEXIUM_WEBHOOK_SECRET": SECRET,
        "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
        "INDEXIUM_LOG_FORMAT": "json",
        "INDEXIUM_NOTIFY_SECRET_KEY": "e2e-notify-key-of-at-least-32-bytes!",  # the notify role needs one
    }
    procs = {s.name: ServiceProcess(s, port=free_port(), env=env, log_path=tmp_path / f"{s.name}.log")
             for s in SERVICES}
    for p in procs.values():
        p.start()
    try:
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in procs.values()))
        yield procs
    finally:
        codes = {name: await asyncio.to_thread(p.stop, 30) for name, p in procs.items()}
        for name, p in procs.items():
            if codes[name] != 0:
                print(f"--- {name} log ---\n{p.log_path.read_text()[-4000:]}")
    assert codes == {name: 0 for name in procs}, codes  # graceful SIGTERM exits 0


async def wait_for_hit(http, api_url, query, timeout=20.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        async with http.get(f"{api_url}/api/v1/mods", params=query) as resp:
            assert resp.status == 200
            body = await resp.json()
        if body["hits"] or asyncio.get_running_loop().time() > deadline:
            return body
        await asyncio.sleep(0.1)


async def test_release_webhook_becomes_searchable_once(gh, services, database_url):
    jar = jars.fabric_jar("sodium", "0.5.3+mc1.20.1", "Sodium", "A modern rendering engine.\n\nFast.",
                          minecraft="~1.20.1", authors=["JellySquid"])
    repo = gh.add_repo("CaffeineMC", "sodium-fabric", description="Rendering optimisation", topics=["optimization"])
    release = gh.add_release(repo, "mc1.20.1-0.5.3", [("sodium-fabric-0.5.3.jar", jar)])
    payload = gh.release_payload(release, action="published")
    ingest_url = f"{services['ingest'].url}/webhooks/github"
    statuses = [await gh.send_webhook(ingest_url, "release", payload, SECRET, delivery_id="delivery-1")
                for _ in range(5)]
    assert statuses == [202] * 5

    api = services["api"].url
    async with aiohttp.ClientSession() as http:
        body = await wait_for_hit(http, api, {"q": "rendering", "loader": "fabric", "game_version": "1.20.1"})
        assert body["total"] == 1, body
        hit = body["hits"][0]
        assert hit["slug"] == "sodium"
        assert hit["name"] == "Sodium"
        assert hit["summary"] == "A modern rendering engine."
        assert hit["loaders"] == ["fabric"]
        assert "1.20.1" in hit["game_versions"]
        assert hit["latest_version"] == "mc1.20.1-0.5.3"
        assert hit["updated_at"]

        async with http.get(f"{api}/api/v1/mods/sodium") as resp:
            card = await resp.json()
        assert card["description"] == "A modern rendering engine.\n\nFast."
        assert card["repository"] == "CaffeineMC/sodium-fabric"
        # The release tag stays the version number; the jar's own version is shown beside it.
        assert card["latest_version"] == "mc1.20.1-0.5.3" and card["latest_mod_version"] == "0.5.3+mc1.20.1"

        async with http.get(f"{api}/api/v1/mods/sodium/versions") as resp:
            versions = await resp.json()
        assert [v["version_number"] for v in versions] == ["mc1.20.1-0.5.3"]
        (file,) = versions[0]["files"]
        asset = release.assets[0]
        assert file["url"] == payload["release"]["assets"][0]["browser_download_url"]
        assert file["filename"] == asset.name and file["size"] == len(jar)
        assert (file["mod_id"], file["mod_version"]) == ("sodium", "0.5.3+mc1.20.1")
        # Public only after the scan stage streamed the whole file once and found it clean.
        assert file["hashes"]["sha256"] == hashlib.sha256(jar).hexdigest()
        assert file["hashes"]["sha1"] == hashlib.sha1(jar).hexdigest()

        async with http.get(f"{api}/api/v1/mods/nope") as resp:
            assert resp.status == 404
            assert (await resp.json())["error"] == "not_found"

    # Read with Range requests, never the whole file.
    stats = gh.stats(asset)
    assert stats.ranges and all(r.startswith("bytes=") for r in stats.ranges)

    conn = await connect(database_url)
    try:
        assert await conn.fetchval("SELECT count(*) FROM mod_versions") == 1
        assert await conn.fetchval("SELECT count(*) FROM version_files") == 1
        assert await conn.fetchval(
            "SELECT outcome FROM webhook_deliveries WHERE delivery_id = 'delivery-1'") == "indexed"
    finally:
        await conn.close()
