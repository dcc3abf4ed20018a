"""create_pool(reset_session=False): no reset query when a connection goes back to the pool,
yet a transaction left open is still rolled back; the default pool resets the session."""

from indexium_db.pool import create_pool


async def _released_state(pool) -> tuple[str, bool]:
    async with pool.acquire() as conn:
        await conn.execute("SET application_name = 'left-behind'")  # session state
        tx = conn.transaction()
        await tx.start()  # left open on purpose
        await conn.execute("CREATE TEMP TABLE IF NOT EXISTS t_open (x int)")
    async with pool.acquire() as conn:  # max_size=1: the same connection again
        name = await conn.fetchval("SHOW application_name")
        open_table = await conn.fetchval("SELECT to_regclass('pg_temp.t_open') IS NOT NULL")
    return name, open_table


async def test_without_reset_the_session_stays_but_an_open_transaction_is_rolled_back(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=1, reset_session=False)
    try:
        assert await _released_state(pool) == ("left-behind", False)
    finally:
        await pool.close()


async def test_the_default_pool_resets_the_session(database_url):
    pool = await create_pool(database_url, min_size=1, max_size=1)
    try:
        name, open_table = await _released_state(pool)
        assert name != "left-behind" and not open_table
    finally:
        await pool.close()
