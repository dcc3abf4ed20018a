"""Release assets the indexer left out, and why (``release_asset_skips``).

Written by the indexer for every release it processes (the rows of one release are replaced
as a whole, so an asset fixed by a re-upload disappears); read by the operators' status
(``indexium_ops skipped``) and by the author's dashboard, both through :func:`left_out`.
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


async def left_out(conn: asyncpg.Connection, *, owner_github_id: int | None = None,
                   github_repo_ids: list[int] | None = None, repo_full_name: str | None = None,
                   include_non_mod_files: bool = True, limit: int = 100) -> list[asyncpg.Record]:
    """Left-out assets, newest first: of one owner's repositories (a GitHub user or organisation
    id), of the repositories GitHub lists for a signed-in author (the web dashboard), of one
    repository by name (operators, any case), or of all (operators); plain non-mod files (a
    changelog, a -sources jar) unless ``include_non_mod_files`` is False.

    The conditions are only those given, so each use is a statement of its own that PostgreSQL
    plans with its index (owner, repository, or recent), not one generic plan of ``$n IS NULL OR``."""
    args: list = []

    def p(value, cast: str = "") -> str:
        args.append(value)
        return f"${len(args)}{cast}"

    where = []
    if owner_github_id is not None:
        where.append(f"owner_github_id = {p(owner_github_id, '::bigint')}")
    if github_repo_ids is not None:
        where.append(f"github_repo_id = ANY({p(github_repo_ids, '::bigint[]')})")
    if repo_full_name is not None:
        where.append(f"lower(repo_full_name) = lower({p(repo_full_name, '::text')})")
    if not include_non_mod_files:
        where.append(f"code <> ALL({p(list(NON_MOD_FILE_CODES), '::text[]')})")
    return await conn.fetch(
        f"""SELECT {_COLUMNS} FROM release_asset_skips {'WHERE ' + ' AND '.join(where) if where else ''}
            ORDER BY updated_at DESC, asset_name LIMIT {p(limit, '::int')}""",
        *args,
    )


async def counts_by_code(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT code, count(*) AS n FROM release_asset_skips GROUP BY code ORDER BY n DESC, code"
    )
