"""Reads behind the Modrinth-v2-compatible surface (/v2): the same catalogue as /api/v1, looked up
by the stable public ids of migration 0008 as well as by slug, with the few columns v2 shows
that v1 does not (ids, the owner's GitHub id, dependencies resolved to indexed mods).

Only listed mods and public versions exist here, exactly as in ``catalog``, and of those only
the versions whose every file is hashed (``V2_VERSION``).
"""

from __future__ import annotations

import asyncpg

from .catalog import PUBLIC_VERSION, README_HTML, REPO_URL, VERSION_COLUMNS, VERSION_ORDER, file_match
from .hashes import files_in_public_versions

# A version v2 serves: public (catalog.PUBLIC_VERSION) and every file's sha1 and sha512 known.
# Modrinth's clients index installed files by hash (client models require both); a public
# version's files have none until the scan stage has read them under
# INDEXIUM_PUBLISH_BEFORE_SCAN=true (docs/api.md, "API v2"). /api/v1 shows such a version at
# once, its hashes null.
HASHED = ("NOT EXISTS (SELECT 1 FROM version_files u WHERE u.version_id = v.id"
          " AND (u.sha1 IS NULL OR u.sha512 IS NULL))")
V2_VERSION = f"{PUBLIC_VERSION} AND {HASHED}"

# Manifest ids that name the platform, not a mod: never a dependency worth listing.
PLATFORM_IDS = ("minecraft", "java", "fabricloader", "fabric-loader", "quilt_loader", "forge", "neoforge",
                "liteloader", "mcp", "fml")

# A modpack's file (pack_files pf) as the public version rv of the listed project rm that holds
# it: the same sha512 in rv's files (rf), published by rm's owner (content_owners), so a re-upload
# of another owner's jar does not count. One resolution for /v2's embedded dependencies and the
# site's pack and mod pages (site.pack_contents, site.packs_including).
PACK_FILE_PROJECT = """JOIN version_files rf ON rf.sha512 = pf.sha512
               JOIN mod_versions rv ON rv.id = rf.version_id AND rv.status = 'public' AND NOT rv.hidden
               JOIN mods rm ON rm.id = rv.mod_id AND rm.listed AND NOT rm.hidden
                            AND EXISTS (SELECT 1 FROM content_owners own
                                        WHERE own.sha256 = rf.sha256 AND own.mod_id = rv.mod_id)"""

# A version as v2 shows it: the v1 columns plus ids and its dependencies. Dependencies are the
# files' declared ones (manifest mod ids) resolved to the listed project that holds the id
# (``indexium_project_for``, migration 0015: the holder wins over any fork or re-upload of
# another owner), the jar-in-jar files of the version (embedded), and a modpack's files
# (pack_files, 0023) resolved by sha512 to a public version of another listed project whose
# owner published those bytes (embedded, with the version's id): resolved when read, so a mod
# indexed after the pack resolves too.
V2_VERSION_COLUMNS = VERSION_COLUMNS + f""",
       v.public_id, m.public_id AS project_public_id, m.author_github_id, m.environment,
       COALESCE(v.published_at, v.created_at) AS date_published,
       COALESCE((
           SELECT json_agg(json_build_object('project_id', d.project_id, 'file_name', d.file_name,
                                             'kind', d.kind, 'version_id', d.version_id)
                           ORDER BY d.kind, d.project_id, d.file_name)
           FROM ((
               SELECT DISTINCT ON (dm.public_id) dm.public_id AS project_id, NULL::text AS file_name,
                      dep ->> 'kind' AS kind, NULL::text AS version_id
               FROM version_files df
               CROSS JOIN jsonb_array_elements(df.manifests) rec
               CROSS JOIN jsonb_array_elements(COALESCE(rec -> 'dependencies', '[]')) dep
               JOIN mods dm ON dm.id = indexium_project_for(dep ->> 'mod_id', rec ->> 'loader') AND dm.id <> m.id
               WHERE df.version_id = v.id AND NOT (dep ->> 'mod_id' = ANY('{{{','.join(PLATFORM_IDS)}}}'::text[]))
               ORDER BY dm.public_id, CASE dep ->> 'kind' WHEN 'required' THEN 0 WHEN 'embedded' THEN 1
                                                         WHEN 'optional' THEN 2 ELSE 3 END)
               UNION ALL
               (SELECT DISTINCT NULL, regexp_replace(nested, '^.*/', ''), 'embedded', NULL::text
               FROM version_files df
               CROSS JOIN jsonb_array_elements(df.manifests) rec
               CROSS JOIN jsonb_array_elements_text(COALESCE(rec -> 'nested_jars', '[]')) nested
               WHERE df.version_id = v.id)
               UNION ALL
               (SELECT DISTINCT ON (rv.id) rm.public_id, NULL::text, 'embedded', rv.public_id
               FROM version_files df
               JOIN pack_files pf ON pf.file_id = df.id
               {PACK_FILE_PROJECT}
               WHERE df.version_id = v.id AND rm.id <> m.id
               ORDER BY rv.id)
           ) d), '[]') AS dependencies"""

_VERSIONS_FROM = "FROM mod_versions v JOIN mods m ON m.id = v.mod_id"

# A project: the card's columns plus ids, the owner and the public versions' ids.
_PROJECT_COLUMNS = """m.id, m.public_id, m.team_id, m.slug, m.name, m.summary, m.description, m.authors,
       m.licenses, m.links, m.categories, m.environment, m.loaders, m.game_versions, m.downloads, m.project_type,
       m.repo_full_name, {repo_url}, {readme_html}, m.created_at, m.last_published_at AS updated_at, m.author_github_id,
       (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
       EXISTS (SELECT 1 FROM mod_icons i WHERE i.mod_id = m.id) AS has_icon,
       ARRAY(SELECT v.public_id FROM mod_versions v WHERE v.mod_id = m.id AND {public}
             ORDER BY v.published_at NULLS FIRST, v.created_at) AS version_ids,
       (SELECT v.public_id FROM mod_versions v WHERE v.mod_id = m.id AND {public}
             AND v.version_number = m.latest_version) AS latest_version_id""".format(public=V2_VERSION,
                                                                             repo_url=REPO_URL,
                                                                             readme_html=README_HTML)


def _key_condition(param: str) -> str:
    """A path segment is a public id or a slug: ids always hold an upper-case letter, slugs never."""
    return f"(m.public_id = {param} OR m.slug = {param})"


async def projects(conn: asyncpg.Connection, keys: list[str]) -> list[asyncpg.Record]:
    """Listed mods by id or slug, in the order asked (unknown keys absent, duplicates once)."""
    return await conn.fetch(
        f"""SELECT * FROM (
                SELECT DISTINCT ON (m.id) {_PROJECT_COLUMNS}, k.i
                FROM unnest($1::text[]) WITH ORDINALITY AS k(key, i)
                JOIN mods m ON (m.public_id = k.key OR m.slug = k.key) AND m.listed
                ORDER BY m.id, k.i) p
            ORDER BY p.i""",
        keys,
    )


async def project(conn: asyncpg.Connection, key: str) -> asyncpg.Record | None:
    return await conn.fetchrow(f"SELECT {_PROJECT_COLUMNS} FROM mods m WHERE {_key_condition('$1')} AND m.listed", key)


async def hit_extras(conn: asyncpg.Connection, slugs: list[str]) -> dict[str, asyncpg.Record]:
    """What a v2 search hit shows beyond sqlpath.search's row: ids, owner, licenses."""
    rows = await conn.fetch(
        f"""SELECT m.slug, m.public_id, m.licenses, m.author_github_id,
                   (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
                   (SELECT v.public_id FROM mod_versions v WHERE v.mod_id = m.id AND {V2_VERSION}
                    AND v.version_number = m.latest_version) AS latest_version_id
            FROM mods m WHERE m.slug = ANY($1::text[])""",
        slugs,
    )
    return {r["slug"]: r for r in rows}


async def versions_of(
    conn: asyncpg.Connection, mod_id, *, game_versions: list[str], loaders: list[str],
) -> list[asyncpg.Record]:
    """Public versions, newest first; the two filters must hold on one file."""
    args: list = [mod_id]

    def p(value) -> str:
        args.append(value)
        return f"${len(args)}::text[]"

    where = ["v.mod_id = $1", V2_VERSION]
    if game_versions or loaders:
        where.append(file_match(p(game_versions) if game_versions else None, p(loaders) if loaders else None))
    return await conn.fetch(
        f"SELECT {V2_VERSION_COLUMNS} {_VERSIONS_FROM} WHERE {' AND '.join(where)} ORDER BY {VERSION_ORDER}",
        *args,
    )


async def versions_by_ids(conn: asyncpg.Connection, ids: list[str]) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"""SELECT {V2_VERSION_COLUMNS} {_VERSIONS_FROM}
            WHERE v.public_id = ANY($1::text[]) AND {V2_VERSION} AND m.listed
            ORDER BY {VERSION_ORDER}""",
        ids,
    )


async def version_of_project(conn: asyncpg.Connection, mod_id, key: str) -> asyncpg.Record | None:
    """One public version of the mod by id or by number (the release tag); an id wins."""
    return await conn.fetchrow(
        f"""SELECT {V2_VERSION_COLUMNS} {_VERSIONS_FROM}
            WHERE v.mod_id = $1 AND (v.public_id = $2 OR v.version_number = $2) AND {V2_VERSION}
            ORDER BY v.public_id = $2 DESC LIMIT 1""",
        mod_id, key,
    )


async def versions_by_hashes(
    conn: asyncpg.Connection, algorithm: str, hashes: list[str], *, every: bool = False
) -> list[asyncpg.Record]:
    """(hash, version) rows for files with these hashes in public versions, newest version first
    per hash; ``every`` keeps every version holding the file, otherwise only the newest."""
    return await files_in_public_versions(conn, algorithm, hashes, columns=V2_VERSION_COLUMNS, every=every,
                                          version=V2_VERSION)


async def dependencies(conn: asyncpg.Connection, mod_id) -> tuple[list[asyncpg.Record], list[asyncpg.Record]]:
    """The listed mods the mod's public versions declare as dependencies (by manifest id), and the
    newest public version of each: manifests name ranges, never one version, so the newest stands in."""
    ids = await conn.fetchval(
        f"""SELECT COALESCE(array_agg(DISTINCT dm.public_id), '{{}}')
            FROM mod_versions v
            JOIN version_files f ON f.version_id = v.id
            CROSS JOIN jsonb_array_elements(f.manifests) rec
            CROSS JOIN jsonb_array_elements(COALESCE(rec -> 'dependencies', '[]')) dep
            JOIN mods dm ON dm.id = indexium_project_for(dep ->> 'mod_id', rec ->> 'loader') AND dm.id <> v.mod_id
            WHERE v.mod_id = $1 AND {V2_VERSION} AND dep ->> 'kind' <> 'incompatible'""",
        mod_id,
    )
    if not ids:
        return [], []
    found = await projects(conn, sorted(ids))
    versions = await conn.fetch(
        f"""SELECT {V2_VERSION_COLUMNS}
            FROM mods dm CROSS JOIN LATERAL (
                SELECT v.id FROM mod_versions v WHERE v.mod_id = dm.id AND {V2_VERSION}
                ORDER BY {VERSION_ORDER} LIMIT 1) best
            JOIN mod_versions v ON v.id = best.id JOIN mods m ON m.id = v.mod_id
            WHERE dm.public_id = ANY($1::text[])
            ORDER BY m.slug""",
        sorted(ids),
    )
    return sorted(found, key=lambda r: r["slug"]), versions


async def forge_versions(conn: asyncpg.Connection, mod_id, loaders: list[str]) -> list[asyncpg.Record]:
    """Per public file of the loaders asked: its game versions, the mod's own version as the
    manifest declares it, the version's type and changelog; newest version first. Forge's
    update checker reads no hashes: a public version is promoted before its scan too. A file
    whose bytes another project owns (a re-upload) never promotes anything."""
    return await conn.fetch(
        f"""SELECT v.version_number, v.version_type, v.changelog, f.game_versions, f.manifest_version
            FROM mod_versions v JOIN version_files f ON f.version_id = v.id
            WHERE v.mod_id = $1 AND {PUBLIC_VERSION} AND f.loaders && $2::text[]
              AND f.pack IS NULL  -- mods only: a modpack's loader is no update for the mod (0023)
              AND NOT EXISTS (SELECT 1 FROM content_owners own
                              WHERE own.sha256 = f.content_sha256 AND own.mod_id <> v.mod_id)
            ORDER BY {VERSION_ORDER}, f.is_primary DESC, f.filename""",
        mod_id, loaders,
    )
