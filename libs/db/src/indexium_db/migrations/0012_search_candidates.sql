-- 0012_search_candidates: indexes for the bounded search paths (docs/schema.md, "API read
-- paths"; docs/api.md, "Search").
--
-- A text query matching more listed mods than catalog.BROAD_MATCHES is ranked from a
-- bounded candidate set: the most popular matches (mods_listed_downloads_idx, walked in
-- order) plus the mods whose name starts with the query, found here. text_pattern_ops so a
-- LIKE 'prefix%' is an index range whatever the database's collation.
CREATE INDEX mods_listed_name_pattern_idx ON mods (lower(name) text_pattern_ops) WHERE listed;

-- Typo correction picks the nearest catalogue word by trigram distance: GiST answers
-- ORDER BY word <-> $1 as a nearest-first index scan (and '%' / '<%' as index conditions),
-- where the GIN index could only hand over every word sharing a trigram, to be sorted.
CREATE INDEX search_words_trgm_gist_idx ON search_words USING gist (word gist_trgm_ops);
DROP INDEX search_words_trgm_idx;
