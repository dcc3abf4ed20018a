-- 0005_github_app: GitHub App installations, the repositories they give us (registered or
-- skipped, with the reason), release backfill/reconciliation bookkeeping, reconcile runs.
-- docs/schema.md ("GitHub App") describes every table and index.

CREATE TABLE github_installations (
    id             bigint PRIMARY KEY,                 -- GitHub's installation id
    account_id     bigint,                             -- user or organization; NULL until an event names it
    account_login  text,
    account_type   text,                               -- User | Organization
    state          text NOT NULL DEFAULT 'active'
                   CHECK (state IN ('active', 'suspended', 'deleted')),
    -- received_at of the newest installation event applied: an older event arriving late
    -- (redelivery, reordering) must not undo a newer one.
    last_event_at  timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE github_repositories (
    github_repo_id   bigint PRIMARY KEY,               -- identity, as mods.github_repo_id
    installation_id  bigint NOT NULL REFERENCES github_installations (id),
    full_name        text NOT NULL,                    -- owner/name, refreshed by every event
    default_branch   text NOT NULL DEFAULT 'main',
    description      text,
    homepage         text,
    topics           text[] NOT NULL DEFAULT '{}',
    private          boolean NOT NULL DEFAULT false,
    archived         boolean NOT NULL DEFAULT false,
    deleted          boolean NOT NULL DEFAULT false,   -- repository deleted on GitHub
    removed          boolean NOT NULL DEFAULT false,   -- taken out of the installation
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'registered', 'skipped')),
    skip_reason      text,                             -- why it is not a mod (state = 'skipped')
    manifest_source  text,                             -- where the manifest was found
    evaluated_at     timestamptz,
    registered_at    timestamptz,
    -- Backfill of existing releases: claimed by one replica at a time (lease), oldest first.
    backfill_state      text NOT NULL DEFAULT 'none'
                        CHECK (backfill_state IN ('none', 'pending', 'running', 'done', 'failed')),
    backfill_lease_until timestamptz,
    backfill_not_before  timestamptz,                  -- rate-limited: retry after this
    backfill_total      integer,
    backfill_published  integer NOT NULL DEFAULT 0,
    backfill_started_at timestamptz,
    backfill_finished_at timestamptz,
    backfill_error      text,
    reconciled_at    timestamptz,
    reconcile_error  text,
    last_event_at    timestamptz,                      -- as github_installations.last_event_at
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX github_repositories_installation_idx ON github_repositories (installation_id);
CREATE INDEX github_repositories_backfill_idx ON github_repositories (backfill_not_before NULLS FIRST)
    WHERE backfill_state IN ('pending', 'running');
CREATE INDEX github_repositories_reconcile_idx ON github_repositories (reconciled_at NULLS FIRST)
    WHERE state = 'registered';

-- Releases the GitHub role sent to the indexer itself (backfill, reconciliation), with a
-- fingerprint of what was sent: a release is sent again only when it changed.
CREATE TABLE github_release_sync (
    github_repo_id     bigint NOT NULL REFERENCES github_repositories (github_repo_id) ON DELETE CASCADE,
    github_release_id  bigint NOT NULL,
    fingerprint        text NOT NULL,                  -- tag, flags and assets (not download counts)
    delivery_id        text NOT NULL,                  -- the synthetic delivery id published
    published_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (github_repo_id, github_release_id)
);

-- One row per reconciliation pass; the running one shows its progress.
CREATE TABLE github_reconcile_runs (
    id                  bigserial PRIMARY KEY,
    holder              text NOT NULL,                 -- host:pid of the replica that ran it
    started_at          timestamptz NOT NULL DEFAULT now(),
    finished_at         timestamptz,
    status              text NOT NULL DEFAULT 'running'
                        CHECK (status IN ('running', 'ok', 'partial', 'failed')),
    repos_total         integer NOT NULL DEFAULT 0,
    repos_done          integer NOT NULL DEFAULT 0,
    repos_unchanged     integer NOT NULL DEFAULT 0,    -- every page answered 304
    releases_published  integer NOT NULL DEFAULT 0,
    versions_hidden     integer NOT NULL DEFAULT 0,
    files_updated       integer NOT NULL DEFAULT 0,    -- download counts changed
    api_requests        integer NOT NULL DEFAULT 0,
    not_modified        integer NOT NULL DEFAULT 0,
    errors              integer NOT NULL DEFAULT 0,
    last_error          text
);

CREATE INDEX github_reconcile_runs_started_idx ON github_reconcile_runs (started_at DESC);
