"""Dead letters: the operators' working queue, one row per item given up on."""

from __future__ import annotations

import asyncpg


async def insert(
    conn: asyncpg.Connection, *, consumer: str, subject: str, msg_id: str | None,
    stream_sequence: int, category: str, error: str, attempts: int, payload: bytes,
) -> int:
    return await conn.fetchval(
        """INSERT INTO dead_letters (consumer, subject, msg_id, stream_sequence, category, error,
               attempts, payload)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (consumer, stream_sequence) DO UPDATE SET error = EXCLUDED.error
           RETURNING id""",
        consumer, subject, msg_id, stream_sequence, category, error, attempts, payload,
    )


async def list_open(conn: asyncpg.Connection, limit: int = 100) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT id, consumer, subject, msg_id, category, error, attempts, created_at
           FROM dead_letters WHERE replayed_at IS NULL ORDER BY id LIMIT $1""",
        limit,
    )


async def get(conn: asyncpg.Connection, dead_letter_id: int) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT * FROM dead_letters WHERE id = $1", dead_letter_id)


async def mark_replayed(conn: asyncpg.Connection, dead_letter_id: int) -> None:
    await conn.execute("UPDATE dead_letters SET replayed_at = now() WHERE id = $1", dead_letter_id)


async def purge(conn: asyncpg.Connection, *, replayed_only: bool = True) -> int:
    status = await conn.execute(
        "DELETE FROM dead_letters WHERE ($1 = false OR replayed_at IS NOT NULL)", replayed_only
    )
    return int(status.split()[-1])
