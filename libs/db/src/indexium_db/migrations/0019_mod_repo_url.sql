-- 0019_mod_repo_url: the mod's repository page as GitHub names it (the repository's html_url),
-- so every surface links the repository and its issues from one stored value: the site's mod
-- page ("GitHub repository", "Issues") and /v2's source_url and issues_url. docs/schema.md
-- describes it.

-- Written with the repository (mods.create, mods.update_repository) from the html_url of the
-- event or API answer that carried it, only when that is the page of this repository
-- (github.Repository.page_url: http(s), path /<owner>/<name>). NULL: none known yet; readers
-- then use https://github.com/<owner>/<name> (catalog.REPO_URL).
ALTER TABLE mods ADD COLUMN repo_url text;

-- Mods indexed before: the card's "sources" link, which the indexer set from the same
-- html_url, where it is this repository's page (a manifest's own "sources" link elsewhere is not).
UPDATE mods SET repo_url = rtrim(links->>'sources', '/')
WHERE links->>'sources' ~ '^https?://[^/@?#]+/[^?#]*$'
  AND lower(right(rtrim(links->>'sources', '/'), length(repo_full_name) + 1)) = '/' || lower(repo_full_name)
  AND length(rtrim(links->>'sources', '/')) <= 512;
