"""Numbered SQL migrations, applied by one deploy step under an advisory lock.

Files are ``migrations/NNNN_name.sql``; each runs in its own transaction and is
recorded in ``schema_migrations``. Replicas never migrate at start-up; two setup
runs at once serialize on the lock and the second finds nothing to do.
"""

from __future__ import annotations

from importlib import resources

import asyncpg

# Any constant works; it only has to be the same for every runner of this schema.
_LOCK_KEY = 0x1D3E_1A00


def available() -> list[tuple[str, str]]:
    files = resources.files("indexium_db") / "migrations"
    found = sorted(
        (f.name.removesuffix(".sql"), f.read_text("utf-8"))
        for f in files.iterdir()
        if f.name.endswith(".sql")
    )
    return found


async def migrate(conn: asyncpg.Connection) -> list[str]:
    """Apply pending migrations; return the names applied."""
    await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        applied = []
        for version, sql in available():
            if version in done:
                continue
            async with conn.transaction():
                await conn.execute(sql)
                await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
            applied.append(version)
        return applied
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
