-- 0015_ownership: who owns a file's bytes and a mod id. A file's content belongs to the first
-- project (mod row) that published it, ordered by the GitHub asset's created_at (which nobody can
-- backdate), then by first indexed; the same bytes in another project are a re-upload. A manifest
-- mod id, per loader, is held by the first project that declared it; another owner's project
-- declaring it is held for review. Both key on the mod row (the project), not on the repository,
-- so a repository publishing several mods later keeps the same tables. Plus the repository's
-- GitHub fork flag. docs/schema.md ("Ownership") describes every table, column and index.

ALTER TABLE mods ADD COLUMN fork boolean NOT NULL DEFAULT false;  -- GitHub's repository "fork"

-- GitHub's created_at of the asset (the release job writes it; NULL for rows indexed before).
ALTER TABLE version_files ADD COLUMN asset_created_at timestamptz;

-- The file's sha256: the scan stage's when it has hashed the file, else GitHub's digest (known at
-- index time). The ownership check and the hash lookups use this one value.
ALTER TABLE version_files ADD COLUMN content_sha256 char(64) GENERATED ALWAYS AS (
    COALESCE(sha256::text, CASE WHEN lower(github_digest) ~ '^sha256:[0-9a-f]{64}$'
                                THEN substr(lower(github_digest), 8, 64) END)::char(64)) STORED;

CREATE INDEX version_files_content_sha256_idx ON version_files (content_sha256) WHERE content_sha256 IS NOT NULL;

CREATE TABLE content_owners (
    sha256           char(64) PRIMARY KEY,
    mod_id           uuid NOT NULL REFERENCES mods (id) ON DELETE CASCADE,   -- the owning project
    file_id          uuid REFERENCES version_files (id) ON DELETE SET NULL,  -- its file (gone: still owned)
    asset_created_at timestamptz,                                            -- NULL: unknown, after any time
    first_indexed_at timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX content_owners_mod_idx ON content_owners (mod_id);
CREATE INDEX content_owners_file_idx ON content_owners (file_id) WHERE file_id IS NOT NULL;

-- Every writer of a file's hash claims its bytes in the same statement, so no hash is ever
-- stored without an owner (the hash lookups answer only from the owner's files). A claim takes
-- the bytes from another project only with a strictly earlier asset created_at.
CREATE FUNCTION version_files_claim_content() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.content_sha256 IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO content_owners AS o (sha256, mod_id, file_id, asset_created_at)
    SELECT NEW.content_sha256, v.mod_id, NEW.id, NEW.asset_created_at FROM mod_versions v WHERE v.id = NEW.version_id
    ON CONFLICT (sha256) DO UPDATE SET
        mod_id = EXCLUDED.mod_id,
        file_id = EXCLUDED.file_id,
        asset_created_at = CASE WHEN o.mod_id = EXCLUDED.mod_id
                                THEN LEAST(o.asset_created_at, EXCLUDED.asset_created_at)
                                ELSE EXCLUDED.asset_created_at END,
        first_indexed_at = CASE WHEN o.mod_id = EXCLUDED.mod_id THEN o.first_indexed_at ELSE now() END,
        updated_at = now()
    WHERE (EXCLUDED.asset_created_at IS NOT NULL
           AND (o.asset_created_at IS NULL OR EXCLUDED.asset_created_at < o.asset_created_at))
       OR (o.mod_id = EXCLUDED.mod_id AND o.file_id IS NULL);
    RETURN NULL;
END
$$;

CREATE TRIGGER version_files_claim_content_insert AFTER INSERT ON version_files
    FOR EACH ROW EXECUTE FUNCTION version_files_claim_content();
CREATE TRIGGER version_files_claim_content_update AFTER UPDATE OF sha256, github_digest, asset_created_at
    ON version_files FOR EACH ROW
    WHEN (NEW.content_sha256 IS DISTINCT FROM OLD.content_sha256
          OR NEW.asset_created_at IS DISTINCT FROM OLD.asset_created_at)
    EXECUTE FUNCTION version_files_claim_content();

-- Rows already stored: the earliest file of each content owns it; its release's publish time
-- stands in for the asset time nobody recorded.
INSERT INTO content_owners (sha256, mod_id, file_id, asset_created_at, first_indexed_at)
SELECT DISTINCT ON (f.content_sha256) f.content_sha256, v.mod_id, f.id,
       COALESCE(v.published_at, f.created_at), f.created_at
FROM version_files f JOIN mod_versions v ON v.id = f.version_id
WHERE f.content_sha256 IS NOT NULL
ORDER BY f.content_sha256, COALESCE(v.published_at, f.created_at), f.created_at, f.id;

-- Which project answers for a manifest mod id (lower-cased) and loader.
CREATE TABLE mod_id_claims (
    mod_id           uuid NOT NULL REFERENCES mods (id) ON DELETE CASCADE,   -- the claiming project
    loader           text NOT NULL,
    manifest_mod_id  text NOT NULL CHECK (manifest_mod_id = lower(manifest_mod_id)
                                          AND length(manifest_mod_id) BETWEEN 1 AND 128),
    state            text NOT NULL CHECK (state IN ('holder', 'same_owner', 'review', 'approved', 'rejected')),
    holder_mod_id    uuid REFERENCES mods (id) ON DELETE SET NULL,  -- whose id it claims (not for 'holder')
    asset_created_at timestamptz,                                   -- its earliest declaring asset
    first_indexed_at timestamptz NOT NULL DEFAULT now(),
    decided_by       text,                                          -- the operator ('approved', 'rejected')
    decided_at       timestamptz,
    PRIMARY KEY (mod_id, loader, manifest_mod_id)
);

CREATE UNIQUE INDEX mod_id_claims_holder_key ON mod_id_claims (loader, manifest_mod_id) WHERE state = 'holder';
CREATE INDEX mod_id_claims_id_idx ON mod_id_claims (manifest_mod_id);
CREATE INDEX mod_id_claims_holder_mod_idx ON mod_id_claims (holder_mod_id) WHERE holder_mod_id IS NOT NULL;

-- Rows already stored: the earliest declaring project holds each (loader, id); the same owner's
-- others share it; another owner's were listed before this rule and stay so (approved).
WITH declared AS (
    SELECT v.mod_id, rec ->> 'loader' AS loader, lower(rec ->> 'mod_id') AS mid,
           min(COALESCE(v.published_at, f.created_at)) AS at, min(f.created_at) AS indexed
    FROM version_files f
    JOIN mod_versions v ON v.id = f.version_id
    CROSS JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(f.manifests) WHEN 'array' THEN f.manifests
                                            ELSE '[]' END) AS rec
    WHERE rec ->> 'loader' IS NOT NULL AND length(rec ->> 'mod_id') BETWEEN 1 AND 128
    GROUP BY 1, 2, 3
), ranked AS (
    SELECT d.*, m.author_github_id AS owner,
           first_value(d.mod_id) OVER w AS holder, first_value(m.author_github_id) OVER w AS holder_owner
    FROM declared d JOIN mods m ON m.id = d.mod_id
    WINDOW w AS (PARTITION BY d.loader, d.mid ORDER BY d.at NULLS LAST, d.indexed, d.mod_id)
)
INSERT INTO mod_id_claims (mod_id, loader, manifest_mod_id, state, holder_mod_id, asset_created_at,
                           first_indexed_at, decided_by, decided_at)
SELECT mod_id, loader, mid,
       CASE WHEN mod_id = holder THEN 'holder'
            WHEN owner IS NOT DISTINCT FROM holder_owner THEN 'same_owner' ELSE 'approved' END,
       NULLIF(holder, mod_id), at, indexed,
       CASE WHEN mod_id <> holder AND owner IS DISTINCT FROM holder_owner THEN '0015_ownership' END,
       CASE WHEN mod_id <> holder AND owner IS DISTINCT FROM holder_owner THEN now() END
FROM ranked;

-- An approved claimant of another owner's mod id (a fork, a continuation) is a separate project
-- that never takes the holder's name: a card name equal to the holder's, whoever writes it (the
-- release role, the GitHub role's card refresh), is shown with the claimant's owner.
CREATE FUNCTION mods_distinct_name() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    owner text;
BEGIN
    IF EXISTS (SELECT 1 FROM mod_id_claims c JOIN mods h ON h.id = c.holder_mod_id
               WHERE c.mod_id = NEW.id AND c.state = 'approved' AND lower(h.name) = lower(NEW.name)) THEN
        owner := COALESCE((SELECT login FROM authors WHERE github_id = NEW.author_github_id), 'fork');
        NEW.name := left(NEW.name, 125 - length(owner)) || ' (' || owner || ')';
    END IF;
    RETURN NEW;
END
$$;

-- Named to run before mods_search_vector (BEFORE triggers fire by name): search sees the name shown.
CREATE TRIGGER mods_distinct_name BEFORE UPDATE OF name ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_distinct_name();

-- The listed project a dependency on ``dep_id`` means, for a record of loader ``want_loader``:
-- a claimant of that loader first, the holder before the others, then by claim time; never one
-- held for review or rejected. An id nobody has claimed falls back to the listed mod whose own
-- manifest id it is (rows written without the release job, e.g. seeded data).
CREATE FUNCTION indexium_project_for(dep_id text, want_loader text) RETURNS uuid
    LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT COALESCE(
        (SELECT c.mod_id FROM mod_id_claims c JOIN mods m ON m.id = c.mod_id AND m.listed
         WHERE c.manifest_mod_id = lower(dep_id) AND c.state IN ('holder', 'same_owner', 'approved')
         ORDER BY c.loader = want_loader DESC, c.state = 'holder' DESC, c.asset_created_at NULLS LAST,
                  c.first_indexed_at, c.mod_id
         LIMIT 1),
        (SELECT m.id FROM mods m
         WHERE m.manifest_id = dep_id AND m.listed
           AND NOT EXISTS (SELECT 1 FROM mod_id_claims c WHERE c.manifest_mod_id = lower(dep_id))
         ORDER BY m.created_at, m.id
         LIMIT 1))
$$;
