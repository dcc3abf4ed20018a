"""The GitHub role, ingest and the real release indexer in-process (aiohttp TestServer), on
real JetStream and PostgreSQL, against FakeGitHub. Webhooks go through ingest like GitHub's."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import nats
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from indexium_contracts import ingest as ingest_contract
from indexium_devstack.fakegithub import FakeGitHub, webhook_headers
from indexium_devstack.fakegithub.webhooks import encode_payload
from indexium_indexer.release.app import create_app as create_indexer
from indexium_indexer.github.app import BACKFILLER, create_app as create_role
from indexium_indexer.github.settings import Settings as RoleSettings
from indexium_indexer.release.settings import Settings as IndexerSettings
from indexium_ingest.app import create_app as create_ingest
from indexium_ingest.settings import Settings as IngestSettings
from indexium_platform.settings import load

SECRET = "gh-app-secret"


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        _, server.test_private_key = server.generate_app_key()
        yield server


def role_env(gh, nats_url, database_url, **extra) -> dict[str, str]:
    return {
        "NATS_URL": nats_url, "DATABASE_URL": database_url,
        "INDEXIUM_GITHUB_APP_ID": str(gh.app_id), "INDEXIUM_GITHUB_APP_PRIVATE_KEY": gh.test_private_key,
        "INDEXIUM_GITHUB_API_URL": gh.api_url,
        "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
        "INDEXIUM_GITHUB_RECONCILE_INTERVAL_SECONDS": "0",  # tests run passes themselves
        "INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND": "1000",
        "INDEXIUM_GITHUB_BACKFILL_POLL_SECONDS": "0.2",
        "INDEXIUM_GITHUB_MUTATION_INTERVAL_SECONDS": "0",
        "INDEXIUM_GITHUB_RETRY_BASE_SECONDS": "0.2",
        "INDEXIUM_SHUTDOWN_GRACE_SECONDS": "2",
        **extra,
    }


async def start(app: web.Application) -> TestServer:
    server = TestServer(app)
    await server.start_server()
    return server


@pytest.fixture
async def stack(gh, nats_url, database_url):
    """ingest + the GitHub role + the release indexer; ``stack.role`` is the role's app."""
    servers: list[TestServer] = []

    class Stack:
        nats_url = ""
        async def send(self, event: str, payload: dict, delivery_id: str | None = None) -> int:
            return await gh.send_webhook(self.webhook_url, event, payload, SECRET, delivery_id=delivery_id)

        async def post_unrecorded(self, event: str, payload: dict, delivery_id: str) -> int:
            """Deliver to ingest without the fake recording it (GitHub never saw the answer)."""
            body = encode_payload(payload)
            headers = webhook_headers(event, body, SECRET, delivery_id, gh.hook_id, gh.app_id)
            async with aiohttp.ClientSession() as http, http.post(self.webhook_url, data=body,
                                                                   headers=headers) as resp:
                return resp.status

        async def release_messages(self) -> list:
            return await release_messages(nats_url)

        async def start_role(self, **extra) -> web.Application:
            settings = load(RoleSettings, role_env(gh, nats_url, database_url, **extra))
            server = await start(create_role(settings))
            servers.append(server)
            self.role_server, self.role = server, server.app
            return server.app

        async def stop_role(self) -> None:
            await self.role_server.close()
            servers.remove(self.role_server)

        async def restart_role(self, **extra) -> web.Application:
            await self.stop_role()
            return await self.start_role(**extra)

        def role_wake(self) -> None:
            self.role[BACKFILLER]._wake.set()

    s = Stack()
    s.nats_url = nats_url
    ingest_settings = load(IngestSettings, {
        "NATS_URL": nats_url, "INDEXIUM_WEBHOOK_SECRET": SECRET,
        "INDEXIUM_GITHUB_APP_ID": str(gh.app_id), "INDEXIUM_GITHUB_APP_PRIVATE_KEY": gh.test_private_key,
        "INDEXIUM_GITHUB_API_URL": gh.api_url, "INDEXIUM_REDELIVER_INTERVAL_SECONDS": "0",
        "INDEXIUM_REDELIVER_SPACING_SECONDS": "0",
    })
    ingest_server = await start(create_ingest(ingest_settings))
    servers.append(ingest_server)
    s.ingest = ingest_server.app
    s.webhook_url = str(ingest_server.make_url("/webhooks/github"))
    gh.configure_webhook(s.webhook_url, SECRET)
    indexer_settings = load(IndexerSettings, {
        "NATS_URL": nats_url, "DATABASE_URL": database_url,
        "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}", "INDEXIUM_SHUTDOWN_GRACE_SECONDS": "2",
        "INDEXIUM_INDEXER_CONCURRENCY": "8",
        "INDEXIUM_PUBLISH_BEFORE_SCAN": "true",  # no scan stage in these tests
    })
    indexer_server = await start(create_indexer(indexer_settings))
    servers.append(indexer_server)
    s.indexer = indexer_server.app
    await s.start_role()
    try:
        yield s
    finally:  # all at once: each consumer takes about a second to stop fetching
        await asyncio.gather(*(server.close() for server in servers))


@pytest.fixture
def eventually():
    return _eventually


async def _eventually(check, timeout: float = 15.0, interval: float = 0.05):
    """Poll an async or plain callable until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(interval)


async def release_messages(nats_url: str) -> list:
    """Every message on indexium.ingest.release, read by sequence."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    info = await js.stream_info(ingest_contract.STREAM.name)
    out = []
    if info.state.messages:
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            msg = await js.get_msg(ingest_contract.STREAM.name, seq)
            if msg.subject == ingest_contract.RELEASE:
                out.append(msg)
    await nc.drain()
    return out
