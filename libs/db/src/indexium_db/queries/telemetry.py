"""Telemetry SQL: ping partitions, the writer's batch insert, daily aggregation, API reads.

Days are UTC days (``indexium_contracts.telemetry.utc_day`` / ``day_bounds``).
Partition DDL and aggregation run under PostgreSQL advisory locks so any number of
replicas may call them; every write here is idempotent.
"""

from __future__ import annotations

import re
import uuid
from datetime import date, datetime, timedelta

import asyncpg

from indexium_contracts.telemetry import day_bounds
from indexium_search.sqlpath import ACTIVE_SERVERS_EXPR, ACTIVE_SERVERS_JOIN

PARENT = "mod_telemetry_pings"
_PARTITION_RE = re.compile(rf"^{PARENT}_p(\d{{8}})$")
# Advisory lock keys: any constants, the same for every replica (0x1D3E_1A00 is migrations').
AGGREGATOR_LOCK = 0x1D3E_7E01
PARTITION_LOCK = 0x1D3E_7E02
# Breakdown values kept per dimension; the rest are summed under OTHER so the JSON stays small.
BREAKDOWN_TOP = 25
OTHER = "(other)"
UNKNOWN = "(unknown)"


# ---- partitions ---------------------------------------------------------------------------

def partition_name(day: date) -> str:
    return f"{PARENT}_p{day:%Y%m%d}"


async def list_partitions(conn: asyncpg.Connection) -> list[date]:
    rows = await conn.fetch(
        """SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
           WHERE i.inhparent = $1::regclass""", PARENT)
    days = []
    for r in rows:
        m = _PARTITION_RE.match(r["relname"])
        if m:
            days.append(datetime.strptime(m.group(1), "%Y%m%d").date())
    return sorted(days)


async def ensure_partitions(conn: asyncpg.Connection, days: list[date]) -> list[date]:
    """Create the missing day partitions; returns the days created. Safe across replicas."""
    created = []
    async with conn.transaction():
        # Serialize DDL: two replicas racing on CREATE TABLE IF NOT EXISTS can still collide.
        await conn.execute("SELECT pg_advisory_xact_lock($1)", PARTITION_LOCK)
        existing = set(await list_partitions(conn))
        for day in sorted(set(days) - existing):
            start, end = day_bounds(day)
            await conn.execute(
                f"CREATE TABLE {partition_name(day)} PARTITION OF {PARENT} "
                f"FOR VALUES FROM ('{start.isoformat()}') TO ('{end.isoformat()}')")
            created.append(day)
    return created


async def drop_partitions_before(conn: asyncpg.Connection, first_kept: date) -> list[date]:
    """Retention: drop whole day partitions older than ``first_kept`` (cheap, no vacuum debt)."""
    dropped = []
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", PARTITION_LOCK)
        # DROP briefly locks the parent; wait a little for running inserts, never forever.
        await conn.execute("SET LOCAL lock_timeout = '5s'")
        for day in await list_partitions(conn):
            if day < first_kept:
                await conn.execute(f"DROP TABLE {partition_name(day)}")
                dropped.append(day)
        # Their bookkeeping goes too, so a dropped day is never "re-aggregated" to nothing.
        await conn.execute("DELETE FROM telemetry_day_writes WHERE day < $1", first_kept)
    return dropped


# ---- writer -------------------------------------------------------------------------------

# One multi-row INSERT per batch. Rows arrive as one JSON array (uuid[]/text[] columns
# cannot be passed as parallel arrays of arrays); ON CONFLICT makes a redelivery a no-op.
_INSERT_PINGS = f"""
INSERT INTO {PARENT} (received_at, ping_id, server_hash, mod_ids, mod_versions, game_version,
                      loader, java_version, os, arch, core_count, player_count, online_mode)
SELECT r.received_at, r.ping_id, decode(r.server_hash, 'hex'), r.mod_ids, r.mod_versions,
       r.game_version, r.loader, r.java_version, r.os, r.arch, r.core_count, r.player_count,
       r.online_mode
FROM jsonb_to_recordset($1::text::jsonb) AS r(
    received_at timestamptz, ping_id uuid, server_hash text, mod_ids uuid[], mod_versions text[],
    game_version text, loader text, java_version text, os text, arch text, core_count smallint,
    player_count integer, online_mode boolean)
ON CONFLICT DO NOTHING
"""


async def insert_pings(conn: asyncpg.Connection, rows_json: str) -> int:
    """Insert a batch (a JSON array of ping rows); returns how many were new."""
    status = await conn.execute(_INSERT_PINGS, rows_json)
    return int(status.split()[-1])


async def mark_days_written(conn: asyncpg.Connection, days: list[date]) -> None:
    """Same transaction as the insert: tells the aggregator these days changed."""
    await conn.execute(
        """INSERT INTO telemetry_day_writes (day) SELECT unnest($1::date[])
           ON CONFLICT (day) DO UPDATE SET write_version = telemetry_day_writes.write_version + 1,
                                           updated_at = now()""",
        sorted(set(days)),
    )


async def known_mods(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """Mods a ping may name (by slug or id): every mod that is not hidden."""
    return await conn.fetch("SELECT id, slug FROM mods WHERE NOT hidden")


# A ping may name a mod by the id its loader reports (fabric.mod.json "id", mods.toml modId):
# the mod's own manifest id plus every id in the manifests of its files. Several mods may
# claim one id (forks, re-uploads); the owner is, in order, the project holding the id
# (``mod_id_claims``, for any loader), the mod whose manifest id it is, the mod whose slug it
# is, a listed mod, then the mod indexed first, so a newcomer republishing someone else's id
# cannot take that mod's servers.
_MANIFEST_IDS = """
WITH claims AS (
    SELECT m.id, m.slug, m.listed, m.created_at, m.manifest_id, m.manifest_id AS claimed
    FROM mods m WHERE NOT m.hidden AND m.manifest_id IS NOT NULL
    UNION
    SELECT m.id, m.slug, m.listed, m.created_at, m.manifest_id, rec->>'mod_id'
    FROM mods m
    JOIN mod_versions v ON v.mod_id = m.id AND NOT v.hidden
    JOIN version_files f ON f.version_id = v.id
    CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(f.manifests)
                                            WHEN 'array' THEN f.manifests ELSE '[]' END) AS rec
    WHERE NOT m.hidden AND rec->>'mod_id' IS NOT NULL
)
SELECT DISTINCT ON (claimed) claimed AS manifest_id, id
FROM claims
ORDER BY claimed,
         EXISTS (SELECT 1 FROM mod_id_claims c WHERE c.mod_id = claims.id AND c.state = 'holder'
                 AND c.manifest_mod_id = lower(claimed)) DESC,
         (manifest_id = claimed) DESC, (slug = claimed) DESC, listed DESC, created_at, id
"""


async def manifest_ids(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """Manifest id -> the mod it resolves to, one row per id (see _MANIFEST_IDS for the owner)."""
    return await conn.fetch(_MANIFEST_IDS)


async def catalogue_entries(conn: asyncpg.Connection, mod_ids: list[uuid.UUID]) -> list[asyncpg.Record]:
    """The given mods as the catalogue holds them, after a version event named them: ``id``,
    ``slug``, ``hidden``, and ``claims`` (the manifest ids the mod claims, as in _MANIFEST_IDS:
    its own and those of its files of versions that are not hidden; empty for a hidden mod).
    A mod that no longer exists has no row. Index lookups only: the mods' rows and versions."""
    return await conn.fetch(
        """SELECT m.id, m.slug, m.hidden,
                  CASE WHEN m.hidden THEN '{}'::text[] ELSE ARRAY(
                      SELECT m.manifest_id WHERE m.manifest_id IS NOT NULL
                      UNION
                      SELECT rec->>'mod_id'
                      FROM mod_versions v
                      JOIN version_files f ON f.version_id = v.id
                      CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(f.manifests)
                                                              WHEN 'array' THEN f.manifests ELSE '[]' END) AS rec
                      WHERE v.mod_id = m.id AND NOT v.hidden AND rec->>'mod_id' IS NOT NULL) END AS claims
           FROM mods m WHERE m.id = ANY($1::uuid[])""",
        mod_ids,
    )


# ---- aggregation --------------------------------------------------------------------------

async def try_aggregator_lock(conn: asyncpg.Connection) -> bool:
    """Session lock: one aggregator at a time across replicas; freed if the process dies."""
    return await conn.fetchval("SELECT pg_try_advisory_lock($1)", AGGREGATOR_LOCK)


async def release_aggregator_lock(conn: asyncpg.Connection) -> None:
    await conn.execute("SELECT pg_advisory_unlock($1)", AGGREGATOR_LOCK)


async def pending_days(conn: asyncpg.Connection, first_day: date) -> list[asyncpg.Record]:
    """Days with pings written since they were last aggregated (oldest first)."""
    return await conn.fetch(
        """SELECT w.day, w.write_version FROM telemetry_day_writes w
           LEFT JOIN telemetry_day_aggregates a ON a.day = w.day
           WHERE w.day >= $1 AND (a.day IS NULL OR a.aggregated_version < w.write_version)
           ORDER BY w.day""",
        first_day,
    )


# A server counts for a day only once it has pinged at least twice, this far apart (the
# first and last ping of its day): one request, or a burst of fresh ids, counts nothing.
QUALIFYING_SPAN = timedelta(minutes=25)

# Per (mod, server) the server's *latest* ping of the day decides its breakdown values, so
# every dimension of the breakdown sums to the day's distinct servers. Ties on received_at
# are broken by ping_id: the result is a pure function of the day's rows.
# unnest() in the select list (ProjectSet) is about twice as fast as a LATERAL join here;
# the "profiles" step folds servers with identical attributes before the grouping sets.
_COMPUTE = f"""
WITH qualified AS MATERIALIZED (
    SELECT server_hash FROM {PARENT}
    WHERE received_at >= $1 AND received_at < $2
    GROUP BY server_hash
    HAVING max(received_at) - min(received_at) >= $3::interval
), obs AS (
    SELECT DISTINCT ON (mod_id, server_hash)
           mod_id, mod_version, game_version, loader, java_version, os, arch
    FROM (SELECT unnest(p.mod_ids) AS mod_id, unnest(p.mod_versions) AS mod_version, p.server_hash,
                 p.received_at, p.ping_id, p.game_version, p.loader, p.java_version, p.os, p.arch
          FROM {PARENT} p WHERE p.received_at >= $1 AND p.received_at < $2
                            AND p.server_hash IN (SELECT server_hash FROM qualified)) x
    ORDER BY mod_id, server_hash, received_at DESC, ping_id DESC
), profiles AS (
    SELECT mod_id, mod_version, game_version, loader, java_version, os, arch, count(*) AS n
    FROM obs GROUP BY 1, 2, 3, 4, 5, 6, 7
), counts AS (
    SELECT mod_id,
           CASE WHEN GROUPING(game_version) = 0 THEN 'game_version'
                WHEN GROUPING(loader) = 0 THEN 'loader'
                WHEN GROUPING(mod_version) = 0 THEN 'mod_version'
                WHEN GROUPING(java_version) = 0 THEN 'java'
                WHEN GROUPING(os) = 0 THEN 'os'
                WHEN GROUPING(arch) = 0 THEN 'arch' END AS dim,
           COALESCE(game_version, loader, mod_version, java_version, os, arch, '{UNKNOWN}') AS value,
           sum(n)::int AS n
    FROM profiles
    GROUP BY GROUPING SETS ((mod_id), (mod_id, game_version), (mod_id, loader), (mod_id, mod_version),
                            (mod_id, java_version), (mod_id, os), (mod_id, arch))
), ranked AS (
    SELECT mod_id, dim, value, n,
           row_number() OVER (PARTITION BY mod_id, dim ORDER BY n DESC, value) AS rank
    FROM counts WHERE dim IS NOT NULL
), folded AS (
    SELECT mod_id, dim, CASE WHEN rank <= {BREAKDOWN_TOP} THEN value ELSE '{OTHER}' END AS value,
           sum(n)::int AS n
    FROM ranked GROUP BY 1, 2, 3
), dims AS (
    SELECT mod_id, dim, jsonb_object_agg(value, n) AS obj FROM folded GROUP BY 1, 2
), breakdowns AS (
    SELECT mod_id, jsonb_object_agg(dim, obj) AS breakdown FROM dims GROUP BY 1
)
SELECT c.mod_id, c.n AS servers, b.breakdown::text AS breakdown
FROM counts c JOIN breakdowns b USING (mod_id)
WHERE c.dim IS NULL
"""

# A mod deleted since the pings were taken has nothing to attach stats to: skipped.
_REPLACE = """
INSERT INTO mod_daily_stats (mod_id, day, servers, breakdown, computed_at)
SELECT s.mod_id, $1, s.servers, s.breakdown::jsonb, now()
FROM unnest($2::uuid[], $3::int[], $4::text[]) AS s(mod_id, servers, breakdown)
JOIN mods m ON m.id = s.mod_id
"""


async def aggregate_day(conn: asyncpg.Connection, day: date, work_mem: str = "256MB",
                        qualifying_span: timedelta = QUALIFYING_SPAN) -> dict:
    """Recompute one UTC day from its raw pings, replacing that day's stats atomically.

    Runs in one REPEATABLE READ transaction: the write version recorded is the one of
    the snapshot the stats were computed from, so a batch committed meanwhile makes
    the day pending again. The heavy read comes first; the day's rows are then swapped
    in two short statements. Killed part-way, it rolls back and leaves the old stats;
    run again, it gives the same rows.
    """
    start, end = day_bounds(day)
    async with conn.transaction(isolation="repeatable_read"):
        await conn.execute(f"SET LOCAL work_mem = '{work_mem}'")
        version = await conn.fetchval(
            "SELECT write_version FROM telemetry_day_writes WHERE day = $1", day) or 0
        rows = await conn.fetch(_COMPUTE, start, end, qualifying_span)
        pings = await conn.fetchval(
            f"SELECT count(*) FROM {PARENT} WHERE received_at >= $1 AND received_at < $2", start, end)
        await conn.execute("DELETE FROM mod_daily_stats WHERE day = $1", day)
        status = await conn.execute(
            _REPLACE, day, [r["mod_id"] for r in rows], [r["servers"] for r in rows],
            [r["breakdown"] for r in rows])
        mods = int(status.split()[-1])
        await conn.execute(
            """INSERT INTO telemetry_day_aggregates (day, aggregated_version, pings, mods, aggregated_at)
               VALUES ($1, $2, $3, $4, now())
               ON CONFLICT (day) DO UPDATE SET aggregated_version = EXCLUDED.aggregated_version,
                   pings = EXCLUDED.pings, mods = EXCLUDED.mods, aggregated_at = EXCLUDED.aggregated_at""",
            day, version, pings, mods)
    return {"day": day, "version": version, "pings": pings, "mods": mods}


# ---- API reads ----------------------------------------------------------------------------

async def mod_for_analytics(conn: asyncpg.Connection, slug: str) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT id, slug, name FROM mods WHERE slug = $1 AND listed", slug)


async def daily_servers(
    conn: asyncpg.Connection, mod_id: uuid.UUID, first_day: date, last_day: date
) -> list[asyncpg.Record]:
    """(day, servers) for every day of the range, 0 where no server was seen."""
    return await conn.fetch(
        """SELECT d::date AS day, COALESCE(s.servers, 0) AS servers
           FROM generate_series($2::date, $3::date, interval '1 day') d
           LEFT JOIN mod_daily_stats s ON s.mod_id = $1 AND s.day = d::date
           ORDER BY 1""",
        mod_id, first_day, last_day)


async def day_stats(conn: asyncpg.Connection, mod_id: uuid.UUID, day: date) -> asyncpg.Record | None:
    return await conn.fetchrow(
        "SELECT servers, breakdown, computed_at FROM mod_daily_stats WHERE mod_id = $1 AND day = $2",
        mod_id, day)


async def active_servers(conn: asyncpg.Connection, mod_ids: list[uuid.UUID]) -> dict[uuid.UUID, int]:
    """Servers seen on the last complete UTC day, for each mod given (0 when none)."""
    rows = await conn.fetch(
        f"""SELECT m.id, {ACTIVE_SERVERS_EXPR} AS servers
            FROM mods m {ACTIVE_SERVERS_JOIN} WHERE m.id = ANY($1::uuid[])""",
        mod_ids)
    return {r["id"]: r["servers"] for r in rows}
