-- 0021_notifications: webhook subscriptions to new public versions, their outbox and delivery
-- log, and personal API tokens. docs/schema.md ("Notifications") describes the tables;
-- docs/notifications.md the behaviour. SQL in queries/notify.py.

-- A signed-in user's subscription (owner: site_sessions.github_user_id) to one mod, one
-- author, or a saved search, with its own filters, its target and its payload format.
CREATE TABLE notify_subscriptions (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    github_user_id       bigint NOT NULL,
    owner_login          text NOT NULL,
    kind                 text NOT NULL CHECK (kind IN ('mod', 'author', 'search')),
    mod_id               uuid REFERENCES mods (id) ON DELETE CASCADE,   -- kind = 'mod'
    author_github_id     bigint,                                        -- kind = 'author'
    author_login         text,                                          -- as the author was named
    search_q             text CHECK (char_length(search_q) <= 200),     -- kind = 'search'
    search_categories    text[] NOT NULL DEFAULT '{}',
    -- The filters, each empty for "any"; they hold on one file of the version together.
    loaders              text[] NOT NULL DEFAULT '{}',
    game_versions        text[] NOT NULL DEFAULT '{}',                  -- exact versions
    game_version_min     text,                                          -- "this version and newer"
    version_types        text[] NOT NULL DEFAULT '{}',
    format               text NOT NULL CHECK (format IN ('indexium', 'discord')),
    target_url           text NOT NULL CHECK (char_length(target_url) <= 2048),
    -- The signing secret is never stored: it is HMAC(INDEXIUM_NOTIFY_SECRET_KEY, salt), so a
    -- copy of this table signs nothing without the operator's key.
    secret_salt          bytea NOT NULL,
    state                text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'paused')),
    paused_at            timestamptz,
    paused_reason        text,
    failing_since        timestamptz,                                   -- first failure after a success
    consecutive_failures integer NOT NULL DEFAULT 0,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'mod') = (mod_id IS NOT NULL)),
    CHECK ((kind = 'author') = (author_github_id IS NOT NULL)),
    CHECK (cardinality(game_versions) = 0 OR game_version_min IS NULL),  -- exact, or "and newer"
    CHECK (cardinality(loaders) <= 20 AND cardinality(game_versions) <= 50
           AND cardinality(search_categories) <= 20 AND cardinality(version_types) <= 3)
);

CREATE INDEX notify_subscriptions_user_idx ON notify_subscriptions (github_user_id, created_at);
CREATE INDEX notify_subscriptions_mod_idx ON notify_subscriptions (mod_id) WHERE kind = 'mod';
CREATE INDEX notify_subscriptions_author_idx ON notify_subscriptions (author_github_id) WHERE kind = 'author';
CREATE INDEX notify_subscriptions_search_idx ON notify_subscriptions (created_at) WHERE kind = 'search';

-- The outbox: one row per (subscription, version) that matched when the version became public.
-- id is the X-Indexium-Delivery the receiver sees (uuid5 of the pair: the same id even for a
-- row written again). A replica claims due rows with a lease (FOR UPDATE SKIP LOCKED); a
-- replica killed mid-POST loses its lease and another sends the row again.
CREATE TABLE notify_deliveries (
    id               uuid PRIMARY KEY,
    subscription_id  uuid NOT NULL REFERENCES notify_subscriptions (id) ON DELETE CASCADE,
    version_id       uuid NOT NULL REFERENCES mod_versions (id) ON DELETE CASCADE,
    event            text NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'delivered', 'failed', 'cancelled')),
    attempts         integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    deadline_at      timestamptz NOT NULL,                              -- retries stop here: 'failed'
    lease_owner      text,
    lease_until      timestamptz,
    redeliver        boolean NOT NULL DEFAULT false,                    -- asked again by its owner
    last_status      integer,
    last_error       text CHECK (char_length(last_error) <= 500),
    created_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    UNIQUE (subscription_id, version_id)
);

CREATE INDEX notify_deliveries_due_idx ON notify_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX notify_deliveries_subscription_idx ON notify_deliveries (subscription_id, created_at DESC);

-- The delivery log: one row per POST tried (or deferred by the hourly limit), the newest
-- INDEXIUM_NOTIFY_LOG_ROWS per subscription kept.
CREATE TABLE notify_attempts (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id  uuid NOT NULL REFERENCES notify_subscriptions (id) ON DELETE CASCADE,
    delivery_id      uuid NOT NULL,
    attempted_at     timestamptz NOT NULL,
    outcome          text NOT NULL
                     CHECK (outcome IN ('ok', 'http_error', 'network', 'timeout', 'refused', 'deferred')),
    response_code    integer,
    latency_ms       integer,
    response_head    text CHECK (char_length(response_head) <= 512),  -- the answer's first bytes
    error            text CHECK (char_length(error) <= 500)
);

CREATE INDEX notify_attempts_subscription_idx ON notify_attempts (subscription_id, id DESC);

-- POSTs per user per UTC hour, for INDEXIUM_NOTIFY_MAX_DELIVERIES_PER_HOUR.
CREATE TABLE notify_user_hours (
    github_user_id  bigint NOT NULL,
    hour            timestamptz NOT NULL,
    deliveries      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (github_user_id, hour)
);

-- Personal API tokens for /api/v1/subscriptions: only the SHA-256 of the token is stored.
CREATE TABLE user_api_tokens (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    github_user_id  bigint NOT NULL,
    login           text NOT NULL,
    name            text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    token_hash      bytea NOT NULL UNIQUE,
    prefix          text NOT NULL,                                      -- the first characters, to tell tokens apart
    created_at      timestamptz NOT NULL DEFAULT now(),
    last_used_at    timestamptz
);

CREATE INDEX user_api_tokens_user_idx ON user_api_tokens (github_user_id, created_at);
