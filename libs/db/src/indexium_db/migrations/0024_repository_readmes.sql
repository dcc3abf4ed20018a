-- 0024_repository_readmes: each mod repository's README as the GitHub role last read it
-- (GET /repos/{o}/{r}/readme, conditional on the stored ETag), rendered once when it changes
-- (indexium_content.markdown), and its plain text copied into mods.readme_text, which search
-- reads (0022). docs/schema.md ("READMEs"); SQL in queries/readmes.py.
--
-- Keyed by the repository's id (a renamed or transferred repository keeps its README), with
-- no foreign key: a mod can exist before its github_repositories row (webhook-only stacks),
-- and a mod row created after its README was read takes the text at insert (trigger below).

CREATE TABLE repository_readmes (
    github_repo_id  bigint PRIMARY KEY,
    -- GitHub's ETag of the JSON answer: sent back as If-None-Match (a 304 spends no quota).
    etag            text CHECK (char_length(etag) <= 200),
    path            text NOT NULL DEFAULT '' CHECK (char_length(path) <= 1024),   -- '' = no README
    branch          text NOT NULL CHECK (char_length(branch) <= 255),             -- resolved against
    raw_text        text NOT NULL DEFAULT '' CHECK (char_length(raw_text) <= 256000),
    html            text NOT NULL DEFAULT '' CHECK (char_length(html) <= 70000),
    plain_text      text NOT NULL DEFAULT '' CHECK (char_length(plain_text) <= 16000),
    truncated       boolean NOT NULL DEFAULT false,     -- html ends with "Read more on GitHub"
    renderer        smallint NOT NULL DEFAULT 1,        -- markdown.RENDERER when html was made
    fetched_at      timestamptz NOT NULL DEFAULT now(), -- the last 200 or 404
    checked_at      timestamptz NOT NULL DEFAULT now()  -- the last request, 304s included
);

-- The README's text reaches search: the repository's mods get plain_text (and updated_at, so
-- every API replica's search index re-reads them within its catch-up; the writer also
-- announces mod_changed.v1 after commit, which invalidates the card at once).
CREATE FUNCTION repository_readme_to_mods() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE mods SET readme_text = NEW.plain_text, updated_at = now()
     WHERE github_repo_id = NEW.github_repo_id AND readme_text IS DISTINCT FROM NEW.plain_text;
    RETURN NULL;
END
$$;

CREATE TRIGGER repository_readmes_to_mods
    AFTER INSERT OR UPDATE OF plain_text ON repository_readmes
    FOR EACH ROW EXECUTE FUNCTION repository_readme_to_mods();

-- A mod indexed after its repository's README was read starts with that text.
CREATE FUNCTION mod_readme_from_repository() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    text_now text;
BEGIN
    SELECT r.plain_text INTO text_now FROM repository_readmes r WHERE r.github_repo_id = NEW.github_repo_id;
    IF FOUND THEN
        NEW.readme_text := text_now;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER mods_readme_from_repository
    BEFORE INSERT ON mods
    FOR EACH ROW EXECUTE FUNCTION mod_readme_from_repository();
