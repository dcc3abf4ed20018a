-- 0017_release_rereads: releases published before their jars were uploaded (release tools
-- publish first and upload afterwards, and GitHub sends no webhook for an upload), re-read by
-- the GitHub role on a short schedule until the jars appear. docs/schema.md ("GitHub App").

CREATE TABLE github_release_rereads (
    github_release_id  bigint PRIMARY KEY,
    github_repo_id     bigint NOT NULL REFERENCES github_repositories (github_repo_id) ON DELETE CASCADE,
    tag_name           text NOT NULL,                  -- for logs and operators (cut to 255 characters)
    base_at            timestamptz NOT NULL,           -- the release event's arrival: the schedule counts from it
    step               smallint NOT NULL DEFAULT 0,    -- re-reads done
    due_at             timestamptz NOT NULL,           -- the next re-read
    -- Mod jars the repository's recent releases carried (the fewest of the last 3 versions);
    -- 0 when it has none. The schedule ends early once the release carries as many.
    expected_jars      integer NOT NULL DEFAULT 0,
    seen_assets        bigint[] NOT NULL DEFAULT '{}', -- mod jar asset ids the indexer already got
    lease_until        timestamptz,                    -- a replica re-reading it now
    holder             text,
    last_error         text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX github_release_rereads_due_idx ON github_release_rereads (due_at);
