-- 0023_project_types: packs beside mods (docs/schema.md, "Project types and packs"; docs/indexer.md, "Packs").
--
-- * mods.project_type: Modrinth's project type of the project (indexium_jar.formats.PROJECT_TYPES:
--   mod, plugin, resourcepack, datapack, shader, modpack), set by the release job from its
--   primary file. Rows from before: 'mod', or 'plugin' where every loader is a plugin loader.
-- * version_files.project_type: the file's own type (a release may carry a mod and its
--   resource pack); NULL for rows written before 0023 (a jar: its loaders tell).
-- * version_files.pack: the pack's normalized record (indexium_jar.model.PackRecord without
--   its files list, which is pack_files), NULL for jars; its loaders are Modrinth's pack
--   loaders (minecraft, datapack, iris, optifine, canvas, or a modpack's loader).
-- * version_files.game_versions_inferred / mod_versions.game_versions_inferred: the game
--   versions were not stated by the file but read from the release's name or tag (shader packs).
-- * pack_files: a modpack's files (modrinth.index.json "files"), at most 5,000 per pack file
--   (indexium_jar.packs.mrpack.MAX_FILES). Resolved to indexed versions when read, by sha512
--   or sha1 against version_files (the scan fills those hashes), so a mod indexed after the
--   pack still resolves; pack_files_sha512_idx answers "which modpacks include this file".

ALTER TABLE mods ADD COLUMN project_type text NOT NULL DEFAULT 'mod'
    CHECK (project_type ~ '^[a-z]{1,32}$');
UPDATE mods SET project_type = 'plugin'
 WHERE cardinality(loaders) > 0 AND loaders <@ ARRAY['bukkit', 'paper', 'bungeecord', 'velocity', 'sponge']::text[];

ALTER TABLE version_files
    ADD COLUMN project_type text CHECK (project_type ~ '^[a-z]{1,32}$'),
    ADD COLUMN pack jsonb,
    ADD COLUMN game_versions_inferred boolean NOT NULL DEFAULT false;

ALTER TABLE mod_versions ADD COLUMN game_versions_inferred boolean NOT NULL DEFAULT false;

CREATE TABLE pack_files (
    file_id     uuid NOT NULL REFERENCES version_files (id) ON DELETE CASCADE,
    path        text NOT NULL CHECK (length(path) BETWEEN 1 AND 512),
    sha1        char(40) NOT NULL,
    sha512      char(128) NOT NULL,
    file_size   bigint,
    downloads   text[] NOT NULL CHECK (cardinality(downloads) BETWEEN 1 AND 8),
    env_client  text,
    env_server  text,
    PRIMARY KEY (file_id, path)
);
CREATE INDEX pack_files_sha512_idx ON pack_files (sha512);
CREATE INDEX pack_files_sha1_idx ON pack_files (sha1);
