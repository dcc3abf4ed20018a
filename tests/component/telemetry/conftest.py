"""Telemetry component fixtures: the app on a real JetStream and PostgreSQL, an injectable clock."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg
import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_platform.settings import load
from indexium_db.queries import samples as samples_q
from indexium_telemetry.app import create_app
from indexium_telemetry.settings import Settings

SLUGS = ["sodium", "lithium", "create", "jei"]


class FakeClock:
    """A settable clock: tests move it across midnight."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def make_settings(nats_url: str, database_url: str, **extra: str) -> Settings:
    env = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_TELEMETRY_ROLES": "http",
           "INDEXIUM_TELEMETRY_PUBLISH_TIMEOUT_SECONDS": "1", "INDEXIUM_LOG_FORMAT": "json"}
    return load(Settings, {**env, **extra})


@pytest.fixture
async def mods(database_url) -> dict:
    conn = await asyncpg.connect(database_url)
    try:
        return await samples_q.seed_mods(conn, SLUGS)
    finally:
        await conn.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2025, 3, 14, 12, 0, tzinfo=UTC))


@pytest.fixture
async def client(nats_url, database_url, mods, clock):
    app = create_app(make_settings(nats_url, database_url), clock=clock)
    async with TestClient(TestServer(app)) as c:
        yield c


async def stream_events(nats_url: str) -> list:
    """Every message stored in TELEMETRY, read by sequence (no consumer involved)."""
    from indexium_contracts import telemetry

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    info = await js.stream_info(telemetry.STREAM.name)
    out = []
    if info.state.messages:
        for seq in range(info.state.first_seq, info.state.last_seq + 1):
            out.append(await js.get_msg(telemetry.STREAM.name, seq))
    await nc.drain()
    return out
