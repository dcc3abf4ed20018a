"""The catalogue follows the VERSIONS stream: a mod indexed a moment ago is counted by the next
ping (not after the 60 s re-read), a hidden one is no longer counted, and a mod nobody knows
is answered as before (200, ignored, unknown)."""

from __future__ import annotations

import asyncio
import time
import uuid

import asyncpg
import nats
from aiohttp.test_utils import TestClient, TestServer

from indexium_contracts import versions
from indexium_devstack import telemetry_samples as samples
from indexium_db.queries import samples as samples_q
from indexium_telemetry.app import create_app

from .conftest import make_settings

URL = "/api/v1/analytics/submit"
HEADERS = {"Content-Type": "application/json"}


async def _publish(nats_url: str, subject: str, event) -> None:
    """As the indexer and the GitHub role do: on JetStream, after their commit."""
    nc = await nats.connect(nats_url)
    try:
        await nc.jetstream().publish(subject, versions.encoder.encode(event))
    finally:
        await nc.drain()


async def _ping(client, mods: list[dict]) -> dict:
    resp = await client.post(URL, data=samples.encode(samples.ping(uuid.uuid4(), mods=mods)), headers=HEADERS)
    assert resp.status in (200, 202), await resp.text()
    return await resp.json()


async def _within(check, seconds: float):
    deadline = time.monotonic() + seconds
    while True:
        value = await check()
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.02)


async def test_a_mod_indexed_a_moment_ago_is_counted_and_a_hidden_one_is_not(nats_url, database_url, mods, clock):
    # The periodic re-read is an hour away: only the events can tell the service.
    app = create_app(make_settings(nats_url, database_url, INDEXIUM_TELEMETRY_CATALOGUE_REFRESH_SECONDS="3600"),
                     clock=clock)
    async with TestClient(TestServer(app)) as client:
        assert await _ping(client, [{"slug": "lumen"}]) == {"status": "ignored", "counted": 0, "unknown": 1}

        conn = await asyncpg.connect(database_url)
        try:
            lumen = await samples_q.seed_mod(conn, "lumen", "lumen", n=11)
            await samples_q.seed_file(conn, lumen, [{"loader": "forge", "manifest_path": "META-INF/mods.toml",
                                                     "mod_id": "lumen_forge", "version": "1.0"}])
        finally:
            await conn.close()
        indexed = versions.VersionIndexed(mod_id=str(lumen), slug="lumen", version_id=str(uuid.uuid4()),
                                          version_number="1.0.0", visible=True)
        await _publish(nats_url, versions.INDEXED, indexed)
        sent = time.monotonic()

        async def counted():
            body = await _ping(client, [{"slug": "lumen"}, {"manifest_id": "lumen_forge"}, {"mod_id": str(lumen)}])
            return body if body["status"] == "accepted" else None

        body = await _within(counted, 2.0)
        took = time.monotonic() - sent
        assert body and (body["counted"], body["unknown"]) == (1, 0), body
        print(f"known {took * 1000:.0f} ms after the event")

        # Hidden (the GitHub role's ModChanged after its commit): no longer counted.
        conn = await asyncpg.connect(database_url)
        try:
            await conn.execute("UPDATE mods SET hidden = true, hidden_reason = 'github: repository is private' "
                               "WHERE id = $1", lumen)
        finally:
            await conn.close()
        await _publish(nats_url, versions.MOD_CHANGED, versions.ModChanged(
            mod_id=str(lumen), slug="lumen", visible=False, hidden_reason="github: repository is private",
            cause="repository.privatized"))

        async def ignored():
            body = await _ping(client, [{"manifest_id": "lumen_forge"}, {"mod_id": str(lumen)}, {"slug": "lumen"}])
            return body if body["status"] == "ignored" else None

        body = await _within(ignored, 2.0)
        assert body == {"status": "ignored", "counted": 0, "unknown": 3}
        # Mods known from the start are untouched by either event.
        assert (await _ping(client, [{"slug": "sodium"}, {"slug": "nobody-knows"}]))["unknown"] == 1
