"""The judged queries of bench/relevance: one expected mod each, in four classes, chosen by rule
(and by hand for abbreviations) before any measurement, from the catalogue catalogue.py builds.

* exact titles: 200 names drawn with a fixed seed, each name unique in the catalogue;
* typos: the same names with one typo in one word of 4 letters or more: a letter dropped,
  added, replaced or two neighbours swapped, equally likely (letters a-z);
* abbreviations: what players type for well-known mods (ours, from playing, not any project's
  alias list), kept where the catalogue has the mod under that exact name;
* description words: two words (4 letters or more, not stopwords, not in the name) of a mod's
  summary, in their order, 150 mods with a summary drawn with a fixed seed.
"""

from __future__ import annotations

import random
import re

# (typed, the catalogue's name of the mod meant)
ABBREVIATIONS = [
    ("jei", "Just Enough Items (JEI)"), ("rei", "Roughly Enough Items"), ("ae2", "Applied Energistics 2"),
    ("ic2", "Industrial Craft"), ("te", "Thermal Expansion"), ("tf", "The Twilight Forest"),
    ("bop", "Biomes O' Plenty"), ("eio", "Ender IO"), ("ie", "Immersive Engineering"),
    ("mca", "Minecraft Comes Alive"), ("jer", "Just Enough Resources (JER)"), ("aa", "Actually Additions"),
    ("de", "Draconic Evolution"), ("bm", "Blood Magic"), ("xu2", "Extra Utilities"), ("oc", "OpenComputers"),
    ("rs", "Refined Storage"), ("nei", "Not Enough Items"), ("if", "Industrial Foregoing"),
    ("svc", "Simple Voice Chat"), ("ma", "Mystical Agriculture"), ("pe", "ProjectE"),
    ("gtce", "GregTech Community Edition"), ("ee3", "Equivalent Exchange 3"), ("mfr", "MineFactoryReloaded 2"),
    ("top", "The One Probe"), ("id", "Integrated Dynamics"), ("ftbq", "FTB Quests (NeoForge)"),
    ("mi", "Modern Industrialization"), ("nc", "NuclearCraft"), ("pnc", "PneumaticCraft: Repressurized"),
    ("mek", "Mekanism"), ("jm", "JourneyMap"), ("td", "Thermal Dynamics"), ("sd", "Storage Drawers"),
    ("bc", "BuildCraft"), ("ob", "OpenBlocks"), ("as", "Astral Sorcery"), ("sb", "Sophisticated Backpacks"),
    ("ip", "Immersive Petroleum"),
]
STOPWORDS = frozenset("a an and are as at be by for from has have in into is it its of on or that the this "
                      "to was with without your you all any can more most some such than their them then "
                      "they what when which will also just only into over other".split())
_WORD = re.compile(r"[A-Za-z]+")


def typo(rng: random.Random, name: str) -> str | None:
    words = name.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not long:
        return None
    i = rng.choice(long)
    w = words[i]
    k = rng.randrange(1, len(w) - 1)
    c = rng.choice("abcdefghijklmnopqrstuvwxyz")
    kind = rng.choice(["drop", "add", "replace", "swap"])
    if kind == "drop":
        w = w[:k] + w[k + 1:]
    elif kind == "add":
        w = w[:k] + c + w[k:]
    elif kind == "replace":
        w = w[:k] + (c if c != w[k].lower() else "z" if c != "z" else "y") + w[k + 1:]
    else:
        w = w[:k] + w[k + 1] + w[k] + w[k + 2:]
    words[i] = w
    return " ".join(words)


def classes(mods: list[dict]) -> dict[str, list[tuple[str, str]]]:
    by_name: dict[str, list[dict]] = {}
    for m in mods:
        by_name.setdefault(m["name"].lower(), []).append(m)
    unique = [m for m in mods if len(by_name[m["name"].lower()]) == 1]
    rng = random.Random(1)
    titles = rng.sample(unique, 200)
    exact = [(m["name"], m["slug"]) for m in titles]
    typos = [(t, m["slug"]) for m in titles if (t := typo(rng, m["name"])) is not None]
    abbreviations = [(q, by_name[name.lower()][0]["slug"]) for q, name in ABBREVIATIONS if name.lower() in by_name]
    described = [m for m in mods if m["summary"]]
    words = []
    for m in random.Random(2).sample(described, min(150, len(described))):
        own = {w.lower() for w in _WORD.findall(m["name"])}
        candidates = [w.lower() for w in _WORD.findall(m["summary"])
                      if len(w) >= 4 and w.lower() not in STOPWORDS and w.lower() not in own]
        candidates = list(dict.fromkeys(candidates))
        if len(candidates) >= 2:
            i, j = sorted(random.Random(m["slug"]).sample(range(len(candidates)), 2))
            words.append((f"{candidates[i]} {candidates[j]}", m["slug"]))
    return {"exact titles": exact, "typos": typos, "abbreviations": abbreviations, "description words": words}
