"""The Atom feeds' reads: a mod's, an author's or a search's newest public versions.

Which mods a feed covers comes from the catalogue's own conditions (``catalog.mod_conditions``:
listed mods, and for a search its full text and every filter, as ``catalog.search`` writes
them); which of their versions, from the public predicate (``catalog.PUBLIC_VERSION``: hidden,
quarantined, held and still-scanning versions never appear) and the per-file facet test
(``catalog.file_match``: one file carries one of the loaders *and* one of the game versions).
No filter is written twice.

Each feed is two statements on one connection: its entries, newest published first, at most
``limit``; and its change stamp, the newest ``updated_at`` of every version row the feed
covers *whatever its state*: hiding a version writes its ``updated_at``, so a version leaving
moves the stamp forward (the feed's ``<updated>`` and ``Last-Modified``), never back.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import asyncpg

from .catalog import PUBLIC_VERSION, REPO_URL, SearchQuery, file_match, mod_conditions

# What an entry needs (indexium_api.feeds turns it into Atom).
_ENTRY_COLUMNS = f"""v.id, v.version_number, v.name, v.version_type, v.changelog, v.tag_name, v.published_at,
       v.created_at, v.updated_at, v.loaders, v.game_versions,
       m.slug, m.name AS mod_name, m.authors, m.repo_full_name, {REPO_URL},
       (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
       NOT EXISTS (SELECT 1 FROM mod_versions o WHERE o.mod_id = v.mod_id AND o.id <> v.id
                   AND o.status = 'public' AND NOT o.hidden AND o.created_at < v.created_at) AS new_project,
       (SELECT json_build_object('filename', f.filename, 'url', f.url, 'size', f.size)
        FROM version_files f WHERE f.version_id = v.id
        ORDER BY f.is_primary DESC, f.filename LIMIT 1) AS download"""
ORDER = "v.published_at DESC NULLS LAST, v.created_at DESC, v.id"


async def _feed(conn: asyncpg.Connection, sq: SearchQuery, extra: list[str], extra_args: list,
                limit: int) -> tuple[list[asyncpg.Record], datetime | None]:
    """The entries and the change stamp of the versions of the mods ``sq`` finds (its loader and
    game-version filters held per file of each version), further narrowed by ``extra``
    (conditions whose parameters are ``extra_args``, written as ``{0}``, ``{1}``...)."""
    cte, frm, where, s = mod_conditions(sq)
    where += [c.format(*(s.p(a) for a in extra_args)) for c in extra] if extra else []
    if sq.game_versions or sq.loaders:
        where.append(file_match(s.p(list(sq.game_versions), "::text[]") if sq.game_versions else None,
                                s.p(list(sq.loaders), "::text[]") if sq.loaders else None))
    scope = f"FROM {frm} JOIN mod_versions v ON v.mod_id = m.id WHERE {' AND '.join(where)}"
    stamp = await conn.fetchval(f"{cte} SELECT max(v.updated_at) {scope}", *s.args)
    entries = await conn.fetch(
        f"{cte} SELECT {_ENTRY_COLUMNS} {scope} AND {PUBLIC_VERSION} ORDER BY {ORDER} LIMIT {s.p(limit)}", *s.args)
    return entries, stamp


async def mod_feed(conn: asyncpg.Connection, slug: str, *, loaders: tuple[str, ...] = (),
                   game_versions: tuple[str, ...] = (), limit: int) -> tuple[asyncpg.Record | None, list, datetime | None]:
    """(the listed mod, or None; its newest public versions; the change stamp)."""
    mod = await conn.fetchrow("SELECT id, slug, name, summary, created_at FROM mods WHERE slug = $1 AND listed", slug)
    if mod is None:
        return None, [], None
    sq = SearchQuery(q=None, loaders=loaders, game_versions=game_versions)
    entries, stamp = await _feed(conn, sq, ["m.id = {0}::uuid"], [mod["id"]], limit)
    return mod, entries, stamp


async def author_feed(conn: asyncpg.Connection, login: str, *, loaders: tuple[str, ...] = (),
                      game_versions: tuple[str, ...] = (), limit: int) -> tuple[asyncpg.Record | None, list, datetime | None]:
    """(the GitHub account, or None when no repository owner has that login; the newest public
    versions of every listed mod it owns; the change stamp). The owner, as a subscription to an
    author means it, not the manifests' author names (search's ``author=`` takes both)."""
    # (Every account that has had the login, as the search's author filter reads it: one login
    # may be recorded for two accounts across a rename.)
    author = await conn.fetchrow(
        """SELECT (array_agg(login ORDER BY updated_at DESC))[1] AS login, array_agg(github_id) AS github_ids
           FROM authors WHERE lower(login) = lower($1)""", login)
    if author is None or author["github_ids"] is None:
        return None, [], None
    sq = SearchQuery(q=None, loaders=loaders, game_versions=game_versions)
    entries, stamp = await _feed(conn, sq, ["m.author_github_id = ANY({0}::bigint[])"], [author["github_ids"]], limit)
    return author, entries, stamp


async def search_feed(conn: asyncpg.Connection, sq: SearchQuery, *, limit: int) -> tuple[list, datetime | None]:
    """The newest public versions (a mod's first one is a new project) of the mods the search
    finds, its loader and game-version filters held per file."""
    return await _feed(conn, replace(sq, limit=limit, offset=0, sort=None), [], [], limit)

