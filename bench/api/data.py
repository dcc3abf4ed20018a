"""Synthetic catalogue for the API bench: realistic-looking mods, versions and files, bulk-loaded
with COPY, then rolled up the way mods.refresh_rollup does (so triggers fill file_facets).

Deterministic for a given seed, so runs are comparable.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg

from indexium_content import categories as vocabulary

ADJECTIVES = ["Better", "Simple", "Extra", "Advanced", "Tiny", "Mega", "Ultimate", "Just", "Easy", "Smart",
              "Ancient", "Dark", "Cozy", "Quick", "Epic", "Magic", "Iron", "Golden", "Hidden", "Wild", "Modern",
              "Classic", "Enhanced", "Improved", "Infinite", "Lazy", "Clean", "Tech", "Arcane", "Fancy"]
NOUNS = ["Furnaces", "Chests", "Backpacks", "Storage", "Biomes", "Mobs", "Quests", "Maps", "Tools", "Armor",
         "Weapons", "Villagers", "Dungeons", "Structures", "Farming", "Cooking", "Trees", "Ores", "Caves",
         "Boats", "Rails", "Pipes", "Machines", "Magic", "Spells", "Dragons", "Pets", "Horses", "Fishing",
         "Lighting", "Shaders", "Rendering", "Performance", "Inventory", "Crafting", "Enchantments", "Potions",
         "Waystones", "Elevators", "Doors", "Fences", "Lanterns", "Banners", "Sounds", "Weather", "Seasons",
         "Skyblock", "Origins", "Minimap", "Waypoints", "Recipes", "Tooltips", "Chat", "Zoom", "Stacks"]
SUFFIXES = ["", "", "", " Lib", " API", " Tweaks", " Plus", " Reborn", " Expanded", " Overhaul", " Core", " Utils",
            " Addon", " Compat", " Fix", " Redux", " Unbound", " 2"]
VERBS = ["Adds", "Improves", "Overhauls", "Introduces", "Optimizes", "Tweaks", "Expands", "Reworks", "Fixes"]
OBJECTS = ["new furnaces and smelting recipes", "dozens of decorative blocks", "portable storage for players",
           "smarter villagers and trades", "procedurally generated dungeons", "a minimap with waypoints",
           "faster chunk rendering", "seasons that change crops", "magic spells and wands",
           "industrial machines powered by energy", "tooltips for every item", "better inventory sorting",
           "new biomes with unique trees", "hostile mobs with new behaviours", "cooking and food variety",
           "configurable zoom for the camera", "dynamic lighting for held torches", "cross-mod compatibility"]
TAILS = ["to the game.", "for survival worlds.", "without changing vanilla feel.", "for multiplayer servers.",
         "with full configuration.", "and works with most modpacks.", "inspired by classic mods."]
RU_SUMMARIES = ["Добавляет новые сундуки и рюкзаки для хранения предметов.",
                "Улучшает производительность рендеринга и загрузку чанков.",
                "Новые биомы, деревья и пещеры для исследования.",
                "Магические заклинания, посохи и зачарования.",
                "Умные жители и новые торговые предложения."]
FIRST = ["Alex", "Sam", "Jelly", "Vazkii", "Mr", "Dark", "Kit", "Luna", "Max", "Ivan", "Olga", "Mika", "Noah",
         "Zed", "Bee", "Fox", "Rin", "Tom", "Ada", "Kai"]
LAST = ["Squid", "Crafter", "Dev", "Builder", "Smith", "Miner", "Coder", "Petrov", "Wolf", "Stone", "Byte"]
TOPICS = ["minecraft", "minecraft-mod", "fabric", "forge", "neoforge", "optimization", "storage", "adventure",
          "magic", "technology", "decoration", "worldgen", "utility", "library", "food", "mobs", "equipment",
          "transportation", "economy", "game-mechanics"]
GAME_VERSIONS = ["1.16.5", "1.18.2", "1.19.2", "1.19.4", "1.20.1", "1.20.4", "1.20.6", "1.21", "1.21.1", "1.21.4"]
LOADER_SETS = [["fabric"], ["forge"], ["neoforge"], ["fabric", "quilt"], ["quilt"]]


# README bodies (mods.readme_text, issue 35): what a mod's README says in plain text. Lengths
# log-normal around 3,000 characters (a few screens), cut at the column's 16,000; words from
# the names' and summaries' vocabulary, a common modding vocabulary and a long tail of 200,000
# made-up words drawn by Zipf's law (items, blocks, config keys, other mods' names: what makes
# a README's vocabulary grow with the catalogue). Drawn from an RNG of their own, so the rest of
# the catalogue is the one earlier runs measured.
README_WORDS = ("the a and to of for with in on is you this mod it can be by are or your from will that "
                "adds new block blocks item items recipe recipes config configuration server client "
                "install installation download requires required dependency dependencies version "
                "versions fabric forge neoforge quilt minecraft game player players world worlds "
                "feature features support supported compatible compatibility issue issues report bug "
                "bugs license credits thanks contributors build building gradle java source code "
                "wiki discord guide usage command commands keybind keybinds option options settings "
                "screenshot screenshots gallery changelog release releases update updates modpack "
                "modpacks allowed permission texture textures model models sound sounds language "
                "translation translations energy power fluid fluids machine machines storage chest "
                "inventory gui menu render rendering shader shaders performance fps memory chunk "
                "chunks entity entities mob mobs biome biomes dimension dimensions structure "
                "structures loot table tables tag tags data pack packs resource resources api "
                "library integration addon addons plugin plugins multiplayer singleplayer survival "
                "creative hardcore craft crafting smelt smelting furnace tool tools weapon weapons "
                "armor enchantment enchantments potion potions effect effects food farming crop "
                "crops tree trees ore ores cave caves dungeon dungeons boss bosses villager trades").split()
README_TAIL = 200_000
README_MAX_CHARS = 16_000
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwxz" for v in "aeiou"] + ["th", "sh", "ch", "qu", "or", "an"]


def _tail_word(k: int) -> str:
    """The k-th made-up word: 2 to 4 syllables, the same for every run."""
    r = random.Random(k)
    return "".join(r.choice(_SYLLABLES) for _ in range(r.randint(2, 4)))


class _Readmes:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed * 7919 + 1)
        self.tail = [_tail_word(k) for k in range(README_TAIL)]
        weights = [1 / (k + 1) ** 1.05 for k in range(README_TAIL)]
        self.cum = list(itertools.accumulate(weights))
        self.common = README_WORDS + [w.lower() for w in ADJECTIVES + NOUNS + VERBS]

    def body(self, name: str, summary: str) -> str:
        rng = self.rng
        words = max(20, int(rng.lognormvariate(6.2, 0.8)))  # ~490 words (~3,000 characters) at the median
        common = rng.choices(self.common, k=words * 3 // 4)
        rare = rng.choices(self.tail, cum_weights=self.cum, k=words - len(common))
        body = common + rare
        rng.shuffle(body)
        lines = [f"# {name}", "", summary, ""]
        for i in range(0, len(body), 12):
            lines.append(" ".join(body[i:i + 12]) + ".")
        return "\n".join(lines)[:README_MAX_CHARS]


@dataclass
class Catalogue:
    mods: int = 0
    versions: int = 0
    files: int = 0
    names: list[str] = field(default_factory=list)  # for realistic queries
    sha1: list[str] = field(default_factory=list)  # a sample of hashes of public files
    newest_gv: dict[str, str] = field(default_factory=dict)  # sha1 -> a game version of that file


def _hex(rng: random.Random, n: int) -> str:
    return "%0*x" % (n, rng.getrandbits(n * 4))


def _name(rng: random.Random) -> str:
    shape = rng.random()
    if shape < 0.45:
        return f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS)}{rng.choice(SUFFIXES)}"
    if shape < 0.75:
        return f"{rng.choice(NOUNS)}{rng.choice(NOUNS)}{rng.choice(SUFFIXES)}"
    return f"{rng.choice(FIRST)}'s {rng.choice(NOUNS)}{rng.choice(SUFFIXES)}"


async def load(conn: asyncpg.Connection, n_mods: int, *, seed: int = 7, readmes: bool = True) -> Catalogue:
    rng = random.Random(seed)
    readme = _Readmes(seed) if readmes else None
    out = Catalogue()
    now = datetime.now(UTC)
    authors = [(i, f"{rng.choice(FIRST).lower()}{rng.choice(LAST).lower()}{i}") for i in range(1, 20_001)]
    await conn.copy_records_to_table("authors", records=authors, columns=["github_id", "login"])
    mods, versions, files, stats = [], [], [], []
    slugs: set[str] = set()
    asset = 0
    for i in range(n_mods):
        name = _name(rng)
        base = "-".join("".join(c for c in w.lower() if c.isalnum()) for w in name.split())
        slug = base if base not in slugs else f"{base}-{i}"
        slugs.add(slug)
        out.names.append(name)
        summary = (rng.choice(RU_SUMMARIES) if rng.random() < 0.05
                   else f"{rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}")
        owner_id, owner = rng.choice(authors)
        mod_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        created = now - timedelta(days=rng.uniform(1, 2000))
        mods.append((mod_id, 10_000_000 + i, f"{owner}/{slug}", slug[:64], slug, name[:128], summary,
                     summary + "\n\nMore details.", owner_id, [f"{rng.choice(FIRST)} {rng.choice(LAST)}"],
                     # what the indexer stores of the topics (queries/mods.py): the vocabulary's categories
                     vocabulary.classify(rng.sample(TOPICS, rng.randint(1, 3))).categories,
                     rng.choices(["client", "server", "both"], [25, 10, 65])[0], created,
                     readme.body(name, summary) if readme is not None else ""))
        published = created
        loaders = rng.choice(LOADER_SETS)
        for v in range(rng.choice([1, 1, 2, 2, 3, 4, 6])):
            published += timedelta(days=rng.uniform(1, 120))
            version_id = uuid.UUID(int=rng.getrandbits(128), version=4)
            gvs = sorted(rng.sample(GAME_VERSIONS[min(v * 2, 6):], rng.randint(1, 3)))
            number = f"{v // 3}.{v % 3}.{rng.randint(0, 9)}"
            versions.append((version_id, mod_id, number, 1_000_000 * i + v, number, f"{name} {number}",
                             rng.choices(["release", "beta", "alpha"], [85, 12, 3])[0], gvs, loaders, published,
                             "public"))
            per_file = [loaders] if len(loaders) == 1 or rng.random() < 0.6 else [[lo] for lo in loaders]
            for k, file_loaders in enumerate(per_file):
                asset += 1
                sha1 = _hex(rng, 40)
                files.append((uuid.UUID(int=rng.getrandbits(128), version=4), version_id, asset,
                              f"{slug}-{number}.jar", f"https://github.com/{owner}/{slug}/releases/download/{number}/"
                              f"{slug}-{number}.jar", rng.randint(20_000, 30_000_000), sha1,
                              hashlib.sha256(sha1.encode()).hexdigest(), _hex(rng, 128), file_loaders, gvs, k == 0,
                              int(rng.lognormvariate(5, 2.5)), "clean"))
                if rng.random() < 0.02:
                    out.sha1.append(sha1)
                    out.newest_gv[sha1] = gvs[-1]
        if rng.random() < 0.3:
            stats.append((mod_id, (now - timedelta(days=1)).date(), int(rng.lognormvariate(2, 2))))
    await conn.copy_records_to_table("mods", records=mods, columns=[
        "id", "github_repo_id", "repo_full_name", "slug", "manifest_id", "name", "summary", "description",
        "author_github_id", "authors", "categories", "environment", "created_at", "readme_text"])
    await conn.copy_records_to_table("mod_versions", records=versions, columns=[
        "id", "mod_id", "version_number", "github_release_id", "tag_name", "name", "version_type",
        "game_versions", "loaders", "published_at", "status"])
    await conn.copy_records_to_table("version_files", records=files, columns=[
        "id", "version_id", "github_asset_id", "filename", "url", "size", "sha1", "sha256", "sha512",
        "loaders", "game_versions", "is_primary", "download_count", "scan_status"])
    await conn.copy_records_to_table("mod_daily_stats", records=stats, columns=["mod_id", "day", "servers"])
    # The roll-up, in bulk (mods.refresh_rollup per mod would be 100,000 statements). Setting
    # loaders/game_versions fires the file_facets trigger for every row, as in production.
    await conn.execute("""
        WITH pub AS (SELECT * FROM mod_versions WHERE status = 'public' AND NOT hidden),
        latest AS (SELECT DISTINCT ON (mod_id) mod_id, version_number, published_at FROM pub
                   ORDER BY mod_id, published_at DESC NULLS LAST),
        agg AS (SELECT p.mod_id,
                       array_agg(DISTINCT l ORDER BY l) AS loaders
                FROM pub p, unnest(p.loaders) l GROUP BY p.mod_id),
        gv AS (SELECT p.mod_id, array_agg(DISTINCT g ORDER BY g) AS game_versions
               FROM pub p, unnest(p.game_versions) g GROUP BY p.mod_id),
        dl AS (SELECT p.mod_id, sum(f.download_count) AS downloads
               FROM pub p JOIN version_files f ON f.version_id = p.id GROUP BY p.mod_id)
        UPDATE mods m SET listed = true, latest_version = latest.version_number,
               last_published_at = latest.published_at, loaders = agg.loaders,
               game_versions = gv.game_versions, downloads = dl.downloads
        FROM latest JOIN agg USING (mod_id) JOIN gv USING (mod_id) JOIN dl USING (mod_id)
        WHERE m.id = latest.mod_id""")
    await conn.execute("VACUUM ANALYZE")
    out.mods, out.versions, out.files = len(mods), len(versions), len(files)
    return out
