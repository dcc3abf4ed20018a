"""Sample rows for tests, benchmarks and local demos: no service calls these.

They write minimal mods, versions and files straight into the catalogue tables
(``indexium_devstack.telemetry_samples`` builds the pings that refer to them).
"""

from __future__ import annotations

import json
import uuid

import asyncpg

SEED_REPO_BASE = 9_000_000_000  # far from real GitHub repository ids


async def seed_mods(conn: asyncpg.Connection, slugs: list[str], *, listed: bool = True,
                    offset: int = 0) -> dict[str, uuid.UUID]:
    """Insert minimal mods (listed, like mods with a public version); returns slug -> id."""
    rows = await conn.fetch(
        """INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name, listed)
           SELECT $1::bigint + n, 'sample/' || s, s, s, initcap(s), $3
           FROM unnest($2::text[]) WITH ORDINALITY AS t(s, n)
           RETURNING id, slug""",
        SEED_REPO_BASE + offset, slugs, listed)
    return {r["slug"]: r["id"] for r in rows}


async def mod_ids_with_prefix(conn: asyncpg.Connection, prefix: str) -> list[uuid.UUID]:
    """Ids of the mods whose slug starts with ``prefix`` (a LIKE pattern), in slug order."""
    rows = await conn.fetch("SELECT id FROM mods WHERE slug LIKE $1 || '%' ORDER BY slug", prefix)
    return [r["id"] for r in rows]


async def seed_mod(conn: asyncpg.Connection, slug: str, manifest_id: str, *, n: int,
                   listed: bool = True) -> uuid.UUID:
    """One mod whose slug and manifest id differ (a slug made unique with a suffix)."""
    return await conn.fetchval(
        """INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name, listed)
           VALUES ($1, 'sample/' || $2::text, $2::text, $3::text, initcap($2::text), $4) RETURNING id""",
        SEED_REPO_BASE + 500_000 + n, slug, manifest_id, listed)


async def seed_file(conn: asyncpg.Connection, mod_id: uuid.UUID, records: list[dict], *,
                    tag: str = "v1.0.0", hidden: bool = False) -> None:
    """A version with one jar whose normalized manifest records are ``records``."""
    version_id = await conn.fetchval(
        """INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, status, hidden)
           VALUES ($1, $2::text, 1, $2::text, 'public', $3) RETURNING id""", mod_id, tag, hidden)
    await conn.execute(
        """INSERT INTO version_files (version_id, github_asset_id, filename, url, size, manifests)
           VALUES ($1, 1, 'mod.jar', 'https://example.invalid/mod.jar', 1, $2::text::jsonb)""",
        version_id, json.dumps(records))  # as text: callers' connections may have no jsonb codec
