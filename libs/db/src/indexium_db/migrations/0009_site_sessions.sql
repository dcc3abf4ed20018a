-- 0009_site_sessions: the web site's server-side sign-in state. docs/schema.md ("Web site")
-- describes the tables; SQL in queries/site.py.

-- One row per signed-in browser. The cookie holds a random 256-bit id; only its HMAC (keyed
-- with INDEXIUM_SESSION_SECRET) is stored, so a copy of this table signs nobody in.
-- No GitHub token is kept: what GitHub said the user can reach is copied at sign-in.
CREATE TABLE site_sessions (
    id_hash        bytea PRIMARY KEY,
    github_user_id bigint NOT NULL,
    login          text NOT NULL,
    name           text,
    avatar_url     text,
    csrf_token     text NOT NULL,                   -- echoed by every state-changing form
    installations  jsonb NOT NULL DEFAULT '[]',     -- [{id, account}] from GET /user/installations
    repositories   jsonb NOT NULL DEFAULT '[]',     -- [{id, full_name, private, html_url, installation_id}]
    created_at     timestamptz NOT NULL DEFAULT now(),
    last_seen_at   timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);

CREATE INDEX site_sessions_expires_idx ON site_sessions (expires_at);
CREATE INDEX site_sessions_user_idx ON site_sessions (github_user_id);

-- A sign-in in progress: the OAuth `state` (hashed) and the browser it was handed to (the
-- HMAC of a random nonce kept in that browser's cookie). Deleted by the callback that uses it.
CREATE TABLE site_oauth_states (
    state_hash   bytea PRIMARY KEY,
    browser_hash bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);

CREATE INDEX site_oauth_states_expires_idx ON site_oauth_states (expires_at);

-- Rate limit for what a signed-in user asks of the system ("check again"): one row per request,
-- counted over a sliding window, across every replica.
CREATE TABLE site_user_actions (
    github_user_id bigint NOT NULL,
    action         text NOT NULL,
    subject        bigint,                          -- e.g. the repository checked
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX site_user_actions_user_idx ON site_user_actions (github_user_id, action, created_at);
