-- 0020_topics_as_categories: a mod's categories come from one vocabulary (Modrinth's mod
-- categories, what /v2/tag/category serves); its other GitHub topics are plain tags. Before,
-- every topic was stored as a category: a topic "<script>alert('topic')</script>" was listed by
-- /v2/tag/category and search facets, and loaders ("fabric") appeared among the categories.
-- docs/schema.md describes it; indexium_content.categories is the rule the writers use.

-- Topics that are not categories, shown as text: GitHub topic syntax only, at most 20.
ALTER TABLE mods ADD COLUMN tags text[] NOT NULL DEFAULT '{}';

-- The rows stored before: classified once here, with the vocabulary and synonyms of
-- indexium_content.categories as of this migration (a later change to that table reaches a
-- mod at its next card write: a release, a push, a repository edit). The API keeps only
-- vocabulary names of what it serves in any case.
WITH vocabulary (word, category) AS (VALUES
    ('adventure', 'adventure'), ('cursed', 'cursed'), ('decoration', 'decoration'),
    ('economy', 'economy'), ('equipment', 'equipment'), ('food', 'food'),
    ('game-mechanics', 'game-mechanics'), ('library', 'library'), ('magic', 'magic'),
    ('management', 'management'), ('minigame', 'minigame'), ('mobs', 'mobs'),
    ('optimization', 'optimization'), ('social', 'social'), ('storage', 'storage'),
    ('technology', 'technology'), ('transportation', 'transportation'), ('utility', 'utility'),
    ('worldgen', 'worldgen'), ('tech', 'technology'), ('automation', 'technology'),
    ('machines', 'technology'), ('performance', 'optimization'), ('optimisation', 'optimization'),
    ('optimizations', 'optimization'), ('fps', 'optimization'), ('lib', 'library'),
    ('libraries', 'library'), ('api', 'library'), ('world-generation', 'worldgen'),
    ('world-gen', 'worldgen'), ('worldgeneration', 'worldgen'), ('terrain-generation', 'worldgen'),
    ('biomes', 'worldgen'), ('mob', 'mobs'), ('creatures', 'mobs'), ('furniture', 'decoration'),
    ('decorations', 'decoration'), ('decorative', 'decoration'), ('quality-of-life', 'utility'),
    ('qol', 'utility'), ('utilities', 'utility'), ('transport', 'transportation'),
    ('vehicles', 'transportation'), ('trains', 'transportation'), ('minigames', 'minigame'),
    ('game-mechanic', 'game-mechanics'), ('gameplay', 'game-mechanics'), ('armor', 'equipment'),
    ('armour', 'equipment'), ('weapons', 'equipment'), ('cooking', 'food'), ('farming', 'food'),
    ('magic-mod', 'magic'), ('spells', 'magic'), ('dungeons', 'adventure'),
    ('exploration', 'adventure'), ('rpg', 'adventure'), ('chat', 'social'),
    ('economy-mod', 'economy'), ('storage-mod', 'storage'), ('inventory', 'storage'),
    ('administration', 'management'), ('server-management', 'management')
), dropped (word) AS (VALUES
    ('bukkit'), ('bukkit-plugin'), ('bungeecord'), ('fabric'), ('fabric-api'), ('fabric-mc'),
    ('fabric-mod'), ('fabric-mods'), ('fabricmc'), ('folia'), ('forge'), ('forge-mod'),
    ('forge-mods'), ('java-edition'), ('liteloader'), ('mc'), ('mc-mod'), ('mcmod'), ('minecraft'),
    ('minecraft-fabric'), ('minecraft-forge'), ('minecraft-java'), ('minecraft-java-edition'),
    ('minecraft-mc'), ('minecraft-mod'), ('minecraft-modding'), ('minecraft-mods'),
    ('minecraft-neoforge'), ('minecraft-plugin'), ('minecraft-plugins'), ('minecraft-quilt'),
    ('minecraft-server'), ('minecraftforge'), ('minecraftmod'), ('mod'), ('modding'),
    ('modloader'), ('mods'), ('neoforge'), ('neoforge-mod'), ('neoforged'), ('paper'),
    ('paper-plugin'), ('plugin'), ('plugins'), ('purpur'), ('quilt'), ('quilt-mod'), ('quiltmc'),
    ('rift'), ('risugamis'), ('spigot'), ('spigot-plugin'), ('sponge'), ('sponge-plugin'),
    ('velocity'), ('velocity-plugin'), ('waterfall')
), topics AS (
    SELECT m.id, t.word, min(u.n) AS n
    FROM mods m CROSS JOIN LATERAL unnest(m.categories) WITH ORDINALITY AS u(raw, n)
         CROSS JOIN LATERAL (SELECT lower(btrim(u.raw)) AS word) t
    GROUP BY m.id, t.word
), split AS (
    SELECT m.id,
           ARRAY(SELECT v.category FROM topics t JOIN vocabulary v USING (word)
                 WHERE t.id = m.id GROUP BY v.category ORDER BY min(t.n)) AS categories,
           ARRAY(SELECT t.word FROM topics t
                 WHERE t.id = m.id AND t.word ~ '^[a-z0-9][a-z0-9-]{0,49}$'
                   AND NOT EXISTS (SELECT 1 FROM vocabulary v WHERE v.word = t.word)
                   AND NOT EXISTS (SELECT 1 FROM dropped d WHERE d.word = t.word)
                 ORDER BY t.n LIMIT 20) AS tags
    FROM mods m
    WHERE m.categories <> '{}'
)
UPDATE mods m SET categories = s.categories, tags = s.tags
FROM split s
WHERE m.id = s.id;
