"""The read database: a pool that starts without PostgreSQL, fails fast, and says "unavailable".

The API must keep serving cached answers while PostgreSQL is away, so the pool opens no
connection at start-up (``min_size=0``: the process starts and is ready without it),
connecting, acquiring and every statement are bounded by short timeouts, and a
connection failure opens a short circuit breaker during which uncached requests get 503
at once instead of each waiting for its own timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

from indexium_db.pool import create_pool as open_pool
from indexium_platform import logs

from .cache import Unavailable
from ..settings import Settings

log = logs.get(__name__)
T = TypeVar("T")

# The server is unreachable or refused us: open the breaker.
_CONNECTION_ERRORS = (
    OSError,
    asyncio.TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,  # admin shutdown, crash shutdown
)


async def create_pool(settings: Settings) -> asyncpg.Pool:
    # min_size 0: the API starts (and serves cached answers) without PostgreSQL.
    return await open_pool(
        settings.read_url,
        min_size=0,
        max_size=settings.db_pool_size,
        connect_timeout=settings.db_connect_timeout_s,
        command_timeout=settings.db_statement_timeout_s + 1,
        server_settings={
            "application_name": "indexium-api",
            "statement_timeout": str(int(settings.db_statement_timeout_s * 1000)),
        },
        read_only=True,
    )


class ReadDatabase:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, on_state: Callable[[bool], None] = lambda up: None):
        self.pool = pool
        self._acquire_timeout = settings.db_connect_timeout_s
        self._breaker_s = settings.db_breaker_s
        self._open_until = 0.0
        self._on_state = on_state

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._open_until

    async def run(self, query: Callable[..., Awaitable[T]], *args, **kwargs) -> T:
        """Run one query function on a pooled connection; Unavailable when PostgreSQL is not there."""
        if not self.available:
            raise Unavailable("database circuit open")
        try:
            conn = await self.pool.acquire(timeout=self._acquire_timeout)
        except Exception as exc:  # refused, timed out, or the server would not let us in
            raise self._down(exc) from exc
        try:
            result = await query(conn, *args, **kwargs)
        except asyncpg.QueryCanceledError as exc:  # statement_timeout: overloaded, not gone
            log.warning("db_statement_timeout", query=getattr(query, "__name__", "?"))
            raise Unavailable("statement timeout") from exc
        except _CONNECTION_ERRORS as exc:
            raise self._down(exc) from exc
        finally:
            with contextlib.suppress(Exception):  # a dead connection is dropped by the pool
                await self.pool.release(conn)
        self._on_state(True)
        return result

    def _down(self, exc: BaseException) -> Unavailable:
        log.warning("db_unavailable", error=type(exc).__name__)
        self._open_until = time.monotonic() + self._breaker_s
        self._on_state(False)
        return Unavailable(type(exc).__name__)
