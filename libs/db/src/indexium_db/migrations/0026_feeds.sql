-- 0026_feeds: what the Atom feeds (issue 36) read by index. docs/schema.md ("Atom feeds") describes them.

-- An author's feed: the mods a GitHub account owns, listed or not (its change stamp counts a
-- mod that stopped being listed). Without it, every author feed read scans every mod.
CREATE INDEX mods_author_idx ON mods (author_github_id);

-- A search feed's change stamp (Last-Modified): the newest write to any mod or any version,
-- one index endpoint each (max(updated_at)), instead of a scan of both tables per feed read.
CREATE INDEX mods_updated_idx ON mods (updated_at);
CREATE INDEX mod_versions_updated_idx ON mod_versions (updated_at);
