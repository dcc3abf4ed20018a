-- 0002_telemetry: telemetry pings (one row per accepted ping, daily partitions), daily stats,
-- and the bookkeeping that makes aggregation incremental and idempotent.
-- docs/schema.md ("Telemetry") and docs/telemetry.md describe these tables.

-- The draft table of 0001 held one row per (ping, mod), repeating the server's attributes
-- for every mod (a server runs 20-400 mods). It was never written to; replace it.
DROP TABLE mod_telemetry_pings;

-- Partitions (mod_telemetry_pings_pYYYYMMDD, one per UTC day) are created ahead by the
-- telemetry service and dropped whole after the retention period: no row-by-row deletes.
CREATE TABLE mod_telemetry_pings (
    received_at   timestamptz NOT NULL,             -- set by our HTTP handler; decides the UTC day
    ping_id       uuid NOT NULL,                    -- one accepted ping; makes redelivered batches no-ops
    server_hash   bytea NOT NULL,                   -- sha256(server_uuid || daily salt); no IP, no raw uuid
    mod_ids       uuid[] NOT NULL,                  -- known mods only, de-duplicated
    mod_versions  text[] NOT NULL,                  -- parallel to mod_ids; NULL where not reported
    game_version  text NOT NULL,
    loader        text NOT NULL,
    java_version  text NOT NULL,                    -- major version only
    os            text NOT NULL,
    arch          text NOT NULL,
    core_count    smallint NOT NULL,
    player_count  integer,
    online_mode   boolean,
    PRIMARY KEY (received_at, ping_id),
    CONSTRAINT mod_telemetry_pings_hash_len CHECK (octet_length(server_hash) = 32),
    CONSTRAINT mod_telemetry_pings_parallel CHECK (cardinality(mod_ids) = cardinality(mod_versions))
) PARTITION BY RANGE (received_at);

-- "sort=active_servers" and the badge read one day across all mods.
CREATE INDEX mod_daily_stats_day_servers_idx ON mod_daily_stats (day, servers DESC);

-- Bumped by the writer in the same transaction as every batch that added pings to a day.
CREATE TABLE telemetry_day_writes (
    day            date PRIMARY KEY,                -- UTC day
    write_version  bigint NOT NULL DEFAULT 1,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- What the aggregator last computed per day: a day is re-aggregated while
-- telemetry_day_writes.write_version is ahead of aggregated_version.
-- A separate table so the writer and the aggregator never update the same row.
CREATE TABLE telemetry_day_aggregates (
    day                 date PRIMARY KEY,
    aggregated_version  bigint NOT NULL,
    pings               bigint NOT NULL,            -- raw pings that day, for operators
    mods                integer NOT NULL,           -- mods with at least one server that day
    aggregated_at       timestamptz NOT NULL DEFAULT now()
);
