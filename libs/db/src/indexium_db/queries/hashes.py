"""Launcher hash lookups: which public version a jar file (by sha1/sha256/sha512) belongs to.

Only the project that owns the file's bytes answers (``ownership``: the first to publish them);
the same bytes in another project are a re-upload and never the answer, even if public."""

from __future__ import annotations

import asyncpg

from .catalog import PUBLIC_VERSION, VERSION_COLUMNS, VERSION_ORDER

# Algorithm -> (version_files column, hex length). The columns are char(n): parameters are
# cast to bpchar[] so the partial btree indexes on them are used.
ALGORITHMS = {"sha1": ("sha1", 40), "sha256": ("sha256", 64), "sha512": ("sha512", 128)}

# The file ``hf`` of version ``v`` is its bytes' owner's: content_owners names the project
# (a trigger claims the bytes in the statement that stores a hash, so every hash has one).
OWNED = ("EXISTS (SELECT 1 FROM content_owners own"
         " WHERE own.sha256 = hf.content_sha256 AND own.mod_id = v.mod_id)")


def column(algorithm: str) -> str:
    return ALGORITHMS[algorithm][0]


async def files_in_public_versions(
    conn: asyncpg.Connection, algorithm: str, hashes: list[str], *, columns: str, every: bool = False,
    version: str = PUBLIC_VERSION,
) -> list[asyncpg.Record]:
    """(hash, file url, ``columns`` of the version) for files with these hashes in public versions
    of listed mods, newest version first per hash; ``every`` keeps every version holding the
    file (the same jar attached to two releases), otherwise only the newest. ``columns`` is one
    of the version column lists (``VERSION_COLUMNS``, ``modrinth.V2_VERSION_COLUMNS``), never input;
    ``version`` the condition a version must meet over ``v`` (``modrinth.V2_VERSION`` for /v2)."""
    col = column(algorithm)
    distinct = f"DISTINCT ON (hf.{col}) " if not every else ""
    return await conn.fetch(
        f"""SELECT {distinct}hf.{col}::text AS hash, hf.url AS file_url, {columns}
            FROM version_files hf
            JOIN mod_versions v ON v.id = hf.version_id
            JOIN mods m ON m.id = v.mod_id
            WHERE hf.{col} = ANY($1::bpchar[]) AND {version} AND m.listed AND {OWNED}
            ORDER BY hf.{col}, {VERSION_ORDER}""",
        hashes,
    )


async def versions_by_hashes(
    conn: asyncpg.Connection, algorithm: str, hashes: list[str]
) -> dict[str, asyncpg.Record]:
    """hash -> the public version holding that file; the newest such version when several do
    (the same jar attached to two releases). Unknown and non-public hashes are absent."""
    rows = await files_in_public_versions(conn, algorithm, hashes, columns=VERSION_COLUMNS)
    return {r["hash"]: r for r in rows}
