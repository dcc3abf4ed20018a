"""Launcher hash lookups: which public version a jar file (by sha1/sha256/sha512) belongs to."""

from __future__ import annotations

import asyncpg

from .catalog import PUBLIC_VERSION, VERSION_COLUMNS, VERSION_ORDER

# Algorithm -> (version_files column, hex length). The columns are char(n): parameters are
# cast to bpchar[] so the partial btree indexes on them are used.
ALGORITHMS = {"sha1": ("sha1", 40), "sha256": ("sha256", 64), "sha512": ("sha512", 128)}


def column(algorithm: str) -> str:
    return ALGORITHMS[algorithm][0]


async def versions_by_hashes(
    conn: asyncpg.Connection, algorithm: str, hashes: list[str]
) -> dict[str, asyncpg.Record]:
    """hash -> the public version holding that file; the newest such version when several do
    (the same jar attached to two releases). Unknown and non-public hashes are absent."""
    col = column(algorithm)
    rows = await conn.fetch(
        f"""SELECT DISTINCT ON (hf.{col}) hf.{col}::text AS hash, {VERSION_COLUMNS}
            FROM version_files hf
            JOIN mod_versions v ON v.id = hf.version_id
            JOIN mods m ON m.id = v.mod_id
            WHERE hf.{col} = ANY($1::bpchar[]) AND {PUBLIC_VERSION} AND m.listed
            ORDER BY hf.{col}, {VERSION_ORDER}""",
        hashes,
    )
    return {r["hash"]: r for r in rows}
