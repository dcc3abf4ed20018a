"""Dead letters: the operators' working queue, one row per item given up on."""

from __future__ import annotations

import asyncpg

TAG_MAX = 255  # characters of a dead letter's release tag kept (shown on the dashboard; the tag is the author's text)


async def insert(
    conn: asyncpg.Connection, *, consumer: str, subject: str, msg_id: str | None,
    stream_sequence: int, category: str, error: str, attempts: int, payload: bytes,
    github_repo_id: int | None = None, tag_name: str | None = None,
) -> int:
    """``github_repo_id``, ``tag_name``: the repository and the release the message is about, when
    it is about one (the author's dashboard shows its own dead letters, by the repository, with
    the tag, and never reads the payload)."""
    return await conn.fetchval(
        """INSERT INTO dead_letters (consumer, subject, msg_id, stream_sequence, category, error,
               attempts, payload, github_repo_id, tag_name)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (consumer, stream_sequence) DO UPDATE SET error = EXCLUDED.error
           RETURNING id""",
        consumer, subject, msg_id, stream_sequence, category, error, attempts, payload, github_repo_id,
        _tag(tag_name),
    )


def _tag(tag_name: str | None) -> str | None:
    """A tag as PostgreSQL text holds it (no NUL), bounded: GitHub's tags are the author's text."""
    return None if tag_name is None else tag_name.replace("\x00", "\ufffd")[:TAG_MAX]


async def unattributed_open(conn: asyncpg.Connection, subject_prefix: str) -> list[asyncpg.Record]:
    """Open dead letters of these subjects with no repository (written before ``github_repo_id``
    was, 0013) or no tag (before ``tag_name``, 0018; or about no release)."""
    return await conn.fetch(
        """SELECT id, github_repo_id, tag_name, payload FROM dead_letters
           WHERE replayed_at IS NULL AND (github_repo_id IS NULL OR tag_name IS NULL)
             AND starts_with(subject, $1)""",
        subject_prefix,
    )


async def set_about(conn: asyncpg.Connection, dead_letter_id: int, github_repo_id: int | None,
                    tag_name: str | None) -> None:
    """The repository and the tag, each where it is still NULL."""
    await conn.execute(
        """UPDATE dead_letters SET github_repo_id = COALESCE(github_repo_id, $2), tag_name = COALESCE(tag_name, $3)
           WHERE id = $1""",
        dead_letter_id, github_repo_id, _tag(tag_name))


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
