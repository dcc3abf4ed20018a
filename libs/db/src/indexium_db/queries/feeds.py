"""The Atom feeds' reads: a mod's, an author's or a search's newest public versions.

Which mods a feed covers comes from the catalogue's own conditions (``sqlpath.mod_conditions``:
listed mods, and for a search its full text and every filter, as ``sqlpath.search`` writes
them); which of their versions, from the public predicate (``catalog.PUBLIC_VERSION``: hidden,
quarantined, rejected and still-scanning versions never appear) and the per-file facet test
(``catalog.file_match``: one file carries one of the loaders *and* one of the game versions).
No filter is written twice.

Each feed also has a **change stamp** (its ``Last-Modified``): the newest ``updated_at`` of
the rows it is read from, whatever their state. Every change a feed can show writes one:
hiding a version writes the version's and, through ``mods.refresh_rollup``, its mod's (so a
version leaving moves the stamp forward, never back); a card change writes the mod's. A mod's
feed reads its mod and its versions; an author's, every mod the account owns, listed or not
(``mods_author_idx``); a search's, the whole catalogue (``mods_updated_idx``,
``mod_versions_updated_idx``: two index endpoints), since a mod can enter or leave a search's
results without anything of its own that the search read changing.
"""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from indexium_search.sqlpath import SearchQuery, mod_conditions

from .catalog import PUBLIC_VERSION, file_match

# What an entry needs (indexium_api.feeds.routes turns it into Atom).
_ENTRY_COLUMNS = f"""v.id, v.version_number, v.name, v.version_type, v.changelog, v.tag_name, v.published_at,
       v.version_sort, v.created_at, v.updated_at, v.loaders, v.game_versions,
       m.slug, m.name AS mod_name, m.authors, m.repo_full_name, m.default_branch,
       (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
       NOT EXISTS (SELECT 1 FROM mod_versions o WHERE o.mod_id = v.mod_id AND o.id <> v.id
                   AND o.status = 'public' AND NOT o.hidden AND o.created_at < v.created_at) AS new_project,
       (SELECT json_build_object('filename', f.filename, 'url', f.url, 'size', f.size)
        FROM version_files f WHERE f.version_id = v.id
        ORDER BY f.is_primary DESC, f.filename LIMIT 1) AS download"""
# Publish time, then (a release published in the same second) the version order, as a mod page lists them.
ORDER = "v.published_at DESC NULLS LAST, v.version_sort DESC, v.created_at DESC, v.id"
# A search feed walks the mods it finds in order of their newest public version, this many at a
# time, until no mod left can hold a version newer than the feed's oldest entry; at most
# SEARCH_MAX_MODS mods (a loader and game-version filter whose files are all old versions of
# recently updated mods is the only way there: the mod-level filter already holds per mod).
SEARCH_BATCH = 100
SEARCH_MAX_MODS = 2000
_OLDEST = datetime.min.replace(tzinfo=UTC)


async def _versions_of(conn: asyncpg.Connection, mod_ids: list, sq: SearchQuery, limit: int) -> list:
    """The newest public versions of these mods, held per file to ``sq``'s loaders and game versions."""
    args: list = [mod_ids]

    def p(value, cast: str = "") -> str:
        args.append(value)
        return f"${len(args)}{cast}"

    where = ["v.mod_id = ANY($1::uuid[])", PUBLIC_VERSION]
    if sq.game_versions or sq.loaders:
        where.append(file_match(p(list(sq.game_versions), "::text[]") if sq.game_versions else None,
                                p(list(sq.loaders), "::text[]") if sq.loaders else None))
    return await conn.fetch(f"SELECT {_ENTRY_COLUMNS} FROM mod_versions v JOIN mods m ON m.id = v.mod_id "
                            f"WHERE {' AND '.join(where)} ORDER BY {ORDER} LIMIT {p(limit)}", *args)


def _newest_first(rows) -> list:
    """ORDER, for rows of several batches (version_sort is COLLATE "C": Python's str order)."""
    return sorted(rows, key=lambda r: (r["published_at"] is not None, r["published_at"] or _OLDEST,
                                       r["version_sort"] or "", r["created_at"]), reverse=True)


async def mod_feed(conn: asyncpg.Connection, slug: str, *, loaders: tuple[str, ...] = (),
                   game_versions: tuple[str, ...] = (), limit: int) -> tuple[asyncpg.Record | None, list, datetime | None]:
    """(the listed mod, or None; its newest public versions; the change stamp)."""
    mod = await conn.fetchrow(
        """SELECT m.id, m.slug, m.name, m.summary,
                  greatest(m.updated_at, (SELECT max(v.updated_at) FROM mod_versions v WHERE v.mod_id = m.id)) AS stamp
           FROM mods m WHERE m.slug = $1 AND m.listed""", slug)
    if mod is None:
        return None, [], None
    sq = SearchQuery(q=None, loaders=loaders, game_versions=game_versions)
    return mod, await _versions_of(conn, [mod["id"]], sq, limit), mod["stamp"]


async def author_feed(conn: asyncpg.Connection, login: str, *, loaders: tuple[str, ...] = (),
                      game_versions: tuple[str, ...] = (), limit: int) -> tuple[asyncpg.Record | None, list, datetime | None]:
    """(the GitHub account, or None when no repository owner has that login; the newest public
    versions of every listed mod it owns; the change stamp). The owner, as a subscription to an
    author means it, not the manifests' author names (search's ``author=`` takes both)."""
    # Every account that has had the login, as the search's author filter reads it: one login
    # may be recorded for two accounts across a rename.
    author = await conn.fetchrow(
        """SELECT (array_agg(login ORDER BY updated_at DESC))[1] AS login, array_agg(github_id) AS github_ids
           FROM authors WHERE lower(login) = lower($1)""", login)
    if author is None or author["github_ids"] is None:
        return None, [], None
    mods = await conn.fetchrow(
        """WITH owned AS (SELECT id, listed, updated_at FROM mods WHERE author_github_id = ANY($1::bigint[]))
           SELECT (SELECT array_agg(id) FROM owned WHERE listed) AS listed,
                  greatest((SELECT max(updated_at) FROM owned),
                           (SELECT max(v.updated_at) FROM mod_versions v JOIN owned o ON o.id = v.mod_id)) AS stamp""",
        author["github_ids"])
    sq = SearchQuery(q=None, loaders=loaders, game_versions=game_versions)
    rows = await _versions_of(conn, list(mods["listed"] or ()), sq, limit) if mods["listed"] else []
    return author, rows, mods["stamp"]


async def search_feed(conn: asyncpg.Connection, sq: SearchQuery, *, limit: int) -> tuple[list, datetime | None]:
    """The newest public versions (a mod's first one is a new project) of the mods the search
    finds, its loader and game-version filters held per file; the catalogue's change stamp.

    The mods come in order of their newest public version (``mods.last_published_at``, the
    search's own "recently updated" order and index), SEARCH_BATCH at a time; the walk stops
    once ``limit`` versions are found and the next mod's newest version is older than the
    oldest of them (no mod after it can hold a newer one)."""
    stamp = await conn.fetchval("SELECT greatest((SELECT max(updated_at) FROM mods), "
                                "(SELECT max(updated_at) FROM mod_versions))")
    found: list = []
    for offset in range(0, SEARCH_MAX_MODS, SEARCH_BATCH):
        cte, frm, where, s = mod_conditions(sq)
        mods = await conn.fetch(
            f"{cte} SELECT m.id, m.last_published_at FROM {frm} WHERE {' AND '.join(where)} "
            f"ORDER BY m.last_published_at DESC NULLS LAST, m.slug LIMIT {s.p(SEARCH_BATCH)} OFFSET {s.p(offset)}",
            *s.args)
        if mods:
            found = _newest_first([*found, *await _versions_of(conn, [m["id"] for m in mods], sq, limit)])[:limit]
        last = mods[-1]["last_published_at"] if mods else None
        if len(mods) < SEARCH_BATCH or (len(found) >= limit and last is not None
                                        and found[-1]["published_at"] is not None
                                        and last < found[-1]["published_at"]):
            break
    return found, stamp
