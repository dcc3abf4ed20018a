"""The web site's own tables (sessions, sign-ins in progress, per-user rate limits) and the
read queries its pages need beyond the public catalogue (dependencies, an author's view of
their repositories and versions, the review queue)."""

from __future__ import annotations

import uuid
from datetime import datetime

import asyncpg

from indexium_jar import formats

from .catalog import PUBLIC_VERSION, VERSION_ORDER
from .modrinth import PACK_FILE_PROJECT

# A mod page lists at most this many of the indexed modpacks that include it, newest first.
PACKS_INCLUDING_MAX = 20

# ---- sessions ---------------------------------------------------------------------------------

async def create_session(conn: asyncpg.Connection, *, id_hash: bytes, github_user_id: int, login: str,
                         name: str | None, avatar_url: str | None, csrf_token: str, installations: list,
                         repositories: list, expires_at: datetime) -> None:
    await conn.execute(
        """INSERT INTO site_sessions (id_hash, github_user_id, login, name, avatar_url, csrf_token,
                                      installations, repositories, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)""",
        id_hash, github_user_id, login, name, avatar_url, csrf_token,
        installations, repositories, expires_at,  # (the pool's codec encodes jsonb)
    )


async def get_session(conn: asyncpg.Connection, id_hash: bytes, *, idle_s: float,
                      seen_every_s: float) -> asyncpg.Record | None:
    """The live session with this id: not expired, and used within ``idle_s`` (``last_seen_at``).
    Its ``last_seen_at`` is moved to now only when it is ``seen_every_s`` old or older, so a
    browser's many requests cost one write (a row version, WAL) per that interval, not one each;
    a session may so stay ``seen_every_s`` short of ``idle_s`` after its last use."""
    return await conn.fetchrow(
        """WITH s AS (
               SELECT id_hash, github_user_id, login, name, avatar_url, csrf_token, installations, repositories,
                      created_at, expires_at, last_seen_at
               FROM site_sessions
               WHERE id_hash = $1 AND expires_at > now() AND last_seen_at > now() - make_interval(secs => $2)),
           seen AS (
               UPDATE site_sessions t SET last_seen_at = now() FROM s
               WHERE t.id_hash = s.id_hash AND s.last_seen_at <= now() - make_interval(secs => $3))
           SELECT github_user_id, login, name, avatar_url, csrf_token, installations, repositories,
                  created_at, expires_at
           FROM s""",
        id_hash, idle_s, seen_every_s,
    )


async def delete_session(conn: asyncpg.Connection, id_hash: bytes) -> bool:
    return await conn.fetchval("DELETE FROM site_sessions WHERE id_hash = $1 RETURNING true", id_hash) or False


async def purge_expired(conn: asyncpg.Connection, *, idle_s: float) -> int:
    """Drop expired sessions and those unused for ``idle_s``, sign-ins never finished and
    rate-limit rows older than a day."""
    n = 0
    for sql, args in (
            ("DELETE FROM site_sessions WHERE expires_at <= now() OR last_seen_at <= now() - make_interval(secs => $1)",
             (idle_s,)),
            ("DELETE FROM site_oauth_states WHERE expires_at <= now()", ()),
            ("DELETE FROM site_user_actions WHERE created_at < now() - interval '1 day'", ())):
        n += int((await conn.execute(sql, *args)).split()[-1])
    return n


# ---- OAuth states -----------------------------------------------------------------------------

async def put_state(conn: asyncpg.Connection, state_hash: bytes, browser_hash: bytes, expires_at: datetime, *,
                    max_live: int) -> bool:
    """Store a sign-in in progress, unless ``max_live`` unexpired ones are stored already (the
    table's bound: anyone can start a sign-in). Counting stops at the bound, on the expiry index."""
    status = await conn.execute(
        """INSERT INTO site_oauth_states (state_hash, browser_hash, expires_at)
           SELECT $1, $2, $3
           WHERE (SELECT count(*) FROM (SELECT 1 FROM site_oauth_states WHERE expires_at > now() LIMIT $4) live) < $4""",
        state_hash, browser_hash, expires_at, max_live,
    )
    return status.endswith(" 1")


async def take_state(conn: asyncpg.Connection, state_hash: bytes, browser_hash: bytes | None) -> bool:
    """Use a state once: it is deleted whoever presents it, and counts only for the browser it
    was handed to and before it expires."""
    row = await conn.fetchrow(
        "DELETE FROM site_oauth_states WHERE state_hash = $1 RETURNING browser_hash, expires_at > now() AS live",
        state_hash,
    )
    return row is not None and row["live"] and browser_hash is not None and bytes(row["browser_hash"]) == browser_hash


# ---- per-user rate limit ----------------------------------------------------------------------

async def take_action(conn: asyncpg.Connection, github_user_id: int, action: str, subject: int | None,
                      limit: int, window_s: float) -> bool:
    """Record one action unless the user already made ``limit`` of them in the window."""
    async with conn.transaction():
        # One user's concurrent requests queue here, so two cannot both see room for one more.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, $2))", action, github_user_id)
        done = await conn.fetchval(
            """SELECT count(*) FROM site_user_actions WHERE github_user_id = $1 AND action = $2
               AND created_at > now() - make_interval(secs => $3)""",
            github_user_id, action, window_s,
        )
        if done >= limit:
            return False
        await conn.execute(
            "INSERT INTO site_user_actions (github_user_id, action, subject) VALUES ($1, $2, $3)",
            github_user_id, action, subject,
        )
        return True


# ---- mod page ---------------------------------------------------------------------------------

# What a mod needs of the game and its loader, not other mods: never listed as dependencies.
PLATFORM_IDS = ("minecraft", "java", "fabricloader", "fabric-loader", "forge", "neoforge", "quilt_loader",
                "quilt_base", "fml", "javafml", "lowcodefml")


async def pack_contents(conn: asyncpg.Connection, mod_id: uuid.UUID) -> list[asyncpg.Record]:
    """The files of a modpack's latest public version (pack_files), by path, each with the indexed
    project holding it (slug and name, or NULL): resolved as /v2's embedded dependencies are
    (modrinth.PACK_FILE_PROJECT). Empty for a project that is not a pack."""
    return await conn.fetch(
        f"""SELECT pf.path, r.slug, r.name
            FROM mods m
            JOIN mod_versions v ON v.mod_id = m.id AND v.version_number = m.latest_version AND {PUBLIC_VERSION}
            JOIN version_files df ON df.version_id = v.id
            JOIN pack_files pf ON pf.file_id = df.id
            LEFT JOIN LATERAL (SELECT rm.slug, rm.name FROM (SELECT 1) one {PACK_FILE_PROJECT}
                               WHERE rm.id <> m.id ORDER BY rm.slug LIMIT 1) r ON true
            WHERE m.id = $1
            ORDER BY pf.path, r.slug""",
        mod_id,
    )


async def packs_including(conn: asyncpg.Connection, mod_id: uuid.UUID,
                          limit: int = PACKS_INCLUDING_MAX) -> list[asyncpg.Record]:
    """The listed modpacks whose latest public version holds one of this project's public files
    (the same resolution as pack_contents), newest first, at most ``limit``."""
    return await conn.fetch(
        f"""SELECT pm.slug, pm.name
            FROM mods pm
            WHERE pm.listed AND NOT pm.hidden AND pm.project_type = $2 AND pm.id <> $1 AND pm.id IN (
                SELECT v.mod_id
                FROM pack_files pf
                {PACK_FILE_PROJECT}
                JOIN version_files df ON df.id = pf.file_id
                JOIN mod_versions v ON v.id = df.version_id AND {PUBLIC_VERSION}
                JOIN mods p ON p.id = v.mod_id AND v.version_number = p.latest_version
                WHERE rm.id = $1)
            ORDER BY pm.last_published_at DESC NULLS LAST, pm.slug
            LIMIT $3""",
        mod_id, formats.MODPACK, limit,
    )


# At most this many related projects are named for one event; more, and everything is invalidated.
RELATED_MAX = 200


async def related_slugs(conn: asyncpg.Connection, slug: str, limit: int = RELATED_MAX) -> list[str]:
    """The projects whose page lists this one or whose page this one lists, for cache invalidation:
    the modpacks with a version that lists a file of this project's (``packs_including``'s side),
    and the projects holding a file one of this project's modpack versions lists (``pack_contents``'s
    side), by sha512, whatever the versions' state (a version hidden or held changes both pages
    too): a superset of what the pages show. At most ``limit``."""
    rows = await conn.fetch(
        """WITH me AS (SELECT id FROM mods WHERE slug = $1),
                mine AS (SELECT f.id, f.sha512 FROM me JOIN mod_versions v ON v.mod_id = me.id
                         JOIN version_files f ON f.version_id = v.id)
           SELECT m.slug
           FROM (SELECT pv.mod_id FROM mine
                 JOIN pack_files pf ON pf.sha512 = mine.sha512
                 JOIN version_files df ON df.id = pf.file_id
                 JOIN mod_versions pv ON pv.id = df.version_id
                 UNION
                 SELECT rv.mod_id FROM mine
                 JOIN pack_files pf ON pf.file_id = mine.id
                 JOIN version_files rf ON rf.sha512 = pf.sha512
                 JOIN mod_versions rv ON rv.id = rf.version_id) r
           JOIN mods m ON m.id = r.mod_id
           WHERE m.id <> (SELECT id FROM me)
           ORDER BY m.slug
           LIMIT $2""",
        slug, limit,
    )
    return [r["slug"] for r in rows]


async def dependencies(conn: asyncpg.Connection, mod_id: uuid.UUID) -> list[asyncpg.Record]:
    """Dependencies declared by the newest public version's manifests, each with the loader whose
    manifest declared it (its range's dialect), whether the loader only warns, and the slug and
    name of the listed project that holds the mod id it names (``indexium_project_for``: the
    original, never another owner's fork or re-upload while the original is listed; None when it
    is not indexed). Required ones first."""
    return await conn.fetch(
        f"""WITH latest AS (
                SELECT v.id FROM mod_versions v
                WHERE v.mod_id = $1 AND v.status = 'public' AND NOT v.hidden
                ORDER BY {VERSION_ORDER} LIMIT 1),
            deps AS (
                SELECT DISTINCT d->>'mod_id' AS mod_id, COALESCE(d->>'kind', 'required') AS kind,
                       d->>'version_range' AS version_range, r->>'loader' AS loader,
                       COALESCE((d->>'warn_only')::boolean, false) AS warn_only
                FROM version_files f
                CROSS JOIN LATERAL jsonb_array_elements(f.manifests) AS r
                CROSS JOIN LATERAL jsonb_array_elements(COALESCE(r->'dependencies', '[]'::jsonb)) AS d
                WHERE f.version_id = (SELECT id FROM latest))
            SELECT DISTINCT ON (deps.kind = 'required', deps.mod_id, deps.kind, deps.version_range)
                   deps.mod_id, deps.kind, deps.version_range, deps.loader, deps.warn_only, x.slug, x.name
            FROM deps
            LEFT JOIN mods x ON x.id = indexium_project_for(deps.mod_id, deps.loader) AND x.id <> $1
            WHERE deps.mod_id <> ALL($2::text[])
            ORDER BY deps.kind = 'required' DESC, deps.mod_id, deps.kind, deps.version_range, x.slug NULLS LAST""",
        mod_id, list(PLATFORM_IDS),
    )


# ---- dashboard --------------------------------------------------------------------------------

async def repositories_status(conn: asyncpg.Connection, repo_ids: list[int]) -> list[asyncpg.Record]:
    """For each repository id: what the GitHub role recorded (if anything) and its mod (if any)."""
    return await conn.fetch(
        """SELECT ids.id AS github_repo_id,
                  g.state, g.skip_reason, g.private, g.archived, g.deleted, g.removed, g.manifest_source,
                  g.backfill_state, g.reconciled_at,
                  m.id AS mod_id, m.slug, m.name, m.listed, m.hidden, m.hidden_reason
           FROM unnest($1::bigint[]) AS ids(id)
           LEFT JOIN github_repositories g ON g.github_repo_id = ids.id
           LEFT JOIN mods m ON m.github_repo_id = ids.id""",
        repo_ids,
    )


async def versions_for_author(conn: asyncpg.Connection, mod_ids: list[uuid.UUID]) -> list[asyncpg.Record]:
    """Every version of these mods, whatever its state, newest first, with the findings that
    held it back and the last decision on it."""
    return await conn.fetch(
        f"""SELECT v.id, v.mod_id, v.version_number, v.name, v.status, v.hidden, v.hidden_reason,
                   v.published_at, v.updated_at,
                   COALESCE((SELECT json_agg(json_build_object(
                        'filename', f.filename, 'rule', s.rule, 'severity', s.severity,
                        'location', s.location, 'entry_path', s.entry_path, 'class_name', s.class_name,
                        'method', s.method, 'detail', s.detail) ORDER BY s.severity DESC, s.id)
                     FROM scan_findings s JOIN version_files f ON f.id = s.file_id
                     WHERE s.version_id = v.id), '[]') AS findings,
                   COALESCE((SELECT json_agg(json_build_object('filename', f.filename,
                        'scan_status', f.scan_status, 'scan_reason', f.scan_reason) ORDER BY f.filename)
                     FROM version_files f WHERE f.version_id = v.id), '[]') AS files,
                   (SELECT json_build_object('action', d.action, 'actor', d.actor, 'reason', d.reason,
                                             'at', d.created_at)
                    FROM quarantine_decisions d WHERE d.version_id = v.id
                    ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS decision
            FROM mod_versions v
            WHERE v.mod_id = ANY($1::uuid[])
            ORDER BY v.mod_id, {VERSION_ORDER}""",
        mod_ids,
    )


async def open_dead_letters(conn: asyncpg.Connection, repo_ids: list[int], per_repo: int) -> list[asyncpg.Record]:
    """The newest ``per_repo`` open dead letters of each of these repositories, with what the
    dashboard shows of each (the release tag, category, error, when) and ``open_total``, how
    many that repository has open in all. Never the payload: a message is up to 1 MiB."""
    return await conn.fetch(
        """SELECT github_repo_id, tag_name, category, error, created_at, open_total FROM (
               SELECT github_repo_id, tag_name, category, error, created_at,
                      row_number() OVER w AS n, count(*) OVER (PARTITION BY github_repo_id) AS open_total
               FROM dead_letters
               WHERE replayed_at IS NULL AND github_repo_id = ANY($1::bigint[])
               WINDOW w AS (PARTITION BY github_repo_id ORDER BY created_at DESC, id DESC)) d
           WHERE n <= $2
           ORDER BY github_repo_id, created_at DESC""",
        repo_ids, per_repo,
    )


# ---- review queue -----------------------------------------------------------------------------

async def review_queue(conn: asyncpg.Connection, limit: int = 100) -> list[asyncpg.Record]:
    """Quarantined versions, oldest first, with their files and findings."""
    return await conn.fetch(
        """SELECT v.id, m.slug, m.name AS mod_name, m.repo_full_name, v.version_number, v.tag_name,
                  v.updated_at, v.published_at,
                  COALESCE((SELECT json_agg(json_build_object('filename', f.filename, 'url', f.url,
                        'size', f.size, 'sha256', f.sha256, 'scan_status', f.scan_status,
                        'scan_reason', f.scan_reason) ORDER BY f.is_primary DESC, f.filename)
                     FROM version_files f WHERE f.version_id = v.id), '[]') AS files,
                  COALESCE((SELECT json_agg(json_build_object(
                        'filename', f.filename, 'rule', s.rule, 'severity', s.severity,
                        'location', s.location, 'entry_path', s.entry_path, 'class_name', s.class_name,
                        'method', s.method, 'detail', s.detail) ORDER BY s.severity DESC, s.id)
                     FROM scan_findings s JOIN version_files f ON f.id = s.file_id
                     WHERE s.version_id = v.id), '[]') AS findings
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id
           WHERE v.status = 'quarantined'
           ORDER BY v.updated_at, v.id LIMIT $1""",
        limit,
    )
