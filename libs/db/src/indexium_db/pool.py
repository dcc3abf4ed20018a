"""asyncpg pools with JSON codecs; one per service process (two for the API with a read replica)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import asyncpg


async def _init_connection(conn: asyncpg.Connection) -> None:
    for typ in ("json", "jsonb"):
        await conn.set_type_codec(typ, encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def _keep_session(conn: asyncpg.Connection) -> None:
    """A pool's ``reset`` that sends nothing: asyncpg still rolls back a transaction left
    open and drops listeners before calling it (``Connection._reset``)."""


def _wants_read_write(dsn: str) -> bool:
    query = parse_qs(urlsplit(dsn).query)
    return query.get("target_session_attrs", [""])[-1] == "read-write"


async def create_pool(
    dsn: str, *, min_size: int = 1, max_size: int = 10, command_timeout: float = 30,
    connect_timeout: float = 60, server_settings: dict[str, str] | None = None,
    read_only: bool = False, reset_session: bool = True,
) -> asyncpg.Pool:
    """``read_only``: every transaction read-only (default_transaction_read_only). With a
    multi-host DSN asking ``target_session_attrs=read-write`` (a failover pair, the primary
    wanted) the host check becomes ``primary``: a session that is read-only by our own choice
    never passes the read-write check, so no host would ever be accepted.

    ``reset_session=False``: a connection going back to the pool is not sent asyncpg's reset
    query (``SELECT pg_advisory_unlock_all(); CLOSE ALL; UNLISTEN *; RESET ALL``), one round
    trip per acquire; an open transaction is still rolled back. Only for a pool whose users
    keep no session state (no session-level SET, advisory lock, LISTEN or cursor outside a
    transaction): the release role's, where it was one of 14 round trips per job."""
    server_settings = dict(server_settings or {})
    extra: dict = {}
    if not reset_session:
        extra["reset"] = _keep_session
    if read_only:
        server_settings["default_transaction_read_only"] = "on"
        if _wants_read_write(dsn):
            extra["target_session_attrs"] = "primary"
    return await asyncpg.create_pool(
        dsn,
        **extra,
        min_size=min_size,
        max_size=max_size,
        init=_init_connection,
        timeout=connect_timeout,
        command_timeout=command_timeout,
        server_settings=server_settings or None,
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
