"""Public read queries for the API: a mod's card, its versions, its icon (only listed mods and
public, unhidden versions). Search's SQL is ``indexium_search.sqlpath`` (docs/search.md).
"""

from __future__ import annotations

import asyncpg

from indexium_search.sqlpath import ACTIVE_SERVERS_DAY, Sql

# A version launchers may see: scanned clean (or published before scan), not hidden.
PUBLIC_VERSION = "v.status = 'public' AND NOT v.hidden"

VERSION_TYPES = ("release", "beta", "alpha")


# Where a mod's repository page is, on every surface (the site's links, /v2's source_url and
# issues_url): the html_url GitHub gave (mods.repo_url), else github.com's page of its name.
REPO_URL = "COALESCE(m.repo_url, 'https://github.com/' || m.repo_full_name) AS repo_url"


# The repository's rendered README (repository_readmes, 0024: sanitized HTML, at most ~64 KiB),
# NULL when never read; the default branch release notes' relative links resolve at.
README_HTML = """(SELECT r.html FROM repository_readmes r WHERE r.github_repo_id = m.github_repo_id) AS readme_html"""
DEFAULT_BRANCH = """COALESCE((SELECT g.default_branch FROM github_repositories g
                              WHERE g.github_repo_id = m.github_repo_id), 'main') AS default_branch"""


async def mod_by_slug(conn: asyncpg.Connection, slug: str, *, readme: bool = False) -> asyncpg.Record | None:
    """The mod's card; ``readme``: with ``readme_html`` and ``default_branch`` (the mod page and
    ``/api/v1/mods/{slug}``; not the version routes, which need only the id)."""
    extra = f"{README_HTML}, {DEFAULT_BRANCH}," if readme else ""
    return await conn.fetchrow(
        f"""SELECT {extra} m.id, m.slug, m.name, m.summary, m.description, m.authors, m.licenses, m.links,
                  m.categories, m.tags, m.environment, m.loaders, m.project_type, m.game_versions, m.latest_version,
                  m.downloads, m.repo_full_name, {REPO_URL}, m.created_at, m.last_published_at AS updated_at, m.fork,
                  (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
                  EXISTS (SELECT 1 FROM mod_icons i WHERE i.mod_id = m.id) AS has_icon,
                  COALESCE((SELECT ds.servers FROM mod_daily_stats ds
                            WHERE ds.mod_id = m.id AND ds.day = {ACTIVE_SERVERS_DAY}), 0) AS active_servers,
                  -- the latest version's own version, as its primary file's manifest declares it
                  (SELECT f.manifest_version FROM mod_versions v JOIN version_files f ON f.version_id = v.id
                   WHERE v.mod_id = m.id AND v.version_number = m.latest_version AND {PUBLIC_VERSION}
                   ORDER BY f.is_primary DESC, f.filename LIMIT 1) AS latest_mod_version
           FROM mods m WHERE m.slug = $1 AND m.listed""",
        slug,
    )


# One version as the API shows it, files included (primary first). Callers add FROM/WHERE
# over "mod_versions v JOIN mods m ON m.id = v.mod_id" and keep PUBLIC_VERSION in it.
VERSION_COLUMNS = """v.id, m.slug AS mod_slug, v.version_number, v.version_type, v.name, v.changelog,
       v.loaders, v.game_versions, v.game_versions_inferred, v.published_at,
       COALESCE((SELECT sum(f.download_count) FROM version_files f WHERE f.version_id = v.id), 0)::bigint
           AS downloads,
       COALESCE((SELECT json_agg(json_build_object(
                    'filename', f.filename, 'url', f.url, 'size', f.size, 'primary', f.is_primary,
                    'loaders', f.loaders, 'game_versions', f.game_versions,
                    'game_versions_inferred', f.game_versions_inferred,
                    'mod_id', f.manifest_mod_id, 'mod_version', f.manifest_version,
                    'hashes', json_build_object('sha1', f.sha1, 'sha256', f.sha256, 'sha512', f.sha512))
                    ORDER BY f.is_primary DESC, f.filename)
                 FROM version_files f WHERE f.version_id = v.id), '[]') AS files"""

# Newest first: version order (indexium_version_key), then publish time.
VERSION_ORDER = "v.version_sort DESC, v.published_at DESC NULLS LAST, v.created_at DESC"


def file_match(s_game_versions: str | None, s_loaders: str | None) -> str:
    """A version has one file supporting one of the game versions AND one of the loaders."""
    conds = ["f.version_id = v.id"]
    if s_game_versions:
        conds.append(f"f.game_versions && {s_game_versions}")
    if s_loaders:
        conds.append(f"f.loaders && {s_loaders}")
    return f"EXISTS (SELECT 1 FROM version_files f WHERE {' AND '.join(conds)})"


async def versions_of(
    conn: asyncpg.Connection, mod_id, *, game_versions: tuple[str, ...] = (), loaders: tuple[str, ...] = (),
    version_types: tuple[str, ...] = (),
) -> list[asyncpg.Record]:
    s = Sql()
    where = [f"v.mod_id = {s.p(mod_id)}", PUBLIC_VERSION]
    if game_versions or loaders:
        where.append(file_match(s.p(list(game_versions), "::text[]") if game_versions else None,
                                s.p(list(loaders), "::text[]") if loaders else None))
    if version_types:
        where.append(f"v.version_type = ANY({s.p(list(version_types), '::text[]')})")
    return await conn.fetch(
        f"""SELECT {VERSION_COLUMNS}
            FROM mod_versions v JOIN mods m ON m.id = v.mod_id
            WHERE {' AND '.join(where)}
            ORDER BY {VERSION_ORDER}""",
        *s.args,
    )


async def version_by_number(conn: asyncpg.Connection, mod_id, version_number: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        f"""SELECT {VERSION_COLUMNS}
            FROM mod_versions v JOIN mods m ON m.id = v.mod_id
            WHERE v.mod_id = $1 AND v.version_number = $2 AND {PUBLIC_VERSION}""",
        mod_id, version_number,
    )


async def icon(conn: asyncpg.Connection, slug: str) -> asyncpg.Record | None:
    return await conn.fetchrow(
        """SELECT i.content_type, i.data, i.etag FROM mod_icons i JOIN mods m ON m.id = i.mod_id
           WHERE m.slug = $1 AND m.listed""",
        slug,
    )
