-- 0011_asset_skips: every asset of a processed release that did not become a version file,
-- with the reason, so nothing a release carries is left out without the author being able to
-- see why. docs/schema.md ("Release assets left out") describes the table.

CREATE TABLE release_asset_skips (
    github_release_id bigint      NOT NULL,
    github_asset_id   bigint      NOT NULL,
    github_repo_id    bigint      NOT NULL,             -- as mods.github_repo_id (the mod may not exist)
    owner_github_id   bigint      NOT NULL,             -- the repository's owner: the author's dashboard
    repo_full_name    text        NOT NULL,
    tag_name          text        NOT NULL,
    asset_name        text        NOT NULL,
    code              text        NOT NULL,             -- machine code: not_a_mod_file, no_manifest, truncated, ...
    reason            text        NOT NULL,             -- safe human text, at most 500 characters
    release_indexed   boolean     NOT NULL,             -- other assets of the release became a version
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (github_release_id, github_asset_id),
    CHECK (length(reason) <= 500)
);
CREATE INDEX release_asset_skips_owner_idx ON release_asset_skips (owner_github_id, updated_at DESC);
CREATE INDEX release_asset_skips_repo_idx ON release_asset_skips (github_repo_id, updated_at DESC);
CREATE INDEX release_asset_skips_recent_idx ON release_asset_skips (updated_at DESC);
