"""Pools on a multi-host DSN (primary + streaming standby, ``target_session_attrs=read-write``)
against real PostgreSQL servers: they find the primary, and follow it through a failover."""

import asyncio

import pytest

from indexium_db.pool import create_pool
from indexium_db.retry import in_transaction
from indexium_devstack.embedded import EmbeddedPostgres, multi_host_dsn


def multi_host(primary: EmbeddedPostgres, standby: EmbeddedPostgres) -> str:
    # The standby first: choosing the primary must be the DSN's doing, not the host order.
    return multi_host_dsn([standby, primary])


async def test_read_write_and_read_only_pools_both_pick_the_primary(primary_and_standby):
    primary, standby = primary_and_standby
    dsn = multi_host(primary, standby)
    rw = await create_pool(dsn, min_size=1, max_size=2, connect_timeout=10)
    # Read-only by our own setting: the read-write check must not reject every host for it.
    ro = await create_pool(dsn, min_size=1, max_size=2, connect_timeout=10, read_only=True)
    try:
        async with rw.acquire() as conn:
            assert await conn.fetchval("SELECT pg_is_in_recovery()") is False
            assert await conn.fetchval("SHOW transaction_read_only") == "off"
        async with ro.acquire() as conn:
            assert await conn.fetchval("SELECT pg_is_in_recovery()") is False
            assert await conn.fetchval("SHOW transaction_read_only") == "on"
            assert await conn.fetchval("SHOW port") == str(primary.port)
    finally:
        await rw.close()
        await ro.close()


async def test_transaction_retry_follows_the_promoted_standby_without_a_new_pool(primary_and_standby):
    primary, standby = primary_and_standby
    pool = await create_pool(multi_host(primary, standby), min_size=2, max_size=4, connect_timeout=10)
    try:
        await in_transaction(pool, lambda c: c.execute("CREATE TABLE t (n int PRIMARY KEY)"))
        for n in range(20):
            await in_transaction(pool, lambda c, n=n: c.execute("INSERT INTO t VALUES ($1)", n))

        await asyncio.to_thread(primary.kill9)

        async def promote_soon():
            await asyncio.sleep(1.0)
            await asyncio.to_thread(standby.promote)

        promoting = asyncio.create_task(promote_soon())
        # Until the promotion no host is a primary; that is retried like connection loss.
        await in_transaction(pool, lambda c: c.execute("INSERT INTO t VALUES (20)"),
                             attempts=200, base_s=0.1, cap_s=0.3)
        await promoting
        async with pool.acquire() as conn:
            assert await conn.fetchval("SHOW port") == str(standby.port)
            assert await conn.fetchval("SELECT count(*) FROM t") == 21  # every commit survived
    finally:
        await pool.close()
