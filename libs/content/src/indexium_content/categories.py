"""GitHub topics onto one category vocabulary; every other topic a plain tag.

A repository's topics are whatever its owner typed (GitHub allows 20, lower-case letters,
digits and hyphens, 50 characters at most; a hostile webhook payload may carry anything).
Launchers show categories as filters and badges, so categories come from one fixed list:
:data:`CATEGORIES`, Modrinth's categories for mods (``GET /v2/tag/category`` on
api.modrinth.com, the ``categories`` header), which is what ``/v2/tag/category`` serves and
what Modrinth-speaking launchers know how to show.

* A topic that is a category is that category.
* A topic in :data:`SYNONYMS` (a small table, each with the reason it means that category)
  is its category.
* Loader names (:data:`LOADERS`) are never categories: the loaders are the jars' own fact,
  served as loaders (and in ``/v2`` search hits beside the categories, as Modrinth does).
* Words that say only "this is a Minecraft mod" (:data:`GENERIC`) are dropped.
* Anything else that looks like a GitHub topic stays a plain **tag** (at most
  :data:`MAX_TAGS`, shown as text, never a category); what does not look like a topic
  (markup, spaces, other scripts, over 50 characters) is dropped.

Pure: the indexer classifies what it writes, and the API keeps only the vocabulary of what
it serves (:func:`only_categories`), so rows written before this table are safe too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

# Modrinth's mod categories (header "categories"), checked against api.modrinth.com's
# /v2/tag/category: the names launchers filter by with ``categories:<name>``.
CATEGORIES = (
    "adventure", "cursed", "decoration", "economy", "equipment", "food", "game-mechanics", "library",
    "magic", "management", "minigame", "mobs", "optimization", "social", "storage", "technology",
    "transportation", "utility", "worldgen",
)
VOCABULARY = frozenset(CATEGORIES)

# Topic -> (category, why it means that category). Only words whose meaning among mod
# repositories is plain; a word that could mean two categories (``tools``: equipment or
# utility?) stays a tag.
_SYNONYM_TABLE: tuple[tuple[str, str, str], ...] = (
    ("tech", "technology", "the usual short form"),
    ("automation", "technology", "machines that work for the player are what tech mods are"),
    ("machines", "technology", "as automation"),
    ("performance", "optimization", "a faster game is what optimization mods promise"),
    ("optimisation", "optimization", "British spelling"),
    ("optimizations", "optimization", "plural"),
    ("fps", "optimization", "frames per second: performance"),
    ("lib", "library", "the usual short form"),
    ("libraries", "library", "plural"),
    ("api", "library", "a mod that is an API exists for other mods, as a library does"),
    ("world-generation", "worldgen", "the long form"),
    ("world-gen", "worldgen", "hyphenated form"),
    ("worldgeneration", "worldgen", "the long form without a hyphen"),
    ("terrain-generation", "worldgen", "terrain is the generated world"),
    ("biomes", "worldgen", "new biomes are world generation"),
    ("mob", "mobs", "singular"),
    ("creatures", "mobs", "Minecraft's creatures are mobs"),
    ("furniture", "decoration", "furniture mods add decorative blocks"),
    ("decorations", "decoration", "plural"),
    ("decorative", "decoration", "adjective"),
    ("quality-of-life", "utility", "quality-of-life mods are small utilities"),
    ("qol", "utility", "quality of life"),
    ("utilities", "utility", "plural"),
    ("transport", "transportation", "the short form"),
    ("vehicles", "transportation", "vehicles move the player"),
    ("trains", "transportation", "as vehicles"),
    ("minigames", "minigame", "plural"),
    ("game-mechanic", "game-mechanics", "singular"),
    ("gameplay", "game-mechanics", "a mod that changes how the game plays changes its mechanics"),
    ("armor", "equipment", "worn equipment"),
    ("armour", "equipment", "British spelling"),
    ("weapons", "equipment", "wielded equipment"),
    ("cooking", "food", "cooking mods add food"),
    ("farming", "food", "crops are food"),
    ("magic-mod", "magic", "'-mod' adds nothing"),
    ("spells", "magic", "spells are magic"),
    ("dungeons", "adventure", "dungeons are what adventure mods add"),
    ("exploration", "adventure", "exploring is adventure"),
    ("rpg", "adventure", "role-playing mods are adventure mods"),
    ("chat", "social", "talking to other players"),
    ("economy-mod", "economy", "'-mod' adds nothing"),
    ("storage-mod", "storage", "'-mod' adds nothing"),
    ("inventory", "storage", "inventory mods store items"),
    ("administration", "management", "server administration is management"),
    ("server-management", "management", "the long form"),
)
SYNONYMS: dict[str, str] = {word: category for word, category, _reason in _SYNONYM_TABLE}

# Mod loaders and server platforms: facts of the jars, never categories (a topic "fabric"
# says nothing a jar's fabric.mod.json does not say better).
LOADERS = frozenset({
    "fabric", "forge", "neoforge", "quilt", "liteloader", "modloader", "rift", "risugamis", "bukkit",
    "spigot", "paper", "purpur", "folia", "sponge", "bungeecord", "waterfall", "velocity",
    "fabricmc", "quiltmc", "minecraftforge", "neoforged", "fabric-mod", "forge-mod", "neoforge-mod",
    "quilt-mod", "fabric-mc", "minecraft-forge", "minecraft-fabric", "minecraft-neoforge", "minecraft-quilt",
    "fabric-api", "forge-mods", "fabric-mods", "spigot-plugin", "bukkit-plugin", "paper-plugin",
    "sponge-plugin", "velocity-plugin",
})
# Words that only say "this is a Minecraft mod" (every repository we index is one).
GENERIC = frozenset({
    "minecraft", "minecraft-mod", "minecraft-mods", "minecraftmod", "mc", "mc-mod", "mcmod", "mod", "mods",
    "modding", "minecraft-modding", "minecraft-java", "minecraft-java-edition", "java-edition",
    "minecraft-plugin", "minecraft-plugins", "plugin", "plugins", "minecraft-server", "minecraft-mc",
})

# GitHub's own rule for a topic: a lower-case letter or digit, then letters, digits and
# hyphens, 50 characters at most. A tag is only ever that: no markup can hide in it.
TOPIC = re.compile(r"[a-z0-9][a-z0-9-]{0,49}")
# GitHub allows 20 topics per repository: more tags than that came from something else.
MAX_TAGS = 20


class Topics(NamedTuple):
    categories: list[str]  # from the vocabulary, in the topics' order, each once
    tags: list[str]  # the other topics, plain text, each once, at most MAX_TAGS
    dropped: list[tuple[str, str]]  # (topic, at most 50 characters; reason): loader, generic, not_a_topic, too_many


def category_of(word: object) -> str | None:
    """The category a topic (or a filter's value) means, or None."""
    if not isinstance(word, str):
        return None
    word = word.strip().lower()
    return word if word in VOCABULARY else SYNONYMS.get(word)


def classify(topics: Iterable[object]) -> Topics:
    """A repository's topics as categories and tags (module docstring)."""
    categories: dict[str, None] = {}
    tags: dict[str, None] = {}
    dropped: list[tuple[str, str]] = []
    for topic in topics:
        word = topic.strip().lower() if isinstance(topic, str) else ""
        if not TOPIC.fullmatch(word):
            dropped.append((str(topic)[:50], "not_a_topic"))
        elif (category := category_of(word)) is not None:
            categories[category] = None
        elif word in LOADERS:
            dropped.append((word, "loader"))
        elif word in GENERIC:
            dropped.append((word, "generic"))
        elif len(tags) >= MAX_TAGS and word not in tags:
            dropped.append((word, "too_many"))
        else:
            tags[word] = None
    return Topics(list(categories), list(tags), dropped)


def only_categories(stored: Iterable[object]) -> list[str]:
    """What a serving path shows of stored categories: the vocabulary's, each once, in order.
    Exact names only (no synonyms), so every path that filters by category (SQL, the search
    index, facets) and every path that shows them agree on rows written before the vocabulary."""
    return list(dict.fromkeys(c for c in stored if isinstance(c, str) and c in VOCABULARY))


def only_tags(stored: Iterable[object]) -> list[str]:
    """What a serving path shows of stored tags: topic-shaped words, each once, at most MAX_TAGS."""
    return list(dict.fromkeys(t for t in stored if isinstance(t, str) and TOPIC.fullmatch(t)))[:MAX_TAGS]
