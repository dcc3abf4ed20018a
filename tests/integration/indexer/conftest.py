"""The indexer app in-process (``create_app`` under an aiohttp TestServer: its real consumer,
NATS JetStream, PostgreSQL pool and HTTP client), fed release events on the INGEST stream,
reading jars from a FakeGitHub. Retry delays are shortened so a test sees every attempt."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from datetime import UTC, datetime

import asyncpg
import nats
import pytest
from aiohttp.test_utils import TestServer

from indexium_contracts import deadletter, github, ingest
from indexium_contracts.ingest import ReleaseReceived
from indexium_devstack.fakegithub import FakeGitHub
from indexium_indexer.release.app import create_app
from indexium_indexer.release.settings import Settings
from indexium_platform.settings import load

RETRY_BASE_S = 0.2  # delays 0.2 s, then 0.8 s
OUTAGE_RETRY_S = 0.3
_ids = itertools.count(1)


class Hits:
    """When each request reached the CDN or the download redirector (FakeGitHub's fault hook
    is consulted once per request, before anything is answered)."""

    def __init__(self, gh: FakeGitHub):
        self.log: list[tuple[str, int | None, float]] = []
        take = gh.faults.take

        def recording_take(where, asset_id):
            self.log.append((where, asset_id, time.monotonic()))
            return take(where, asset_id)

        gh.faults.take = recording_take

    def times(self, where: str, asset) -> list[float]:
        return [t for w, a, t in self.log if w == where and a == asset.id]


class Indexer:
    def __init__(self, gh: FakeGitHub, js, database_url: str, server: TestServer):
        self.gh, self.js, self.database_url, self.server = gh, js, database_url, server

    def event(self, release, action: str = "published") -> tuple[str, bytes]:
        delivery_id = f"delivery-{next(_ids)}"
        body = json.dumps(self.gh.release_payload(release, action=action)).encode()
        event = ReleaseReceived(delivery_id=delivery_id, received_at=datetime.now(UTC).isoformat(),
                                webhook=github.decode_webhook("release", body))
        return delivery_id, ingest.encoder.encode(event)

    async def publish(self, release, action: str = "published") -> str:
        """Queue the event as ingest does; returns its delivery id."""
        delivery_id, body = self.event(release, action)
        await self.js.publish(ingest.RELEASE, body, headers={"Nats-Msg-Id": delivery_id})
        return delivery_id

    async def fetchval(self, sql: str, *args):
        return await self._once("fetchval", sql, *args)

    async def fetch(self, sql: str, *args):
        return await self._once("fetch", sql, *args)

    async def _once(self, method: str, sql: str, *args):
        conn = await asyncpg.connect(self.database_url)
        try:
            return await getattr(conn, method)(sql, *args)
        finally:
            await conn.close()

    async def outcome(self, delivery_id: str, timeout: float = 15.0) -> str:
        """Wait for the job's recorded outcome (indexed, hidden, ignored, dead_lettered)."""
        deadline = time.monotonic() + timeout
        while True:
            found = await self.fetchval("SELECT outcome FROM webhook_deliveries WHERE delivery_id = $1", delivery_id)
            if found is not None or time.monotonic() > deadline:
                return found
            await asyncio.sleep(0.05)

    async def dead_letters(self):
        return await self.fetch("SELECT id, category, attempts, error, msg_id, replayed_at FROM dead_letters ORDER BY id")

    async def last_dead_letter_on_stream(self) -> deadletter.DeadLetter:
        msg = await self.js.get_last_msg(deadletter.STREAM.name, deadletter.subject_for("indexer"))
        return deadletter.decoder.decode(msg.data)

    async def metric(self, name: str, **labels) -> float:
        async with self.server_client().get("/metrics") as resp:
            text = await resp.text()
        want = ",".join(f'{k}="{v}"' for k, v in labels.items())
        for line in text.splitlines():
            if line.startswith(f"{name}{{{want}}}" if want else f"{name} "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def server_client(self):
        import aiohttp

        return _OneShot(aiohttp.ClientSession(), str(self.server.make_url("")))


class _OneShot:
    """``async with client.get(path)`` on a throwaway session."""

    def __init__(self, session, base):
        self.session, self.base = session, base.rstrip("/")

    def get(self, path):
        outer = self

        class _Ctx:
            async def __aenter__(self):
                self.resp = await outer.session.get(outer.base + path)
                return self.resp

            async def __aexit__(self, *exc):
                self.resp.release()
                await outer.session.close()

        return _Ctx()


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


@pytest.fixture
def hits(gh) -> Hits:
    return Hits(gh)


def indexer_env(gh: FakeGitHub, nats_url: str, database_url: str, **extra: str) -> dict[str, str]:
    return {
        "NATS_URL": nats_url,
        "DATABASE_URL": database_url,
        "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
        "INDEXIUM_INDEXER_RETRY_BASE_SECONDS": str(RETRY_BASE_S),
        "INDEXIUM_INDEXER_OUTAGE_RETRY_SECONDS": str(OUTAGE_RETRY_S),
        "INDEXIUM_PUBLISH_BEFORE_SCAN": "true",
        "INDEXIUM_SHUTDOWN_GRACE_SECONDS": "2",
        "INDEXIUM_HTTP_TIMEOUT_SECONDS": "5",
        "INDEXIUM_LOG_FORMAT": "json",
        **extra,
    }


@pytest.fixture
async def make_indexer(gh, nats_url, database_url):  # database_url: stop the app before it is dropped
    servers: list[TestServer] = []
    connections = []

    async def make(database_url: str, **extra: str) -> Indexer:
        settings = load(Settings, indexer_env(gh, nats_url, database_url, **extra))
        server = TestServer(create_app(settings))
        await server.start_server()
        servers.append(server)
        nc = await nats.connect(nats_url)
        connections.append(nc)
        return Indexer(gh, nc.jetstream(), database_url, server)

    yield make
    for server in servers:
        await server.close()
    for nc in connections:
        await nc.drain()


@pytest.fixture
async def indexer(make_indexer, database_url) -> Indexer:
    return await make_indexer(database_url)
