-- 0008_v2: what the Modrinth-v2-compatible surface (/v2, docs/api.md) needs that the catalogue
-- did not keep: stable opaque ids for mods, their teams and versions, and each file's own
-- version and mod id as its manifest declares them. docs/schema.md ("Modrinth v2 ids") describes them.

-- An 8-character base62 id not used yet in tbl.col. It always holds an upper-case letter, so it
-- can never be a slug (slugs are lower-case): one path segment is an id or a slug, never both.
-- Random bytes come from gen_random_uuid() (core, no pgcrypto), skipping the two bytes that carry
-- the UUID's version and variant bits.
CREATE FUNCTION indexium_new_public_id(tbl regclass, col text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    alphabet constant text := '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    positions constant int[] := ARRAY[0, 1, 2, 3, 4, 5, 10, 11];
    raw bytea;
    candidate text;
    taken boolean;
    i int;
BEGIN
    LOOP
        raw := uuid_send(gen_random_uuid());
        candidate := '';
        FOREACH i IN ARRAY positions LOOP
            candidate := candidate || substr(alphabet, get_byte(raw, i) % 62 + 1, 1);
        END LOOP;
        CONTINUE WHEN candidate !~ '[A-Z]';
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s WHERE %I = $1)', tbl, col) INTO taken USING candidate;
        EXIT WHEN NOT taken;
    END LOOP;
    RETURN candidate;
END
$$;

-- Stored once: an id handed to a launcher keeps naming the same mod or version forever.
CREATE FUNCTION indexium_public_ids_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.public_id IS DISTINCT FROM OLD.public_id THEN
        RAISE EXCEPTION 'public ids of % never change', TG_TABLE_NAME;
    END IF;
    IF TG_TABLE_NAME = 'mods' THEN  -- (nested: mod_versions rows have no team_id to read)
        IF NEW.team_id IS DISTINCT FROM OLD.team_id THEN
            RAISE EXCEPTION 'team ids of mods never change';
        END IF;
    END IF;
    RETURN NEW;
END
$$;

-- The unique constraints come first (NULLs do not collide): each new id's check below is then an
-- index probe, not a scan of the table, so giving ids to existing rows is linear, not quadratic.
ALTER TABLE mods ADD COLUMN public_id text, ADD COLUMN team_id text,
    ADD CONSTRAINT mods_public_id_key UNIQUE (public_id),
    ADD CONSTRAINT mods_team_id_key UNIQUE (team_id);
ALTER TABLE mod_versions ADD COLUMN public_id text,
    ADD CONSTRAINT mod_versions_public_id_key UNIQUE (public_id);

-- Existing rows: one statement per row, so each new id sees the ones given before it.
DO $$
DECLARE r record;
BEGIN
    FOR r IN SELECT id FROM mods ORDER BY created_at, id LOOP
        UPDATE mods SET public_id = indexium_new_public_id('mods', 'public_id'),
                        team_id = indexium_new_public_id('mods', 'team_id') WHERE id = r.id;
    END LOOP;
    FOR r IN SELECT id FROM mod_versions ORDER BY created_at, id LOOP
        UPDATE mod_versions SET public_id = indexium_new_public_id('mod_versions', 'public_id') WHERE id = r.id;
    END LOOP;
END
$$;

ALTER TABLE mods
    ALTER COLUMN public_id SET DEFAULT indexium_new_public_id('mods', 'public_id'),
    ALTER COLUMN public_id SET NOT NULL,
    ALTER COLUMN team_id SET DEFAULT indexium_new_public_id('mods', 'team_id'),
    ALTER COLUMN team_id SET NOT NULL,
    ADD CONSTRAINT mods_public_id_format CHECK (public_id ~ '^[0-9A-Za-z]{8}$' AND team_id ~ '^[0-9A-Za-z]{8}$');
ALTER TABLE mod_versions
    ALTER COLUMN public_id SET DEFAULT indexium_new_public_id('mod_versions', 'public_id'),
    ALTER COLUMN public_id SET NOT NULL,
    ADD CONSTRAINT mod_versions_public_id_format CHECK (public_id ~ '^[0-9A-Za-z]{8}$');

CREATE TRIGGER mods_public_ids_fixed BEFORE UPDATE OF public_id, team_id ON mods
    FOR EACH ROW EXECUTE FUNCTION indexium_public_ids_fixed();
CREATE TRIGGER mod_versions_public_id_fixed BEFORE UPDATE OF public_id ON mod_versions
    FOR EACH ROW EXECUTE FUNCTION indexium_public_ids_fixed();

-- The file's own version and mod id, from its first manifest record (the one the indexer takes
-- the mod's identity from). Derived by PostgreSQL from what the indexer already writes, so they
-- can never disagree with the stored manifests and existing rows get them at once.
ALTER TABLE version_files
    ADD COLUMN manifest_mod_id text GENERATED ALWAYS AS (manifests -> 0 ->> 'mod_id') STORED,
    ADD COLUMN manifest_version text GENERATED ALWAYS AS (manifests -> 0 ->> 'version') STORED;

-- v2 dependencies name mods by manifest id ("depends": {"sodium": ...}): resolved per version shown.
CREATE INDEX mods_manifest_id_idx ON mods (manifest_id) WHERE listed;
