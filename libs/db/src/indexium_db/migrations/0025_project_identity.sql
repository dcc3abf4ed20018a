-- 0025_project_identity: one repository, several projects (issue 34). docs/schema.md ("mods",
-- "Project identity") describes the column, the constraint and the functions.
--
-- A project was its repository (mods.github_repo_id UNIQUE): a release publishing two mods, or a
-- mod and its resource pack, was one project named after its first file. A project is now
-- (github_repo_id, identity): the identity key of its files (indexium_jar.identity: a jar's
-- manifest id lower-cased without a loader suffix; a pack's "<project type>:<name>").
--
-- Rows stored before keep every id, public id and slug: each project's key is its newest
-- version's primary file's (the key its next release's files carry), else its manifest_id's.
-- Its older versions keep the files they have (a second mod's jar among them stays a file of
-- the project it was indexed into); releases indexed from now on go to each file's project.

-- The key rules, as indexium_jar.identity writes them in Python (a test holds the two to one answer).
-- Case is folded for ASCII letters only (indexium_jar.identity.fold), whatever the collation.
CREATE FUNCTION indexium_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(t, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
$$;

-- The loader suffixes are the jar formats' loader names (indexium_jar.identity.JAR_LOADERS) as of
-- this migration; a later loader is known to the Python rule, which writes every new key.
CREATE FUNCTION indexium_mod_key(manifest_id text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT left(CASE WHEN length(s) >= 2 THEN s ELSE low END, 160)
    FROM (SELECT indexium_fold(btrim(manifest_id)) AS low) l,
         LATERAL (SELECT substring(indexium_fold(btrim(manifest_id)) FROM
                  '^(.*[^-_.])[-_.](?:bungeecord|liteloader|neoforge|velocity|bukkit|fabric|sponge|forge|paper|quilt)$')
                  AS s) x
$$;

CREATE FUNCTION indexium_pack_name(file_name text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT COALESCE(NULLIF(btrim(COALESCE(substring(stem FROM '^(.+?)[-_+ .](?:v|mc|r)?[0-9].*$'), stem),
                                 ' -_.+'), ''), stem)
    FROM (SELECT regexp_replace(regexp_replace(file_name, '^.*/', ''), '(\.mrpack|\.zip)$', '', 'i') AS stem) s
$$;

CREATE FUNCTION indexium_pack_key(project_type text, pack_name text, file_name text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT left(project_type || ':' || COALESCE(NULLIF(indexium_fold(btrim(regexp_replace(pack_name, '\s+', ' ', 'g'))), ''),
                                                indexium_fold(indexium_pack_name(file_name))), 160)
$$;

ALTER TABLE mods ADD COLUMN identity text;

UPDATE mods m SET identity = COALESCE(
    (SELECT CASE WHEN f.pack IS NOT NULL AND f.project_type IS NOT NULL
                 THEN indexium_pack_key(f.project_type, f.pack ->> 'name', f.filename)
                 WHEN jsonb_typeof(f.manifests) = 'array' AND length(f.manifests -> 0 ->> 'mod_id') > 0
                 THEN indexium_mod_key(f.manifests -> 0 ->> 'mod_id') END
     FROM mod_versions v JOIN version_files f ON f.version_id = v.id
     WHERE v.mod_id = m.id
     ORDER BY v.hidden, v.published_at DESC NULLS LAST, v.created_at DESC, f.is_primary DESC, f.created_at, f.id
     LIMIT 1),
    indexium_mod_key(m.manifest_id));

ALTER TABLE mods
    ALTER COLUMN identity SET NOT NULL,
    ADD CONSTRAINT mods_identity_format CHECK (length(identity) BETWEEN 1 AND 160),
    DROP CONSTRAINT mods_github_repo_id_key,
    -- Also the index of every "the repository's projects" read (github_repo_id first).
    ADD CONSTRAINT mods_repo_identity_key UNIQUE (github_repo_id, identity);

-- A writer that names no key (seeded samples, tools, rows written the way they were before 0025)
-- gets its manifest id's, as mods.create does.
CREATE FUNCTION mods_identity_default() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.identity := COALESCE(NEW.identity, indexium_mod_key(NEW.manifest_id));
    RETURN NEW;
END
$$;

CREATE TRIGGER mods_identity_default BEFORE INSERT ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_identity_default();

-- Bytes between projects of one repository (0015's claim, one case more): a project takes the
-- bytes another project of the same repository owns once that project's file of them is gone
-- (file_id NULL: the release job moved the file to its own project). Only within a repository:
-- another repository's project still takes bytes only with a strictly earlier asset.
CREATE OR REPLACE FUNCTION version_files_claim_content() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    new_mod uuid;
    sibling boolean;
BEGIN
    IF NEW.content_sha256 IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT v.mod_id INTO new_mod FROM mod_versions v WHERE v.id = NEW.version_id;
    SELECT EXISTS (SELECT 1 FROM content_owners o JOIN mods a ON a.id = o.mod_id JOIN mods b ON b.id = new_mod
                   WHERE o.sha256 = NEW.content_sha256 AND o.file_id IS NULL AND o.mod_id <> new_mod
                     AND a.github_repo_id = b.github_repo_id) INTO sibling;
    INSERT INTO content_owners AS o (sha256, mod_id, file_id, asset_created_at)
    VALUES (NEW.content_sha256, new_mod, NEW.id, NEW.asset_created_at)
    ON CONFLICT (sha256) DO UPDATE SET
        mod_id = EXCLUDED.mod_id,
        file_id = EXCLUDED.file_id,
        asset_created_at = CASE WHEN o.mod_id = EXCLUDED.mod_id OR sibling
                                THEN LEAST(o.asset_created_at, EXCLUDED.asset_created_at)
                                ELSE EXCLUDED.asset_created_at END,
        first_indexed_at = CASE WHEN o.mod_id = EXCLUDED.mod_id OR sibling THEN o.first_indexed_at ELSE now() END,
        updated_at = now()
    WHERE (EXCLUDED.asset_created_at IS NOT NULL
           AND (o.asset_created_at IS NULL OR EXCLUDED.asset_created_at < o.asset_created_at))
       OR (o.mod_id = EXCLUDED.mod_id AND o.file_id IS NULL)
       OR sibling;
    RETURN NULL;
END
$$;

-- Releases indexed into one project that carry another project's jar (a second mod, or a pack
-- beside a mod): the GitHub role's reconciliation sends each again (its fingerprint is one no
-- release has), and the release job then moves each file to its own project (versions keep
-- their ids; the second project gets its own). A pack in a pack project of its type is not
-- counted (a renamed pack file is the same pack). Only repositories the GitHub App was given:
-- a webhook-only repository's releases move when GitHub next sends them.
WITH file_keys AS (
    SELECT m.github_repo_id, v.github_release_id, m.identity, m.project_type AS mod_type, f.project_type,
           CASE WHEN f.pack IS NOT NULL THEN NULL
                WHEN jsonb_typeof(f.manifests) = 'array' AND length(f.manifests -> 0 ->> 'mod_id') > 0
                THEN indexium_mod_key(f.manifests -> 0 ->> 'mod_id') END AS jar_key,
           f.pack IS NOT NULL AS is_pack
    FROM mods m JOIN mod_versions v ON v.mod_id = m.id JOIN version_files f ON f.version_id = v.id
    WHERE NOT v.hidden
), mixed AS (
    SELECT DISTINCT github_repo_id, github_release_id FROM file_keys
    WHERE (jar_key IS NOT NULL AND jar_key <> identity)
       OR (is_pack AND project_type IS DISTINCT FROM mod_type)
)
INSERT INTO github_release_sync (github_repo_id, github_release_id, fingerprint, delivery_id)
SELECT x.github_repo_id, x.github_release_id, '0025_project_identity', '0025_project_identity'
FROM mixed x JOIN github_repositories g ON g.github_repo_id = x.github_repo_id
ON CONFLICT (github_repo_id, github_release_id) DO UPDATE SET fingerprint = EXCLUDED.fingerprint;
