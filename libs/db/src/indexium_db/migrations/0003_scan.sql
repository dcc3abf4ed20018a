-- 0003_scan: the scan stage's results per file, its findings, and every quarantine decision.
-- docs/schema.md ("Scan stage and quarantine") describes these tables; update it with this file.

ALTER TABLE version_files
    ADD COLUMN scan_reason  text,          -- why scan_status = 'failed' ("code: safe text")
    ADD COLUMN scanned_at   timestamptz,
    ADD COLUMN scanned_size bigint,        -- bytes the scan streamed (a mismatch with size is a finding)
    ADD COLUMN scan_version integer;       -- rule set the result was made with; older ones are rescanned

CREATE TABLE scan_findings (
    id          bigserial PRIMARY KEY,
    file_id     uuid NOT NULL REFERENCES version_files (id) ON DELETE CASCADE,
    version_id  uuid NOT NULL REFERENCES mod_versions (id) ON DELETE CASCADE,
    rule        text NOT NULL,             -- fractureiser_stage0, runtime_exec, digest_mismatch, ...
    severity    integer NOT NULL,          -- base weight x location factor; >= the threshold quarantines
    location    text NOT NULL,             -- static_init | mod_initializer | called_from_init | method | archive | file
    entry_path  text NOT NULL DEFAULT '',  -- path inside the jar; nested jars joined with '!/'
    class_name  text,
    method      text,                      -- name + descriptor
    detail      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX scan_findings_file_idx ON scan_findings (file_id);
CREATE INDEX scan_findings_version_idx ON scan_findings (version_id);

CREATE TABLE quarantine_decisions (
    id           bigserial PRIMARY KEY,
    version_id   uuid NOT NULL REFERENCES mod_versions (id) ON DELETE CASCADE,
    action       text NOT NULL CHECK (action IN ('quarantined', 'cleared', 'approved', 'rejected')),
    actor        text NOT NULL,            -- 'scan' for the stage itself, else the operator's --by
    reason       text NOT NULL DEFAULT '',
    file_sha256  text[] NOT NULL DEFAULT '{}',  -- the files the decision was made on
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX quarantine_decisions_version_idx ON quarantine_decisions (version_id, created_at);

-- The operators' queue and the quarantine-size gauge.
CREATE INDEX mod_versions_quarantined_idx ON mod_versions (updated_at) WHERE status = 'quarantined';
