"""Sample mods and pings for tests, the benchmark and local demos (never used by the service).

The SQL here writes fixture data only, so it lives beside its only users instead of
in the production query modules.
"""

from __future__ import annotations

import gzip
import uuid
from typing import Any

import asyncpg
import msgspec

SEED_REPO_BASE = 9_000_000_000  # far from real GitHub repository ids


def ping(server_uuid: uuid.UUID | str | None = None, mods: list[dict] | None = None,
         **overrides: Any) -> dict:
    body = {
        "protocol": 1,
        "server_uuid": str(server_uuid or uuid.uuid4()),
        "mods": mods if mods is not None else [{"slug": "sodium", "version": "0.5.8"}],
        "game_version": "1.20.1",
        "loader": "fabric",
        "java_version": "21.0.2",
        "os": "linux",
        "arch": "x86_64",
        "core_count": 8,
        "player_count": 3,
        "online_mode": True,
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}  # `...` removes a field


def encode(body: dict, *, gzipped: bool = False) -> bytes:
    raw = msgspec.json.encode(body)
    return gzip.compress(raw) if gzipped else raw


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


def event(*, server: int | bytes, mods: list[tuple[uuid.UUID, str | None]], received_at: str,
          game_version: str = "1.20.1", loader: str = "fabric", java_version: str = "21",
          os: str = "linux", arch: str = "x86_64", ping_id: uuid.UUID | None = None):
    """A PingAccepted as the HTTP handler would publish it (``server`` stands for its hash)."""
    from indexium_contracts import telemetry

    server_hash = server if isinstance(server, bytes) else server.to_bytes(32, "big")
    return telemetry.PingAccepted(
        ping_id=ping_id or uuid.uuid4(), received_at=received_at, server_hash=server_hash,
        mods=[telemetry.ModUse(m, v) for m, v in mods], game_version=game_version, loader=loader,
        java_version=java_version, os=os, arch=arch, core_count=4)


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
        version_id, msgspec.json.encode(records).decode())
