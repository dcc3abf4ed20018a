-- 0007_reconcile_membership: a reconciliation pass also re-lists each active installation's
-- repositories (installation_repositories events GitHub never delivered) and counts what it
-- changed. docs/schema.md ("GitHub App") describes the table.

ALTER TABLE github_reconcile_runs
    ADD COLUMN repos_added   integer NOT NULL DEFAULT 0,   -- listed by GitHub, new or back: registered
    ADD COLUMN repos_removed integer NOT NULL DEFAULT 0;   -- no longer listed: marked removed, mods hidden
