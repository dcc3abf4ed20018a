"""Update checks: for each installed file (by hash), the newest public version of the same
mod with a file matching the launcher's loaders and game versions — never an older one.

"Older" is version order first (``mod_versions.version_sort``), publish time second: the
same order as a mod's version list. A hotfix for an old branch published after the
installed version is older by version order, so it is never offered (the incumbent's
downgrade). When nothing at or above the installed version matches, the hash is absent.

The installed file resolves to the project that owns its bytes (``hashes.OWNED``), and the
answer is always a version of that same project: an update check never crosses projects.
"""

from __future__ import annotations

import asyncpg

from .catalog import PUBLIC_VERSION, VERSION_COLUMNS, VERSION_ORDER, file_match
from .hashes import OWNED, column


async def newest_versions(
    conn: asyncpg.Connection,
    algorithm: str,
    hashes: list[str],
    *,
    loaders: list[str],
    game_versions: list[str],
    version_types: list[str],
    columns: str = VERSION_COLUMNS,
    every: bool = False,
    version: str = PUBLIC_VERSION,
) -> dict[str, asyncpg.Record] | list[asyncpg.Record]:
    """hash -> the newest allowed version (``columns`` of it). ``every``: a list of (hash, version)
    rows instead, every allowed version of each hash, newest first (the /v2 update_many answer).
    ``version``: the condition the installed and the offered versions meet, over ``v``
    (``modrinth.V2_VERSION`` for /v2)."""
    col = column(algorithm)
    args: list = [hashes]

    def p(value, cast: str) -> str:
        args.append(value)
        return f"${len(args)}{cast}"

    conditions = ["c.mod_id = h.mod_id", version.replace("v.", "c."),
                  # never below the installed version, in the list's own order
                  "(c.version_sort, COALESCE(c.published_at, '-infinity'))"
                  " >= (h.version_sort, COALESCE(h.published_at, '-infinity'))"]
    if game_versions or loaders:
        conditions.append(file_match(
            p(game_versions, "::text[]") if game_versions else None,
            p(loaders, "::text[]") if loaders else None,
        ).replace("v.id", "c.id"))
    if version_types:
        conditions.append(f"c.version_type = ANY({p(version_types, '::text[]')})")
    rows = await conn.fetch(
        f"""WITH installed AS (
                SELECT DISTINCT ON (hf.{col}) hf.{col}::text AS hash, v.mod_id, v.version_sort, v.published_at
                FROM version_files hf
                JOIN mod_versions v ON v.id = hf.version_id
                JOIN mods m ON m.id = v.mod_id
                WHERE hf.{col} = ANY($1::bpchar[]) AND {version} AND m.listed AND {OWNED}
                ORDER BY hf.{col}, {VERSION_ORDER}
            )
            SELECT h.hash, {columns}
            FROM installed h
            CROSS JOIN LATERAL (
                SELECT c.id FROM mod_versions c
                WHERE {' AND '.join(conditions)}
                ORDER BY {VERSION_ORDER.replace('v.', 'c.')}
                {'' if every else 'LIMIT 1'}
            ) best
            JOIN mod_versions v ON v.id = best.id
            JOIN mods m ON m.id = v.mod_id
            ORDER BY h.hash, {VERSION_ORDER}""",
        *args,
    )
    return list(rows) if every else {r["hash"]: r for r in rows}
