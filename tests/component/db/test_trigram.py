"""indexium_search.trigram against PostgreSQL's own pg_trgm on the same words: similarity and
word_similarity to the last float4 bit, and sqlpath.corrected_query's nearest word chosen the same
(so a typo corrected in process is corrected to the word the SQL path would pick)."""

from __future__ import annotations

import itertools
import random
import shutil

import pytest

from indexium_search import trigram
from indexium_search import sqlpath
from indexium_search.trigram import (Words, distance, edits, nearest_edit, similar_among, similarity, trigram_set,
                                 word_similarity)

BASE = ["sodium", "furnaces", "furnace", "rendering", "lanterns", "iron", "chests", "magic", "storage", "biomes",
        "redux", "cozy", "weather", "farming", "tweaks", "waypoints", "villagers", "recipes", "enchantments",
        "tooltips", "elevators", "expanded", "improved", "skyblock", "aaa", "aaaa", "abab", "ababab", "mod",
        "api", "lib", "x1", "v2", "1192", "create", "createaddition", "oreganized", "spells", "zombies"]
ODD = ["café", "naïve", "Über", "сундук", "сундуки", "KELVIN\u212atest", "İstanbul", "a_b", "x-y", "ABC",
       "Fur naces", "o'brien", "日本語", "mix日本ed"]


def _mutations(rng: random.Random, w: str) -> list[str]:
    out = []
    for _ in range(4):
        i = rng.randrange(len(w))
        c = rng.choice("abcdefghijklmnopqrstuvwxyz")
        out += [w[:i] + w[i + 1:], w[:i] + c + w[i:], w[:i] + c + w[i + 1:], w[:i] + w[i + 1:i + 2] + w[i] + w[i + 2:]]
    return [x for x in out if x]


def _vocabulary(seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    words = BASE + ODD + [a + b for a, b in zip(BASE, reversed(BASE))]
    words += [x for w in BASE for x in _mutations(rng, w)]
    words += ["".join(rng.choice("abcdeiou") for _ in range(rng.randint(1, 9))) for _ in range(300)]
    return list(dict.fromkeys(words))


async def test_similarity_and_word_similarity_are_postgresqls_to_the_bit(db):
    words = _vocabulary()
    rng = random.Random(9)
    pairs = [(rng.choice(words), rng.choice(words)) for _ in range(6000)]
    pairs += [(a, a + " " + b) for a, b in zip(words, reversed(words))]  # names of several words
    for w in BASE:  # typos against their word, alone and inside names, both ways round
        for x in _mutations(rng, w):
            pairs += [(x, w), (w, x), (x, f"Better {w.title()} Mod"), (x[:4], w), (x, x + x)]
    pairs += [("sodim", "Sodium Extra"), ("coy", "cozy"), ("reux", "redux"), ("", "x"), ("ab", "")]
    rows = await db.fetch("SELECT similarity(a, b) AS s, word_similarity(a, b) AS ws, a <-> b AS d,"
                          " a <<-> b AS wd, show_trgm(a) AS t FROM unnest($1::text[], $2::text[]) AS p(a, b)",
                          [a for a, _ in pairs], [b for _, b in pairs])
    differ = [(a, b, r["s"], similarity(a, b), r["ws"], word_similarity(a, b))
              for (a, b), r in zip(pairs, rows)
              if (r["s"], r["ws"], r["d"], r["wd"]) != (similarity(a, b), word_similarity(a, b),
                                                        distance(similarity(a, b)), distance(word_similarity(a, b)))
              or set(r["t"]) != trigram_set(a)]
    assert not differ, differ[:10]
    assert sum(r["ws"] not in (0.0, 1.0) for r in rows) > 2000  # not only the trivial cases
    # similar_among (in C where built) over the ASCII pairs, one query against many names:
    # with threshold 0 every name's similarity, then only those at least the threshold
    by_query: dict[str, list[tuple[str, float]]] = {}
    for (a, b), r in zip(pairs, rows):
        if a.isascii() and b.isascii():
            by_query.setdefault(a, []).append((b, r["ws"]))
    assert sum(map(len, by_query.values())) > 5000
    differ = [(a, named[o][0], named[o][1], ours) for a, named in by_query.items()
              for o, ours in similar_among(a, [_Named(b) for b, _ in named], range(len(named)), 0.0).items()
              if ours != named[o][1]]
    assert not differ, differ[:10]
    assert all(len(similar_among(a, [_Named(b) for b, _ in named], range(len(named)), 0.0)) == len(named)
               for a, named in by_query.items())
    kept = 0
    for a, named in by_query.items():
        items = [_Named(b) for b, _ in named]
        ordinals = range(0, len(items), 2)
        expected = {o: named[o][1] for o in ordinals if named[o][1] >= 0.5}
        assert similar_among(a, items, ordinals, 0.5) == expected, a
        kept += len(expected)
    assert kept > 100


class _Named:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def test_similar_among_is_built_where_there_is_a_compiler_and_takes_ascii_only():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: word similarity in Python")
    assert trigram._fastsearch is not None, "a C compiler is here but _fastsearch is not built: run `make env`"
    for names in (["café"], ["ok", "日本語"]):
        with pytest.raises(ValueError):
            similar_among("cafe", [_Named(n) for n in names], range(len(names)), 0.0)
    with pytest.raises(ValueError):
        similar_among("naïve", [_Named("naive")], [0], 0.0)
    assert similar_among("cozy", [], [], 0.0) == {}
    assert similar_among("", [_Named("x")], [0], 0.0) == {0: 0.0}
    assert similar_among("x", [_Named(""), _Named("  ")], [0, 1], 0.0) == {0: 0.0, 1: 0.0}


def test_similar_among_without_the_c_module_is_the_python_loop(monkeypatch):
    names = ["Better Redux Mod", "redux", "reux", "", "a b c", "ancient tools utils"]
    items = [_Named(n) for n in names]
    with_c = similar_among("reux", items, range(len(names)), 0.0), similar_among("reux", items, [0, 1, 2, 5], 0.3)
    monkeypatch.setattr(trigram, "_fastsearch", None)
    assert similar_among("reux", items, range(len(names)), 0.0) == with_c[0] == {
        o: word_similarity("reux", n) for o, n in enumerate(names)}
    assert similar_among("reux", items, [0, 1, 2, 5], 0.3) == with_c[1]
    assert set(with_c[1]) == {o for o in (0, 1, 2, 5) if word_similarity("reux", names[o]) >= 0.3} != set()
    with pytest.raises(ValueError):
        similar_among("reux", [_Named("rëux")], [0], 0.1)


@pytest.mark.parametrize("c_module", ["as built", "without the C module"])
async def test_nearest_word_is_the_one_the_sql_path_picks(db, monkeypatch, c_module):
    # (as built: the shared trigrams counted and the ASCII words' word similarity in C, the
    # others' in Python; without: bitmap layers and Python alone)
    if c_module == "without the C module":
        monkeypatch.setattr(trigram, "_fastsearch", None)
    elif trigram._fastsearch is None:
        pytest.skip("_fastsearch is not built here (no C compiler)")
    words = _vocabulary()
    await db.execute("INSERT INTO search_words (word) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", words)
    every = [r[0] for r in await db.fetch("SELECT word FROM search_words")]
    index = Words(every)
    rng = random.Random(13)
    queries = list(dict.fromkeys(x.lower() for w in BASE for x in _mutations(rng, w) + [w + "s", w[:-1]]
                                 if len(x) >= 3 and x.lower() not in index))
    queries += ["qqqqq", "zzzzzz", "enchantmnts", "createadition", "xyzzy", "sodim", "abb", "bab"]
    queries += ["mixe", "mixedd", "cafes", "brien", "kelvi", "naives"]  # near words that are not ASCII
    # A middle letter dropped, two letters swapped: often too far for both trigram measures
    queries += list(dict.fromkeys(x for w in BASE if len(w) >= 4
                                  for x in (w[:len(w) // 2] + w[len(w) // 2 + 1:], w[1] + w[0] + w[2:])
                                  if x not in index))
    differ, corrected, by_word_similarity, tied, by_edit, by_cost = [], 0, 0, 0, 0, 0
    async with db.transaction():
        await sqlpath.typo_thresholds(db)
        for q in queries:
            sql = await sqlpath.corrected_query(db, q)
            ours = index.nearest(q, sqlpath.CORRECTION_SIMILARITY, sqlpath.FUZZY_WORD_SIMILARITY)
            corrected += ours not in (None, q)
            if ours not in (None, q):
                by_word_similarity += similarity(q, ours) < sqlpath.CORRECTION_SIMILARITY
                by_edit += ours not in index.similar(q, sqlpath.CORRECTION_SIMILARITY,
                                                     sqlpath.FUZZY_WORD_SIMILARITY)
                # (the smallest edit first: a word one letter replaced lost to one letter added)
                by_cost += any(trigram.edit_cost(q, w) > trigram.edit_cost(q, ours)
                               and similarity(q, w) > similarity(q, ours)
                               for w in index.similar(q, sqlpath.CORRECTION_SIMILARITY,
                                                      sqlpath.FUZZY_WORD_SIMILARITY))
                tied += any(w != ours and similarity(q, w) == similarity(q, ours) for w in every)
            if (sql or q) != (ours or q):  # (_corrected: None when nothing changes)
                differ.append((q, sql, ours))
    assert not differ, differ[:10]
    assert len(queries) // 2 < corrected < len(queries)  # both outcomes exercised
    assert by_word_similarity > 5 and tied > 5  # the fallback measure and the tie-break too
    assert by_edit > 5  # and the word one edit away, where both measures miss
    assert by_cost > 3  # and the edit cost deciding over the most shared trigrams


async def test_a_short_typo_is_corrected_to_the_smallest_edit_not_the_most_shared_trigrams(db):
    """"shars": "share" shares the most trigrams (0.5) but replaces a letter; "shards", "shears"
    and "sharks" (0.44) each add one, the commoner typo: one of them is the correction (the
    smaller word of the tie), in both paths."""
    words = ["share", "shears", "shards", "sharks", "stars", "xpshare"]
    await db.execute("INSERT INTO search_words (word) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", words)
    index = Words([r[0] for r in await db.fetch("SELECT word FROM search_words")])
    async with db.transaction():
        await sqlpath.typo_thresholds(db)
        sql = await sqlpath.corrected_query(db, "shars")
    assert sql == index.nearest("shars", sqlpath.CORRECTION_SIMILARITY, sqlpath.FUZZY_WORD_SIMILARITY) == "shards"
    assert similarity("shars", "share") > similarity("shars", "shards")
    assert trigram.edit_cost("shars", "share") == 2 and trigram.edit_cost("shars", "shards") == 1


def _osa(a: str, b: str) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein without repeated edits)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@pytest.mark.parametrize("word", ["abca", "aab", "c", "abcb"])
def test_edits_are_every_word_one_edit_away_once(monkeypatch, word):
    # Over a three-letter alphabet every string of length n - 1 to n + 1 can be listed: the
    # edits are exactly those at distance 1.
    monkeypatch.setattr(trigram, "EDIT_LETTERS", "abc")
    every = {"".join(t) for n in range(len(word) - 1, len(word) + 2) for t in itertools.product("abc", repeat=n)}
    got = edits(word)
    assert len(got) == len(set(got)) and word not in got and "" not in got
    assert set(got) == {x for x in every if x and _osa(word, x) == 1}


def test_the_word_one_edit_away_is_the_most_similar_then_the_smaller():
    assert nearest_edit("bots", {"bits", "boats", "bats", "boots2"}) == "boats"  # 0.375 over 0.25
    assert similarity("bts", "bats") == similarity("bts", "bits")
    assert nearest_edit("bts", {"bits", "bats"}) == "bats"  # a tie: the smaller word
    assert nearest_edit("rdx", {"redux"}) is None  # two edits away
    assert nearest_edit("reux", set()) is None
    # No catalogue word is longer than 40 characters: a longer word has no edit worth making.
    long = "a" * trigram.SEARCH_WORD_MAX_CHARS
    assert nearest_edit(long + "b", {long}) == long and edits(long + "bc") == []
    words = Words(["redux", "sodium", "iron"])
    assert words.nearest("reux", 0.4, 0.5) == "redux" and words.nearest("irno", 0.4, 0.5) == "iron"
    assert words.nearest("sodim", 0.4, 0.5) == "sodium" and words.nearest("rdx", 0.4, 0.5) is None


async def test_a_tie_one_edit_away_goes_to_the_smaller_word_in_both_paths(db):
    # "reux" is 0.375 similar to both "redux" and "remux" (and under both thresholds): the
    # SQL path's second statement and the word set pick the same word of the tie.
    words = ["remux", "redux", "zzzz"]
    assert similarity("reux", "redux") == similarity("reux", "remux") < sqlpath.CORRECTION_SIMILARITY
    await db.execute("INSERT INTO search_words (word) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", words)
    async with db.transaction():
        await sqlpath.typo_thresholds(db)
        sql = await sqlpath.corrected_query(db, "reux zzzz qqqq")
    assert sql == "redux zzzz qqqq" == " ".join(Words(words).nearest(w, 0.4, 0.5) or w for w in ("reux", "zzzz", "qqqq"))


def test_words_only_grow_and_know_their_members():
    index = Words(["sodium"])
    assert index.nearest("sodim", 0.4, 0.5) == "sodium" and "sodium" in index and len(index) == 1
    assert index.nearest("furaces", 0.4, 0.5) is None
    index.update(["furnaces", "sodium"])
    assert index.nearest("furaces", 0.4, 0.5) == "furnaces" and len(index) == 2


@pytest.mark.parametrize("c_module", ["as built", "without the C module"])
def test_nearest_by_word_similarity_reaches_words_that_are_not_ascii(monkeypatch, c_module):
    # Similarity below the correction threshold, word similarity over it: the second measure
    # finds them, a word with a letter outside ASCII too (its word similarity is Python's even
    # where the ASCII words' is C's); the smallest edit cost then chooses among them.
    if c_module == "without the C module":
        monkeypatch.setattr(trigram, "_fastsearch", None)
    elif trigram._fastsearch is None:
        pytest.skip("_fastsearch is not built here (no C compiler)")
    words = ["sodiumpluséxtra", "élansodiumcore", "zzz"]
    assert similarity("sodiu", words[0]) < 0.4
    assert word_similarity("sodiu", words[0]) > word_similarity("sodiu", words[1])
    assert sorted(Words(words).similar("sodiu", 0.4, 0.5)) == sorted(words[:2])
    assert trigram.edit_cost("sodiu", words[1]) < trigram.edit_cost("sodiu", words[0])
    assert Words(words).nearest("sodiu", 0.4, 0.5) == "élansodiumcore"
    assert Words(words[::2]).nearest("sodiu", 0.4, 0.5) == "sodiumpluséxtra"
    assert Words(["élansodiumcore", "sodiumcoreplu"]).nearest("sodiu", 0.4, 0.5) == "sodiumcoreplu"
    # The same edit cost and similarity as an ASCII word: the tie goes to the smaller word (code
    # point order, as PostgreSQL's C collation sorts them).
    tie = ["sodiumplusextra", "sodiumpluséxtra"]
    assert trigram.edit_cost("sodiu", tie[0]) == trigram.edit_cost("sodiu", tie[1])
    assert similarity("sodiu", tie[0]) == similarity("sodiu", tie[1]) < 0.4
    assert Words(tie[::-1]).nearest("sodiu", 0.4, 0.5) == "sodiumplusextra"
