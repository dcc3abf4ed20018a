"""The read database: a pool that starts without PostgreSQL, fails fast, and says "unavailable".

The API must keep serving cached answers while PostgreSQL is away, so the pool opens no
connection at start-up (``min_size=0``: the process starts and is ready without it),
connecting, acquiring and every statement are bounded by short timeouts, and a
connection failure opens a short circuit breaker during which uncached requests get 503
at once instead of each waiting for its own timeout. A wait for a connection that timed out
while every pooled connection was in use is overload, not an outage: that request gets its
503, the breaker stays shut (``db_pool_busy``).
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


# The search index's own connections (INDEX_POOL_SIZE: a whole load from PostgreSQL may hold one
# for a minute while the re-reads take the other), apart from the requests' pool: docs/api.md,
# "The index's own connections".
INDEX_POOL_SIZE = 2


async def create_pool(settings: Settings, size: int | None = None,
                      application_name: str = "indexium-api") -> asyncpg.Pool:
    # min_size 0: the API starts (and serves cached answers) without PostgreSQL.
    return await open_pool(
        settings.read_url,
        min_size=0,
        max_size=settings.db_pool_size if size is None else size,
        connect_timeout=settings.db_connect_timeout_s,
        command_timeout=settings.db_statement_timeout_s + 1,
        server_settings={
            "application_name": application_name,
            "statement_timeout": str(int(settings.db_statement_timeout_s * 1000)),
        },
        read_only=True,
    )


# A saturated pool's timed-out waits are said at most once this often (with how many since).
BUSY_LOG_EVERY_S = 10.0


class ReadDatabase:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, on_state: Callable[[bool], None] = lambda up: None,
                 on_busy: Callable[[], None] = lambda: None):
        self.pool = pool
        self._acquire_timeout = settings.db_connect_timeout_s
        self._breaker_s = settings.db_breaker_s
        self._open_until = 0.0
        self._on_state = on_state
        self._on_busy = on_busy
        self._busy_said_at = float("-inf")
        self._busy_unsaid = 0

    @property
    def available(self) -> bool:
        return time.monotonic() >= self._open_until

    async def run(self, query: Callable[..., Awaitable[T]], *args, **kwargs) -> T:
        """Run one query function on a pooled connection; Unavailable when PostgreSQL is not there."""
        if not self.available:
            raise Unavailable("database circuit open")
        try:
            conn = await self.pool.acquire(timeout=self._acquire_timeout)
        except asyncio.TimeoutError as exc:
            if self._saturated():
                raise self._busy() from exc
            raise self._down(exc) from exc
        except Exception as exc:  # refused, or the server would not let us in
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

    def _saturated(self) -> bool:
        """Every connection the pool may hold is open and in use: a wait that timed out behind
        them is overload (a slow moment on a busy machine), not PostgreSQL gone."""
        return self.pool.get_size() >= self.pool.get_max_size() and self.pool.get_idle_size() == 0

    def _busy(self) -> Unavailable:
        """A 503 for this request only. The breaker stays shut: opening it would answer 503 to
        every uncached request for ``db_breaker_s``, also those a connection freed a moment later
        would have served (a loaded soak's 503s came in such runs). A connection or statement
        failure still opens it."""
        self._on_busy()
        self._busy_unsaid += 1
        now = time.monotonic()
        if now - self._busy_said_at >= BUSY_LOG_EVERY_S:
            log.warning("db_pool_busy", waits_timed_out=self._busy_unsaid, pool_size=self.pool.get_max_size(),
                        wait_s=self._acquire_timeout)
            self._busy_said_at, self._busy_unsaid = now, 0
        return Unavailable("every pooled connection busy")

    def _down(self, exc: BaseException) -> Unavailable:
        log.warning("db_unavailable", error=type(exc).__name__)
        self._open_until = time.monotonic() + self._breaker_s
        self._on_state(False)
        return Unavailable(type(exc).__name__)
