"""Release assets the indexer left out, and why (``release_asset_skips``).

Written by the indexer for every release it processes (the rows of one release are replaced
as a whole, so an asset fixed by a re-upload disappears); read by the operators' status
(``indexium_ops skipped``) and by the author's dashboard (:func:`for_repositories`).
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

REASON_MAX = 500
NAME_MAX = 1000
# Assets that are plainly not mod files (a changelog, a -sources jar): shown only when asked.
NON_MOD_FILE_CODES = ("not_a_mod_file", "build_by_product")


def _text(value: str, limit: int) -> str:
    """PostgreSQL text holds no NUL; names come from GitHub as the author typed them."""
    return value.replace("\x00", "\ufffd")[:limit]


@dataclass(frozen=True)
class Skip:
    github_asset_id: int
    asset_name: str
    code: str
    reason: str


async def replace_for_release(
    conn: asyncpg.Connection, *, github_release_id: int, github_repo_id: int, owner_github_id: int,
    repo_full_name: str, tag_name: str, skips: list[Skip], release_indexed: bool,
) -> None:
    """The release's left-out assets are exactly ``skips`` from now on."""
    await conn.execute("DELETE FROM release_asset_skips WHERE github_release_id = $1", github_release_id)
    if not skips:
        return
    await conn.executemany(
        """INSERT INTO release_asset_skips (github_release_id, github_asset_id, github_repo_id, owner_github_id,
               repo_full_name, tag_name, asset_name, code, reason, release_indexed)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (github_release_id, github_asset_id) DO UPDATE SET
               asset_name = EXCLUDED.asset_name, code = EXCLUDED.code, reason = EXCLUDED.reason,
               release_indexed = EXCLUDED.release_indexed, updated_at = now()""",
        [(github_release_id, s.github_asset_id, github_repo_id, owner_github_id, _text(repo_full_name, NAME_MAX),
          _text(tag_name, NAME_MAX), _text(s.asset_name, NAME_MAX), _text(s.code, 64), _text(s.reason, REASON_MAX),
          release_indexed) for s in skips],
    )


_COLUMNS = """repo_full_name, tag_name, asset_name, code, reason, release_indexed, updated_at,
              github_repo_id, github_release_id, github_asset_id"""


async def for_owner(conn: asyncpg.Connection, owner_github_id: int, limit: int = 100) -> list[asyncpg.Record]:
    """The left-out assets of one owner's repositories (a GitHub user or organisation id), newest first."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM release_asset_skips WHERE owner_github_id = $1
            ORDER BY updated_at DESC, asset_name LIMIT $2""",
        owner_github_id, limit,
    )


async def for_repositories(conn: asyncpg.Connection, github_repo_ids: list[int], limit: int = 500, *,
                           include_non_mod_files: bool = False) -> list[asyncpg.Record]:
    """What the web dashboard shows a signed-in author: the left-out assets of the repositories
    GitHub lists for them, newest first, plain non-mod files only when asked."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM release_asset_skips
            WHERE github_repo_id = ANY($1::bigint[]) AND ($3 OR code <> ALL($4::text[]))
            ORDER BY updated_at DESC, asset_name LIMIT $2""",
        github_repo_ids, limit, include_non_mod_files, list(NON_MOD_FILE_CODES),
    )


async def for_repository(conn: asyncpg.Connection, github_repo_id: int, limit: int = 100) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM release_asset_skips WHERE github_repo_id = $1
            ORDER BY updated_at DESC, asset_name LIMIT $2""",
        github_repo_id, limit,
    )


async def recent(conn: asyncpg.Connection, limit: int = 50, *, repo_full_name: str | None = None,
                 include_non_mod_files: bool = False) -> list[asyncpg.Record]:
    """For operators: newest first, optionally one repository's; assets that are not mod
    files at all (a changelog, a zip) only when asked."""
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM release_asset_skips
            WHERE ($2::text IS NULL OR lower(repo_full_name) = lower($2))
              AND ($3 OR code <> ALL($4::text[]))
            ORDER BY updated_at DESC, asset_name LIMIT $1""",
        limit, repo_full_name, include_non_mod_files, list(NON_MOD_FILE_CODES),
    )


async def counts_by_code(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT code, count(*) AS n FROM release_asset_skips GROUP BY code ORDER BY n DESC, code"
    )
