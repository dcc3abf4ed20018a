-- 0014_search_words_function: the words a mod adds to search_words, defined once, for the
-- trigger that adds them and for the API's search index, which reads a re-read mod's words
-- with it (queries/indexed.py) instead of a copy of the trigger's expression. No data change.
-- docs/schema.md describes it.

CREATE FUNCTION mod_search_words(name text, summary text) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT ARRAY(SELECT w FROM unnest(tsvector_to_array(to_tsvector('simple',
        coalesce(name, '') || ' ' || coalesce(summary, '')))) AS w
        WHERE length(w) BETWEEN 3 AND 40)
$$;

CREATE OR REPLACE FUNCTION mods_search_words_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_words (word)
    SELECT unnest(mod_search_words(NEW.name, NEW.summary))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;
