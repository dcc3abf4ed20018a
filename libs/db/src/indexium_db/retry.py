"""Retry a whole transaction when PostgreSQL, not our SQL, is the problem.

Connection loss, no primary among a multi-host DSN's hosts (a failover), admin shutdown (57P01), cannot-connect-now (57P03), serialization
failures (40001) and deadlocks (40P01) are transient: the same transaction run
again later succeeds. Everything else is a bug or bad data and is raised at once.
The pool drops broken connections on release, so it recovers without a restart.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import asyncpg

T = TypeVar("T")

TRANSIENT_SQLSTATES = frozenset({
    "57P01",  # admin_shutdown
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now
    "53300",  # too_many_connections
    "08000", "08003", "08006", "08001", "08004",  # connection exceptions
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
})


def is_transient(exc: BaseException) -> bool:
    # TargetServerAttributeNotMatched: a multi-host DSN found no primary (the old one is gone,
    # the standby not promoted yet), which is a failover in progress, not a bug.
    if isinstance(exc, (asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
                        asyncpg.exceptions.TargetServerAttributeNotMatched,
                        ConnectionError, OSError, asyncio.TimeoutError)):
        return True
    return isinstance(exc, asyncpg.PostgresError) and getattr(exc, "sqlstate", None) in TRANSIENT_SQLSTATES


def backoff(attempt: int, *, base: float, cap: float) -> float:
    """Capped exponential backoff with full jitter (attempt counts from 1)."""
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


async def in_transaction(
    pool: asyncpg.Pool,
    work: Callable[[asyncpg.Connection], Awaitable[T]],
    *,
    attempts: int = 4,
    base_s: float = 0.2,
    cap_s: float = 2.0,
) -> T:
    """Run ``work(conn)`` inside a transaction, re-running all of it on transient failures."""
    for attempt in range(1, attempts + 1):
        try:
            async with pool.acquire() as conn, conn.transaction():
                return await work(conn)
        except Exception as exc:
            if attempt == attempts or not is_transient(exc):
                raise
            await asyncio.sleep(backoff(attempt, base=base_s, cap=cap_s))
    raise AssertionError("unreachable")
