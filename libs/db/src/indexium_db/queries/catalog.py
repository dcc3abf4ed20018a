"""Public read queries for the API: only listed mods and public, unhidden versions."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

# A version launchers may see: scanned clean (or published before scan), not hidden.
PUBLIC_VERSION = "v.status = 'public' AND NOT v.hidden"


@dataclass(frozen=True)
class SearchQuery:
    q: str | None
    game_version: str | None
    loader: str | None
    limit: int
    offset: int


_SEARCH = f"""
WITH query AS (
    SELECT websearch_to_tsquery('english', $1) || websearch_to_tsquery('simple', $1)
           || websearch_to_tsquery('russian', $1) AS tsq
)
SELECT m.slug, m.name, m.summary, m.loaders, m.game_versions, m.latest_version,
       m.last_published_at AS updated_at, m.downloads, m.categories, m.authors,
       count(*) OVER () AS total
FROM mods m, query
WHERE m.listed
  AND ($1::text IS NULL OR m.search_vector @@ query.tsq)
  AND ($2::text IS NULL OR m.game_versions @> ARRAY[$2::text])
  AND ($3::text IS NULL OR m.loaders @> ARRAY[$3::text])
  -- Facets must hold on one file: a mod with forge on 1.19 and fabric on 1.20 is no match
  -- for (1.20, forge). The roll-up arrays above only pre-filter through the GIN index.
  AND (($2::text IS NULL AND $3::text IS NULL) OR EXISTS (
        SELECT 1 FROM mod_versions v JOIN version_files f ON f.version_id = v.id
        WHERE v.mod_id = m.id AND {PUBLIC_VERSION}
          AND ($2::text IS NULL OR f.game_versions @> ARRAY[$2::text])
          AND ($3::text IS NULL OR f.loaders @> ARRAY[$3::text])))
ORDER BY CASE WHEN $1::text IS NULL THEN 0 ELSE ts_rank(m.search_vector, query.tsq) END DESC,
         m.last_published_at DESC NULLS LAST, m.slug
LIMIT $4 OFFSET $5
"""


async def search(conn: asyncpg.Connection, sq: SearchQuery) -> tuple[list[asyncpg.Record], int]:
    rows = await conn.fetch(_SEARCH, sq.q, sq.game_version, sq.loader, sq.limit, sq.offset)
    total = rows[0]["total"] if rows else 0
    if not rows and sq.offset:
        # Past the end: the window count is gone, so count separately for an honest total.
        total = await conn.fetchval(
            f"SELECT count(*) FROM ({_SEARCH.replace('LIMIT $4 OFFSET $5', '')}) s",
            sq.q, sq.game_version, sq.loader,
        )
    return rows, total


async def mod_by_slug(conn: asyncpg.Connection, slug: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        """SELECT m.id, m.slug, m.name, m.summary, m.description, m.authors, m.licenses, m.links,
                  m.categories, m.environment, m.loaders, m.game_versions, m.latest_version,
                  m.downloads, m.repo_full_name, m.created_at, m.last_published_at AS updated_at,
                  (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
                  EXISTS (SELECT 1 FROM mod_icons i WHERE i.mod_id = m.id) AS has_icon
           FROM mods m WHERE m.slug = $1 AND m.listed""",
        slug,
    )


async def versions_of(conn: asyncpg.Connection, mod_id) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""SELECT v.id, v.version_number, v.version_type, v.name, v.changelog, v.loaders,
                   v.game_versions, v.published_at,
                   COALESCE(json_agg(json_build_object(
                       'filename', f.filename, 'url', f.url, 'size', f.size, 'primary', f.is_primary,
                       'loaders', f.loaders, 'game_versions', f.game_versions,
                       'hashes', json_build_object('sha1', f.sha1, 'sha256', f.sha256, 'sha512', f.sha512))
                       ORDER BY f.is_primary DESC, f.filename)
                     FILTER (WHERE f.id IS NOT NULL), '[]') AS files
            FROM mod_versions v LEFT JOIN version_files f ON f.version_id = v.id
            WHERE v.mod_id = $1 AND {PUBLIC_VERSION}
            GROUP BY v.id
            ORDER BY v.published_at DESC NULLS LAST, v.created_at DESC""",
        mod_id,
    )


async def icon(conn: asyncpg.Connection, slug: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        """SELECT i.content_type, i.data, i.etag FROM mod_icons i JOIN mods m ON m.id = i.mod_id
           WHERE m.slug = $1 AND m.listed""",
        slug,
    )
