-- 0001_init: mods, versions, files, icons, deliveries, job attempts, dead letters, telemetry.
-- docs/schema.md describes every table and index; update it with every migration.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE authors (
    github_id   bigint PRIMARY KEY,
    login       text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE mods (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    github_repo_id    bigint NOT NULL UNIQUE,           -- identity: renames keep the mod
    repo_full_name    text NOT NULL,                    -- owner/name, refreshed on every event
    slug              varchar(64) NOT NULL UNIQUE,      -- from the manifest id; never changes once set
    manifest_id       text NOT NULL,                    -- the manifest id the slug was made from
    name              varchar(128) NOT NULL,
    summary           text NOT NULL DEFAULT '',
    description       text NOT NULL DEFAULT '',
    author_github_id  bigint REFERENCES authors (github_id),
    authors           text[] NOT NULL DEFAULT '{}',     -- display names from the manifest
    licenses          text[] NOT NULL DEFAULT '{}',
    links             jsonb NOT NULL DEFAULT '{}',
    categories        text[] NOT NULL DEFAULT '{}',     -- GitHub topics
    environment       text NOT NULL DEFAULT 'both' CHECK (environment IN ('client', 'server', 'both')),
    default_branch    varchar(255) NOT NULL DEFAULT 'main',
    hidden            boolean NOT NULL DEFAULT false,   -- repository removed/private: kept, not deleted
    hidden_reason     text,
    -- Roll-up of the mod's public versions, recomputed in the same transaction as any version change.
    listed            boolean NOT NULL DEFAULT false,   -- has at least one public version and not hidden
    latest_version    text,
    loaders           text[] NOT NULL DEFAULT '{}',
    game_versions     text[] NOT NULL DEFAULT '{}',
    downloads         bigint NOT NULL DEFAULT 0,
    last_published_at timestamptz,
    search_vector     tsvector NOT NULL DEFAULT ''::tsvector,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT mods_slug_format CHECK (slug ~ '^[a-z0-9][a-z0-9_-]{1,63}$')
);

-- English and Russian stemming for prose, 'simple' (no stemming) for names and authors
-- so exact and prefix matches on names always work.
CREATE FUNCTION mods_search_vector_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('simple', coalesce(NEW.name, '') || ' ' || coalesce(NEW.slug, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.name, '')), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.summary, '')), 'B') ||
        setweight(to_tsvector('russian', coalesce(NEW.summary, '')), 'B') ||
        setweight(to_tsvector('simple', array_to_string(NEW.authors, ' ')), 'C');
    RETURN NEW;
END
$$;

CREATE TRIGGER mods_search_vector BEFORE INSERT OR UPDATE OF name, slug, summary, authors ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_search_vector_update();

CREATE INDEX mods_search_vector_idx ON mods USING gin (search_vector);
CREATE INDEX mods_name_trgm_idx ON mods USING gin (lower(name) gin_trgm_ops);
CREATE INDEX mods_facets_idx ON mods USING gin (game_versions, loaders) WHERE listed;
CREATE INDEX mods_listed_published_idx ON mods (last_published_at DESC) WHERE listed;

CREATE TABLE mod_versions (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    mod_id          uuid NOT NULL REFERENCES mods (id) ON DELETE CASCADE,
    version_number  varchar(128) NOT NULL,
    github_release_id bigint NOT NULL,
    tag_name        text NOT NULL,
    name            text NOT NULL DEFAULT '',
    changelog       text NOT NULL DEFAULT '',
    version_type    text NOT NULL DEFAULT 'release' CHECK (version_type IN ('release', 'beta', 'alpha')),
    game_versions   text[] NOT NULL DEFAULT '{}',   -- union over the version's files
    loaders         text[] NOT NULL DEFAULT '{}',   -- union over the version's files
    published_at    timestamptz,
    -- 'pending_scan' until every file is scanned clean; 'quarantined' on a finding; 'rejected' by an operator.
    status          text NOT NULL DEFAULT 'pending_scan'
                    CHECK (status IN ('pending_scan', 'public', 'quarantined', 'rejected')),
    hidden          boolean NOT NULL DEFAULT false,  -- release deleted/unpublished: kept, not deleted
    hidden_reason   text,
    suspicious      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (mod_id, version_number)
);

CREATE INDEX mod_versions_facets_idx ON mod_versions USING gin (game_versions, loaders);
CREATE INDEX mod_versions_release_idx ON mod_versions (github_release_id);
CREATE INDEX mod_versions_mod_published_idx ON mod_versions (mod_id, published_at DESC);

CREATE TABLE version_files (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    version_id       uuid NOT NULL REFERENCES mod_versions (id) ON DELETE CASCADE,
    github_asset_id  bigint NOT NULL,
    filename         text NOT NULL,
    url              text NOT NULL,                 -- GitHub's browser_download_url: launchers download from GitHub
    size             bigint NOT NULL,
    content_type     text,
    github_digest    text,                          -- "sha256:<hex>" as GitHub reported it
    sidecar_url      text,                          -- "<filename>.sha256" asset of the same release
    sha1             char(40),                      -- filled by the scan stage (whole-file pass)
    sha256           char(64),
    sha512           char(128),
    loaders          text[] NOT NULL DEFAULT '{}',
    game_versions    text[] NOT NULL DEFAULT '{}',
    manifests        jsonb NOT NULL DEFAULT '[]',   -- the normalized records, one per loader manifest
    is_primary       boolean NOT NULL DEFAULT false,
    download_count   bigint NOT NULL DEFAULT 0,
    scan_status      text NOT NULL DEFAULT 'pending'
                     CHECK (scan_status IN ('pending', 'clean', 'suspicious', 'failed')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (version_id, github_asset_id)
);

CREATE INDEX version_files_facets_idx ON version_files USING gin (game_versions, loaders);
CREATE INDEX version_files_sha1_idx ON version_files (sha1) WHERE sha1 IS NOT NULL;
CREATE INDEX version_files_sha256_idx ON version_files (sha256) WHERE sha256 IS NOT NULL;
CREATE INDEX version_files_sha512_idx ON version_files (sha512) WHERE sha512 IS NOT NULL;

CREATE TABLE mod_icons (
    mod_id        uuid PRIMARY KEY REFERENCES mods (id) ON DELETE CASCADE,
    content_type  text NOT NULL CHECK (content_type IN ('image/png', 'image/jpeg')),
    data          bytea NOT NULL,
    etag          text NOT NULL,                    -- sha256 of data, quoted
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
    delivery_id   text PRIMARY KEY,                 -- X-GitHub-Delivery
    event         text NOT NULL,
    action        text,
    received_at   timestamptz NOT NULL,             -- when ingest accepted it
    processed_at  timestamptz NOT NULL DEFAULT now(),
    outcome       text NOT NULL                     -- indexed | hidden | ignored | dead_lettered
);

CREATE TABLE job_attempts (
    job_key       text PRIMARY KEY,                 -- consumer + message id
    attempts      integer NOT NULL,
    last_error    text NOT NULL,
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dead_letters (
    id               bigserial PRIMARY KEY,
    consumer         text NOT NULL,
    subject          text NOT NULL,
    msg_id           text,
    stream_sequence  bigint NOT NULL,
    category         text NOT NULL,                 -- machine code: corrupt_zip, retries_exhausted, ...
    error            text NOT NULL,
    attempts         integer NOT NULL,
    payload          bytea NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    replayed_at      timestamptz,
    UNIQUE (consumer, stream_sequence)              -- a redelivered give-up writes one row
);

CREATE INDEX dead_letters_open_idx ON dead_letters (created_at) WHERE replayed_at IS NULL;

-- Telemetry. Raw pings are partitioned by UTC day so retention drops partitions.
CREATE TABLE mod_telemetry_pings (
    received_at    timestamptz NOT NULL,
    server_hash    char(64) NOT NULL,               -- sha256(server_uuid + daily salt); no IP anywhere
    mod_id         uuid NOT NULL,
    mod_version    text,
    game_version   text,
    loader         text,
    java_version   text,
    os             text,
    arch           text,
    ping_id        uuid NOT NULL                    -- one accepted ping; makes batch inserts idempotent
) PARTITION BY RANGE (received_at);

CREATE TABLE mod_daily_stats (
    mod_id        uuid NOT NULL REFERENCES mods (id) ON DELETE CASCADE,
    day           date NOT NULL,                    -- UTC day
    servers       integer NOT NULL,                 -- COUNT(DISTINCT server_hash)
    breakdown     jsonb NOT NULL DEFAULT '{}',
    computed_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (mod_id, day)
);
