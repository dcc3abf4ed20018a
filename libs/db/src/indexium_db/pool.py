"""asyncpg pools with JSON codecs; one per service process (two for the API with a read replica)."""

from __future__ import annotations

import json

import asyncpg


async def _init_connection(conn: asyncpg.Connection) -> None:
    for typ in ("json", "jsonb"):
        await conn.set_type_codec(typ, encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def create_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, command_timeout: float = 30,
    connect_timeout: float = 60, server_settings: dict[str, str] | None = None,
) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
        timeout=connect_timeout,
        command_timeout=command_timeout,
        server_settings=server_settings,
        # Dead connections are dropped and replaced on next acquire, so the pool recovers
        # from a PostgreSQL restart without restarting the service.
        max_inactive_connection_lifetime=60,
    )


async def ping(pool: asyncpg.Pool) -> bool:
    async with pool.acquire(timeout=2) as conn:
        return await conn.fetchval("SELECT 1") == 1


async def connect(dsn: str) -> asyncpg.Connection:
    """A single connection with the same codecs as the pools (tools and tests)."""
    conn = await asyncpg.connect(dsn)
    await _init_connection(conn)
    return conn
