-- 0022_search_text: what search reads beyond the name, summary and authors, and how it reads
-- names (docs/schema.md, "Search text"; docs/api.md, "Search").
--
-- * mods.readme_text: the repository's README as plain text (filled by the README fetch:
--   queries/mods.set_readme, which cuts it to README_MAX_CHARS), matched through its own
--   vector, readme_vector: lexemes only (no positions, so no phrase and no rank share: a mod
--   matching only there ranks below every mod whose name, summary or authors match).
-- * Names written together are split for indexing (MoreRefinedStorage -> More Refined
--   Storage, Create2 -> Create 2), and words joined by '/' (Bukkit/Spigot/Paper, which the
--   parser reads as one file path) are indexed one by one, the joined forms kept too.
-- * mods.abbreviations: the mod's own abbreviations, derived from its name (initials, digits
--   and all-capital words kept: Applied Energistics 2 -> ae2, Ender IO -> eio) and its
--   manifest id; in search_vector with weight A, and a query equal to one ranks as an exact name.

-- Each word of t that has a capital inside it, a digit after letters or a '/' between two
-- characters, split there; '' when none has. Appended to the text a vector is made of, so
-- the joined form stays a lexeme and the parts become lexemes too.
CREATE FUNCTION search_split(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(
        replace(regexp_replace(regexp_replace(regexp_replace(m[1],
            '([[:lower:]])([[:upper:]])', '\1 \2', 'g'),
            '([[:upper:]])([[:upper:]][[:lower:]])', '\1 \2', 'g'),
            '([[:alpha:]])([[:digit:]])', '\1 \2', 'g'), '/', ' '), ' '), '')
    FROM regexp_matches(coalesce(t, ''),
        '(\S*(?:[[:lower:]][[:upper:]]|[[:upper:]][[:upper:]][[:lower:]]|[[:alpha:]][[:digit:]]|[^/[:space:]]/[^/[:space:]])\S*)',
        'g') AS m
    WHERE m[1] !~ '://'  -- (an address is not words)
$$;

-- The initials of a run of words: a number or an all-capital word (IO, XP, FTB) whole, any
-- other word its first letter; lower-cased. Words are split as search_split splits them,
-- apostrophes and what follows them in a word dropped (Tinkers', Xaero's, O').
CREATE FUNCTION search_initials(words text[]) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT lower(string_agg(CASE WHEN w ~ '^[[:digit:]]+$' OR w ~ '^[[:upper:]]{2,}[[:digit:]]*$' THEN w
                                 ELSE left(w, 1) END, '' ORDER BY i))
    FROM unnest(words) WITH ORDINALITY AS x(w, i)
$$;

-- The abbreviations a player may type for a mod: its name's initials (with and without the
-- little words: The Twilight Forest -> ttf, tf), and its manifest id with that id's initials
-- (just_enough_items -> jei); initials of 2 to 16 characters, of names of 2 words or more
-- (a one-word name is its own abbreviation). Bracketed parts of a name are left out
-- ("Just Enough Resources (JER)": its own JER is in the name's lexemes already).
CREATE FUNCTION mod_abbreviations(name text, manifest_id text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    WITH n AS (
        SELECT ARRAY(SELECT w FROM regexp_split_to_table(
            regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
                regexp_replace(coalesce(name, ''), '[\(\[\{][^\)\]\}]*[\)\]\}]?', ' ', 'g'),
                '[''’][[:alpha:]]*', '', 'g'),
                '([[:lower:]])([[:upper:]])', '\1 \2', 'g'),
                '([[:upper:]])([[:upper:]][[:lower:]])', '\1 \2', 'g'),
                '([[:alpha:]])([[:digit:]])', '\1 \2', 'g'),
                '[^[:alnum:]]+', ' ', 'g'), ' ') AS w WHERE w <> '') AS words),
    m AS (
        SELECT lower(coalesce(manifest_id, '')) AS id,
               ARRAY(SELECT w FROM regexp_split_to_table(lower(coalesce(manifest_id, '')), '[^[:alnum:]]+') AS w
                     WHERE w <> '') AS parts),
    candidates AS (
        SELECT 1 AS k, search_initials(n.words) AS a FROM n WHERE cardinality(n.words) >= 2
        UNION ALL
        SELECT 2, search_initials(ARRAY(SELECT w FROM unnest(n.words) AS w
                                       WHERE lower(w) NOT IN ('a', 'an', 'the', 'of', 'and', 'for', 'in', 'on',
                                                              'to', 'with', 'n')))
        FROM n WHERE cardinality(n.words) >= 2
        UNION ALL
        SELECT 3, m.id FROM m
        UNION ALL
        SELECT 4, search_initials(m.parts) FROM m WHERE cardinality(m.parts) >= 2)
    SELECT coalesce((SELECT array_agg(a ORDER BY k) FROM (
        SELECT DISTINCT ON (a) a, k FROM candidates
        WHERE a IS NOT NULL AND length(a) BETWEEN 2 AND CASE WHEN k = 3 THEN 64 ELSE 16 END
          AND a <> lower(coalesce(name, ''))
        ORDER BY a, k) d), '{}')
$$;

-- The README's lexemes, as search reads them: English stemming (Russian too where the text has
-- Cyrillic letters) as the summary's, words only: configurations without numbers, URLs, hosts,
-- paths and e-mail addresses (they would grow every replica's search index by lexemes nobody
-- searches for); 2 to 40 characters; no positions. ~1-2 ms a README of a few thousand characters.
CREATE TEXT SEARCH CONFIGURATION indexium_readme_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION indexium_readme_english
    DROP MAPPING FOR email, url, url_path, host, file, float, sfloat, int, uint, version;
CREATE TEXT SEARCH CONFIGURATION indexium_readme_russian (COPY = russian);
ALTER TEXT SEARCH CONFIGURATION indexium_readme_russian
    DROP MAPPING FOR email, url, url_path, host, file, float, sfloat, int, uint, version;

CREATE FUNCTION mod_readme_vector(readme text) RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT array_to_tsvector(ARRAY(
        SELECT w FROM unnest(tsvector_to_array(
            to_tsvector('indexium_readme_english'::regconfig, readme || ' ' || search_split(readme)) ||
            CASE WHEN readme ~ '[а-яёА-ЯЁ]'
                 THEN to_tsvector('indexium_readme_russian'::regconfig, readme || ' ' || search_split(readme))
                 ELSE ''::tsvector END)) AS w
        WHERE length(w) BETWEEN 2 AND 40))
$$;

ALTER TABLE mods
    -- 16,000 characters: a long README's text (mods.set_readme cuts it; README_MAX_CHARS).
    ADD COLUMN readme_text text NOT NULL DEFAULT '' CHECK (length(readme_text) <= 16000),
    ADD COLUMN readme_vector tsvector GENERATED ALWAYS AS (mod_readme_vector(readme_text)) STORED,
    ADD COLUMN abbreviations text[] NOT NULL DEFAULT '{}';

CREATE OR REPLACE FUNCTION mods_search_vector_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.abbreviations := mod_abbreviations(NEW.name, NEW.manifest_id);
    NEW.search_vector :=
        setweight(to_tsvector('simple', coalesce(NEW.name, '') || ' ' || coalesce(NEW.slug, '') || ' ' ||
                                        search_split(NEW.name) || ' ' || array_to_string(NEW.abbreviations, ' ')), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.name, '') || ' ' || search_split(NEW.name)), 'A') ||
        setweight(to_tsvector('english', coalesce(NEW.summary, '') || ' ' || search_split(NEW.summary)), 'B') ||
        setweight(to_tsvector('russian', coalesce(NEW.summary, '') || ' ' || search_split(NEW.summary)), 'B') ||
        setweight(to_tsvector('simple', array_to_string(NEW.authors, ' ') || ' ' ||
                                        search_split(array_to_string(NEW.authors, ' '))), 'C');
    RETURN NEW;
END
$$;

DROP TRIGGER mods_search_vector ON mods;
CREATE TRIGGER mods_search_vector BEFORE INSERT OR UPDATE OF name, slug, summary, authors, manifest_id ON mods
    FOR EACH ROW EXECUTE FUNCTION mods_search_vector_update();

-- Typo corrections know the split words too ("refned" -> refined, from MoreRefinedStorage).
CREATE OR REPLACE FUNCTION mod_search_words(name text, summary text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY(SELECT w FROM unnest(tsvector_to_array(to_tsvector('simple',
        coalesce(name, '') || ' ' || search_split(name) || ' ' || coalesce(summary, '') || ' ' ||
        search_split(summary)))) AS w
        WHERE length(w) BETWEEN 3 AND 40)
$$;

UPDATE mods SET name = name;
INSERT INTO search_words (word) SELECT DISTINCT unnest(mod_search_words(name, summary)) FROM mods
ON CONFLICT DO NOTHING;

CREATE INDEX mods_readme_vector_idx ON mods USING gin (readme_vector);
-- A broad query's candidates include the mods one of whose abbreviations is the query.
CREATE INDEX mods_abbreviations_idx ON mods USING gin (abbreviations) WHERE listed;
