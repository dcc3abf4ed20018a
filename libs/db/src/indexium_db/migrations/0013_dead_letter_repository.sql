-- 0013_dead_letter_repository: the GitHub repository a dead letter's message is about, so the
-- author's dashboard reads its own repositories' dead letters by index instead of decoding the
-- newest thousand of everyone's on every page load. docs/schema.md describes it.

-- Set by the job ledger from the message (NULL: not about one repository, e.g. an
-- installation's event, or another stream's). Rows written before it are attributed by
-- `indexium_ops setup`, which decodes their payloads once (SQL cannot read msgpack).
ALTER TABLE dead_letters ADD COLUMN github_repo_id bigint;

CREATE INDEX dead_letters_open_repo_idx ON dead_letters (github_repo_id, created_at DESC)
    WHERE replayed_at IS NULL AND github_repo_id IS NOT NULL;
