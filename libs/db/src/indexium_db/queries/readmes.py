"""Repository READMEs (``repository_readmes``, migration 0024): what the GitHub role read, and
what the API serves of it. Storing a README copies its plain text into ``mods.readme_text``
(a trigger), which search reads; the caller announces ``mod_changed.v1`` after commit."""

from __future__ import annotations

from datetime import datetime

import asyncpg


async def etag(conn: asyncpg.Connection, github_repo_id: int, renderer: int) -> str | None:
    """The ETag to send as ``If-None-Match`` (None: never read, read without one, or rendered
    by an older renderer than ``renderer``: then the README is read whole and rendered again)."""
    return await conn.fetchval("SELECT etag FROM repository_readmes WHERE github_repo_id = $1 AND renderer = $2",
                               github_repo_id, renderer)


async def store(conn: asyncpg.Connection, github_repo_id: int, *, etag: str | None, path: str, branch: str,
                raw_text: str, html: str, plain_text: str, truncated: bool, renderer: int) -> bool:
    """Write the README as read now (``path`` '' and the texts '' when the repository has none);
    True when what is served of it changed (the caller then announces the repository's mods).
    NUL characters, which PostgreSQL's text cannot hold, become U+FFFD (as Markdown reads them)."""
    raw_text, plain_text = raw_text.replace("\x00", "\ufffd"), plain_text.replace("\x00", "\ufffd")
    old = await conn.fetchrow(
        "SELECT html, plain_text FROM repository_readmes WHERE github_repo_id = $1 FOR UPDATE", github_repo_id)
    await conn.execute(
        """INSERT INTO repository_readmes AS r (github_repo_id, etag, path, branch, raw_text, html, plain_text,
                                                truncated, renderer, fetched_at, checked_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())
           ON CONFLICT (github_repo_id) DO UPDATE SET
               etag = EXCLUDED.etag, path = EXCLUDED.path, branch = EXCLUDED.branch,
               raw_text = EXCLUDED.raw_text, html = EXCLUDED.html, plain_text = EXCLUDED.plain_text,
               truncated = EXCLUDED.truncated, renderer = EXCLUDED.renderer,
               fetched_at = now(), checked_at = now()""",
        github_repo_id, etag, path, branch, raw_text, html, plain_text, truncated, renderer,
    )
    return old is None or old["html"] != html or old["plain_text"] != plain_text


async def checked(conn: asyncpg.Connection, github_repo_id: int, at: datetime | None = None) -> None:
    """A 304: the README is as stored; only when we last asked changes."""
    await conn.execute("UPDATE repository_readmes SET checked_at = coalesce($2, now()) WHERE github_repo_id = $1",
                       github_repo_id, at)


async def for_mod(conn: asyncpg.Connection, mod_id) -> asyncpg.Record | None:
    """What a mod page, ``/v2`` ``body`` and ``/api/v1`` ``description_html`` serve: the rendered
    README of the mod's repository (None: never read)."""
    return await conn.fetchrow(
        """SELECT r.html, r.raw_text, r.path, r.branch, r.truncated, r.renderer, r.fetched_at
           FROM mods m JOIN repository_readmes r ON r.github_repo_id = m.github_repo_id
           WHERE m.id = $1""",
        mod_id,
    )
