"""The transaction retry helper against a real PostgreSQL that goes away and comes back."""

import asyncio

import asyncpg
import pytest

from indexium_db.pool import create_pool
from indexium_db.retry import backoff, in_transaction, is_transient
from indexium_devstack.embedded import EmbeddedPostgres


def test_classification():
    assert is_transient(ConnectionRefusedError())
    assert is_transient(asyncpg.exceptions.AdminShutdownError("x"))
    assert is_transient(asyncpg.exceptions.CannotConnectNowError("x"))
    assert is_transient(asyncpg.exceptions.SerializationError("x"))
    assert is_transient(asyncpg.exceptions.DeadlockDetectedError("x"))
    assert is_transient(asyncpg.exceptions.TargetServerAttributeNotMatched("no primary"))  # failover
    assert not is_transient(asyncpg.exceptions.UniqueViolationError("x"))
    assert not is_transient(ValueError())
    assert all(0 <= backoff(n, base=0.2, cap=2.0) <= 2.0 for n in range(1, 20))


async def test_retries_a_serialization_failure_then_succeeds(database_url):
    pool = await create_pool(database_url)
    calls = 0

    async def work(conn):
        nonlocal calls
        calls += 1
        if calls < 3:
            raise asyncpg.exceptions.SerializationError("conflict")
        return await conn.fetchval("SELECT 42")

    try:
        assert await in_transaction(pool, work, base_s=0.01) == 42
        assert calls == 3
        with pytest.raises(asyncpg.exceptions.UniqueViolationError):
            await in_transaction(pool, _raise_unique, base_s=0.01)
    finally:
        await pool.close()


async def _raise_unique(conn):
    raise asyncpg.exceptions.UniqueViolationError("dup")


async def test_pool_recovers_after_postgres_restart_without_a_new_pool(pg_root):
    pg = EmbeddedPostgres(pg_root / "pg", durable=False).start()
    try:
        pool = await create_pool(pg.dsn(), min_size=2)
        assert await in_transaction(pool, lambda c: c.fetchval("SELECT 1")) == 1
        pg.stop()

        async def restart_soon():
            await asyncio.sleep(0.5)
            await asyncio.to_thread(pg.start)

        restarting = asyncio.create_task(restart_soon())
        # Connection loss and cannot-connect-now are retried until the server is back.
        assert await in_transaction(pool, lambda c: c.fetchval("SELECT 2"), attempts=30,
                                    base_s=0.1, cap_s=0.3) == 2
        await restarting
        await pool.close()
    finally:
        pg.stop()
