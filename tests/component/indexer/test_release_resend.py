"""A release sent again (GitHub redelivers; `edited` repeats a release) under scan-before-publish:
what is served never passes through "absent", an unchanged release announces nothing, and new
bytes still wait for the scan. The real release job and the real scan stage, called in turn."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import aiohttp
import pytest

from indexium_devstack import jars
from indexium_indexer.release.job import ReleaseIndexer
from indexium_indexer.scan.archive import ScanLimits
from indexium_indexer.scan.job import VersionScanner
from indexium_indexer.scan.metrics import ScanMetrics
from indexium_indexer.scan.pipeline import ScanContext
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app as create_api
from indexium_api.settings import Settings as ApiSettings
from indexium_devstack.embedded import free_port
from indexium_jar.http.remote import DownloadPolicy
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.settings import load

from .conftest import Releases


@pytest.fixture
async def api(database_url):
    """The public API on the same database, every answer read afresh (no TTL, no stale window)."""
    settings = load(ApiSettings, {"DATABASE_URL": database_url, "NATS_URL": f"nats://127.0.0.1:{free_port()}",
                                  "INDEXIUM_API_CACHE_TTL_SECONDS": "0", "INDEXIUM_API_CACHE_STALE_SECONDS": "0",
                                  "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0"})
    async with TestClient(TestServer(create_api(settings))) as client:
        yield client


@pytest.fixture
async def stages(gh, pool):
    """(releases, scan): the release job as deployed (INDEXIUM_PUBLISH_BEFORE_SCAN=false) and
    ``scan(event)``, the scan stage's job on the version an event names."""
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    async with aiohttp.ClientSession() as session:
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        scanner = VersionScanner(pool, ScanContext(session=session, policy=policy, parse_executor=parse,
                                                   hash_executor=hashing, limits=ScanLimits(), max_bytes=64 << 20),
                                 ScanMetrics(ServiceMetrics("scan")))
        yield Releases(gh, ReleaseIndexer(pool, session, policy, publish_before_scan=False)), scanner.handle
    parse.shutdown()
    hashing.shutdown()


async def served(api, slug: str) -> tuple[int, int]:
    """(the mod's card, its version list): the statuses a launcher and the site get."""
    async with api.get(f"/api/v1/mods/{slug}") as card, api.get(f"/api/v1/mods/{slug}/versions") as versions:
        return card.status, versions.status


async def test_a_release_sent_again_unchanged_stays_served_and_announces_nothing(gh, stages, api, db):
    releases, scan = stages
    repo = gh.add_repo("alice", "lumen")
    rel = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))], body="Notes")
    (indexed,) = (await releases.handle(rel, "published", "d-first")).events
    assert indexed.changed and await served(api, "lumen") == (404, 404)  # not before its scan
    # Sent again before its scan (or the first run died between its commit and its publish):
    # announced for the scan stage alone.
    (again,) = (await releases.handle(rel, "published", "d-first")).events
    assert not again.changed and not again.visible
    assert (await scan(again)).event.visible
    assert await served(api, "lumen") == (200, 200)

    for action, delivery in (("published", "d-redelivered"), ("edited", "d-edited-same")):
        result = await releases.handle(rel, action, delivery)
        # Before the fix: the version went back to pending_scan (404 until the scan ran again,
        # the 404 window) and a VersionIndexed made every API replica drop the mod.
        assert await served(api, "lumen") == (200, 200), action
        assert result.outcome == "indexed" and result.events == [], action
    assert await db.fetchval("SELECT status FROM mod_versions") == "public"

    rel.body = "Better notes"  # an edit that changes what is served, not the bytes
    (edited,) = (await releases.handle(rel, "edited", "d-edited-notes")).events
    assert edited.changed and edited.visible and await served(api, "lumen") == (200, 200)
    async with api.get("/api/v1/mods/lumen/versions") as resp:
        assert (await resp.json())[0]["changelog"] == "Better notes"


async def test_new_bytes_in_a_release_sent_again_wait_for_the_scan(gh, stages, api, db):
    releases, scan = stages
    repo = gh.add_repo("alice", "lumen")
    rel = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))])
    await scan((await releases.handle(rel)).events[0])
    gh.replace_asset_content(rel.assets[0], jars.fabric_jar("lumen", "1.0.0", minecraft="1.21.1"))
    (event,) = (await releases.handle(rel, "edited")).events
    assert not event.visible and await db.fetchval("SELECT status FROM mod_versions") == "pending_scan"
    assert (await scan(event)).event.visible
    assert await served(api, "lumen") == (200, 200)
