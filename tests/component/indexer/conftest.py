"""Indexer component fixtures: the release job (``ReleaseIndexer``) on a fresh migrated
PostgreSQL, reading jars from a FakeGitHub over real HTTP; the public API in-process to
see what the job wrote the way clients do. No NATS: the job is called directly."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app as create_api
from indexium_api.settings import Settings as ApiSettings
from indexium_contracts import github
from indexium_contracts.ingest import ReleaseReceived
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_indexer.release.job import ReleaseIndexer
from indexium_jar.http.remote import DownloadPolicy
from indexium_platform.settings import load

_deliveries = itertools.count(1)


class Releases:
    """Turns FakeGitHub releases into the event ingest would queue, and runs the job on it."""

    def __init__(self, gh: FakeGitHub, indexer: ReleaseIndexer):
        self.gh, self.indexer = gh, indexer

    def event(self, release, action: str = "published", delivery_id: str | None = None) -> ReleaseReceived:
        return self.event_from(self.gh.release_payload(release, action=action), delivery_id)

    def event_from(self, payload: dict, delivery_id: str | None = None) -> ReleaseReceived:
        """The event of a payload as the test shaped it (the fake's, with a field changed)."""
        body = json.dumps(payload).encode()
        return ReleaseReceived(
            delivery_id=delivery_id or f"d-{next(_deliveries)}",
            received_at=datetime.now(UTC).isoformat(),
            webhook=github.decode_webhook("release", body),
        )

    async def handle(self, release, action: str = "published", delivery_id: str | None = None):
        return await self.indexer.handle(self.event(release, action, delivery_id))


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


@pytest.fixture
async def releases(gh, pool):
    async with aiohttp.ClientSession() as session:
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        yield Releases(gh, ReleaseIndexer(pool, session, policy, publish_before_scan=True))


@pytest.fixture
async def api(database_url):
    """The public API on the same database (its NATS is unreachable: no cache invalidation
    needed, every test reads once)."""
    settings = load(ApiSettings, {"DATABASE_URL": database_url, "NATS_URL": f"nats://127.0.0.1:{free_port()}",
                                  "INDEXIUM_API_CACHE_TTL_SECONDS": "0", "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0"})
    client = TestClient(TestServer(create_api(settings)))
    await client.start_server()
    yield client
    await client.close()
