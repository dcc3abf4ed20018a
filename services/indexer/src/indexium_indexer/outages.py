"""Which exceptions mean "our infrastructure is away" (retry later, spend no attempt)."""

from __future__ import annotations

import asyncio

import asyncpg
import nats.errors

_PG_OUTAGE_STATES = {
    "57P01",  # admin_shutdown
    "57P02",  # crash_shutdown
    "57P03",  # cannot_connect_now
    "53300",  # too_many_connections
    "40001",  # serialization_failure
    "40P01",  # deadlock_detected
}


def is_outage(exc: BaseException) -> bool:
    if isinstance(exc, (asyncpg.PostgresConnectionError, asyncpg.InterfaceError,
                        asyncpg.ConnectionDoesNotExistError, ConnectionError, OSError,
                        asyncio.TimeoutError, nats.errors.Error)):
        return True
    if isinstance(exc, asyncpg.PostgresError):
        return getattr(exc, "sqlstate", None) in _PG_OUTAGE_STATES
    return False
