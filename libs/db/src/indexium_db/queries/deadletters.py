"""Dead letters: the operators' working queue, one row per item given up on."""

from __future__ import annotations

import asyncpg


async def insert(
    conn: asyncpg.Connection, *, consumer: str, subject: str, msg_id: str | None,
    stream_sequence: int, category: str, error: str, attempts: int, payload: bytes,
    github_repo_id: int | None = None,
) -> int:
    """``github_repo_id``: the repository the message is about, when it is about one (the
    author's dashboard shows it its own dead letters, by that column)."""
    return await conn.fetchval(
        """INSERT INTO dead_letters (consumer, subject, msg_id, stream_sequence, category, error,
               attempts, payload, github_repo_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (consumer, stream_sequence) DO UPDATE SET error = EXCLUDED.error
           RETURNING id""",
        consumer, subject, msg_id, stream_sequence, category, error, attempts, payload, github_repo_id,
    )


async def unattributed_open(conn: asyncpg.Connection, subject_prefix: str) -> list[asyncpg.Record]:
    """Open dead letters of these subjects written before ``github_repo_id`` was (0013)."""
    return await conn.fetch(
        """SELECT id, payload FROM dead_letters
           WHERE replayed_at IS NULL AND github_repo_id IS NULL AND starts_with(subject, $1)""",
        subject_prefix,
    )


async def set_repository(conn: asyncpg.Connection, dead_letter_id: int, github_repo_id: int) -> None:
    await conn.execute("UPDATE dead_letters SET github_repo_id = $2 WHERE id = $1", dead_letter_id, github_repo_id)


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
