"""Telemetry integration fixtures: real NATS JetStream + PostgreSQL, seeded mods, helpers."""

from __future__ import annotations

import asyncpg
import msgspec
import pytest

from indexium_db.queries import samples as samples_q
from indexium_db.queries import telemetry as telemetry_q
from indexium_telemetry import writer
from indexium_contracts.telemetry import utc_day
from datetime import datetime

SLUGS = ["sodium", "lithium", "create", "jei", "iris"]


@pytest.fixture
async def mods(db) -> dict:
    return await samples_q.seed_mods(db, SLUGS)


async def insert_events(conn: asyncpg.Connection, events: list) -> int:
    """Write events as the writer does (partitions first, then one batch)."""
    days = sorted({utc_day(datetime.fromisoformat(e.received_at)) for e in events})
    await telemetry_q.ensure_partitions(conn, days)
    rows = [writer.to_row(e) for e in events]
    async with conn.transaction():
        n = await telemetry_q.insert_pings(conn, msgspec.json.encode(rows).decode())
        await telemetry_q.mark_days_written(conn, days)
    return n
