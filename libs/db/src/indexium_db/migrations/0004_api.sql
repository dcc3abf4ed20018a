-- 0004_api: what the public API reads fast — a version sort key, per-file facet pairs and
-- author keys on mods (trigger-maintained, so writers need no change), and indexes for
-- every filter and sort of GET /api/v1/mods. docs/schema.md ("API read paths") describes them.

-- A byte-comparable key that orders version strings the way people read them
-- (Maven ComparableVersion-like): numbers numerically, pre-release words before the
-- release, anything else after it. Tokens are separated by ' ', which sorts below every
-- token character, so comparing keys compares token lists:
--   number            '3' || 20 digits, zero-padded ("1.10" > "1.9"; longer numbers saturate)
--   alpha|a           '1a'      beta|b      '1b'      milestone|m  '1c'
--   rc|cr|pre|preview '1d'      snapshot    '1e'
--   release|final|ga  '2'       (the same as the end of the string)
--   any other word    '2w' || word  (after the release, before a further number)
--   end of string     '2'
-- Words before the first number ("v1.2", "mc1.20-2.0", "fabric-1.2.3") and semver build
-- metadata ("1.2.3+mc1.20.1") are ignored: they name the target, not the version.
-- Compared under COLLATE "C" (bytes), whatever the database's locale.
CREATE FUNCTION indexium_version_key(version text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    s   text := substring(split_part(lower(version), '+', 1) FROM '[0-9].*$');
    tok text;
    key text := '';
BEGIN
    FOR tok IN SELECT m[1] FROM regexp_matches(coalesce(s, ''), '([0-9]+|[a-z]+)', 'g') AS m LOOP
        IF tok ~ '^[0-9]' THEN
            tok := ltrim(tok, '0');
            key := key || '3' || CASE WHEN length(tok) > 20 THEN repeat('9', 20) ELSE lpad(tok, 20, '0') END;
        ELSE
            key := key || CASE
                WHEN tok IN ('alpha', 'a') THEN '1a'
                WHEN tok IN ('beta', 'b') THEN '1b'
                WHEN tok IN ('milestone', 'm') THEN '1c'
                WHEN tok IN ('rc', 'cr', 'pre', 'preview') THEN '1d'
                WHEN tok = 'snapshot' THEN '1e'
                WHEN tok IN ('release', 'final', 'ga') THEN '2'
                ELSE '2w' || tok
            END;
        END IF;
        key := key || ' ';
    END LOOP;
    RETURN key || '2';
END
$$;

ALTER TABLE mod_versions
    ADD COLUMN version_sort text COLLATE "C"
    GENERATED ALWAYS AS (indexium_version_key(version_number)) STORED;

-- A mod's versions newest first; update checks walk the same order.
CREATE INDEX mod_versions_mod_order_idx
    ON mod_versions (mod_id, version_sort DESC, published_at DESC NULLS LAST);

-- file_facets: every 'loader|game_version' pair that one public file supports, so
-- "game_version=1.20.1&loader=forge" is one GIN lookup that is still exact per file.
-- Recomputed whenever the roll-up is (mods.refresh_rollup always sets loaders/game_versions,
-- in the same transaction as the version change). author_keys: lower-cased manifest authors.
ALTER TABLE mods
    ADD COLUMN file_facets text[] NOT NULL DEFAULT '{}',
    ADD COLUMN author_keys text[] NOT NULL DEFAULT '{}';

CREATE FUNCTION mods_file_facets_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.file_facets := COALESCE((
        SELECT array_agg(DISTINCT l || '|' || g ORDER BY l || '|' || g)
        FROM mod_versions v
        JOIN version_files f ON f.version_id = v.id
        CROSS JOIN LATERAL unnest(f.loaders) AS l
        CROSS JOIN LATERAL unnest(f.game_versions) AS g
        WHERE v.mod_id = NEW.id AND v.status = 'public' AND NOT v.hidden
    ), '{}');
    RETURN NEW;
END
$$;

CREATE TRIGGER mods_file_facets BEFORE UPDATE OF listed, loaders, game_versions ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_file_facets_update();

CREATE FUNCTION mods_author_keys_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.author_keys := ARRAY(
        SELECT DISTINCT lower(btrim(a)) FROM unnest(NEW.authors) AS a WHERE btrim(a) <> '' ORDER BY 1);
    RETURN NEW;
END
$$;

CREATE TRIGGER mods_author_keys BEFORE INSERT OR UPDATE OF authors ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_author_keys_update();

-- Backfill both columns for rows written before this migration.
UPDATE mods SET loaders = loaders, authors = authors;

CREATE INDEX mods_file_facets_idx ON mods USING gin (file_facets) WHERE listed;
CREATE INDEX mods_author_keys_idx ON mods USING gin (author_keys) WHERE listed;
CREATE INDEX mods_categories_idx ON mods USING gin (categories) WHERE listed;
CREATE INDEX authors_login_lower_idx ON authors (lower(login));

-- Typo correction: every word of every mod's name and summary ('simple' lexemes, 3-40
-- characters), so a misspelt query word can be replaced by its nearest known word
-- ("furaces" -> "furnaces", "renderng" -> "rendering") before full-text search runs again.
-- Words are only ever added (a word left by a renamed mod corrects to nothing harmful).
CREATE TABLE search_words (word text PRIMARY KEY);
CREATE INDEX search_words_trgm_idx ON search_words USING gin (word gin_trgm_ops);

CREATE FUNCTION mods_search_words_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_words (word)
    SELECT w FROM unnest(tsvector_to_array(to_tsvector('simple',
        coalesce(NEW.name, '') || ' ' || coalesce(NEW.summary, '')))) AS w
    WHERE length(w) BETWEEN 3 AND 40
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER mods_search_words AFTER INSERT OR UPDATE OF name, summary ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_search_words_update();

INSERT INTO search_words (word)
SELECT DISTINCT w FROM mods, unnest(tsvector_to_array(to_tsvector('simple', name || ' ' || summary))) AS w
WHERE length(w) BETWEEN 3 AND 40
ON CONFLICT DO NOTHING;

-- One index per browse order (each ends with the slug, the API's final tie-breaker), so a
-- page of an unfiltered listing is an index walk that stops at LIMIT.
CREATE INDEX mods_listed_updated_idx ON mods (last_published_at DESC NULLS LAST, slug) WHERE listed;
CREATE INDEX mods_listed_downloads_idx ON mods (downloads DESC, slug) WHERE listed;
CREATE INDEX mods_listed_created_idx ON mods (created_at DESC, slug) WHERE listed;
CREATE INDEX mods_listed_name_idx ON mods (lower(name), slug) WHERE listed;
