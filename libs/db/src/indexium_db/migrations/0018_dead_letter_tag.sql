-- 0018_dead_letter_tag: the release tag a dead letter's message is about, so the author's
-- dashboard shows it without reading the message's bytes (a release event is up to 1 MiB, its
-- notes and assets included). docs/schema.md describes it.

-- Set by the job ledger from the message, beside github_repo_id (NULL: not about one release, e.g.
-- a catch-up or an installation's event). Open rows written before it get theirs from
-- `indexium_ops setup`, which decodes their payloads once (SQL cannot read msgpack).
ALTER TABLE dead_letters ADD COLUMN tag_name text;
