"""SearchIndex's prefix unions and name prefixes from the postings as loaded, laid end to end
(_fastsearch.union_range), against the union of the postings the index holds now: at a load,
after mods are re-read, dropped and added, again and again until most have changed (the
changed mods found by the lexemes they hold now, in their own postings); union_range's
refusals; and name_of (the fuzzy pass's names by ordinal) following the entries."""

from __future__ import annotations

import random
import uuid
from array import array
from datetime import UTC, datetime

import pytest
from pyroaring import BitMap

from indexium_search import searchindex
from indexium_search.searchindex import SearchIndex

# Prefix ranges of many lexemes, as slugs make them: 'dark', 'dark-armor', 'darkores', ...
STEMS = ["dark", "weapon", "weather", "villag", "b", "bee", "ore"]
TAILS = ["", "s", "armor", "-armor", "-armor-api", "ores", "plus", "-lib", "craft", "tweaks", "x", "xy"]
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def _fast():
    if searchindex._fastsearch is None:
        pytest.skip("_fastsearch is not built here (no C compiler): the prefix unions are BitMap's")
    return searchindex._fastsearch


def _row(rng: random.Random, slug: str, listed: bool = True) -> dict:
    lexemes = sorted({rng.choice(STEMS) + rng.choice(TAILS) for _ in range(rng.randint(1, 5))})
    heavy = set(rng.sample(lexemes, rng.randint(0, len(lexemes))))
    vector = " ".join(f"'{x}':{i + 1}{'A' if x in heavy else ''}" for i, x in enumerate(lexemes))
    name = " ".join(rng.sample(lexemes, min(2, len(lexemes))))
    return {"id": uuid.uuid4(), "slug": slug, "lower_name": name, "downloads": rng.randint(0, 1000),
            "last_published_at": T0, "created_at": T0, "vector": vector, "file_facets": [], "game_versions": [],
            "loaders": [], "categories": [], "environment": "both", "listed": listed, "updated_at": T0}


def _prefixes(index: SearchIndex) -> list[str]:
    return sorted({x[:i] for x in index.postings for i in range(1, len(x) + 1)} | {"zzz", "dar", "weaponsx"})


def _check(index: SearchIndex) -> int:
    """Every prefix's union (both tables) and every name prefix as the postings held now say;
    how many of the unions came from the laid postings. And each ordinal's name as its entry has it."""
    assert index.name_of == [e.name if e is not None else "" for e in index.entries]
    laid = 0
    for prefix in _prefixes(index):
        for heavy, table in ((False, index.postings), (True, index.heavy)):
            index._prefix_unions.clear()
            expected = BitMap.union(BitMap(), *[bm for x, bm in table.items() if x.startswith(prefix)])
            if index._laid:
                laid += index._laid_union(heavy, prefix) is not None
            assert index._prefixed(table, prefix) == expected, (prefix, heavy)
        names = BitMap(o for o in index._names if index.name_of[o].startswith(prefix))
        assert index.name_prefixed(prefix) == names, prefix
        within = BitMap(range(0, len(index.entries), 2))
        assert index.first_name_prefixed(prefix, within, 7) == list(names & within)[:7], prefix
    return laid


def test_prefix_unions_from_the_laid_postings_follow_rereads_drops_and_new_mods():
    _fast()
    rng = random.Random(3)
    index = SearchIndex.build([_row(rng, f"m{i}") for i in range(400)])
    assert index._laid and len(index._name_ordinals) == len(index._names) == 400
    assert _check(index) > 30  # (the prefix ranges of LAID_MIN_SETS lexemes or more)
    # Re-read with other lexemes, dropped (unlisted or gone), and new.
    for i in rng.sample(range(400), 40):
        index.upsert(_row(rng, f"m{i}", listed=rng.random() < 0.8))
    for i in rng.sample(range(400), 10):
        index.remove(f"m{i}")
    for i in range(400, 430):
        index.upsert(_row(rng, f"m{i}"))
    assert len(index._changed) > 50
    assert len(index._name_ordinals) == len(index._names) == len(index._name_offsets) - 1
    assert list(index._names) == sorted(index.listed, key=index._name_key)  # every listed mod, by name
    assert _check(index) > 30
    # Rounds of changes, each checked: changed mods changed again (re-read with other lexemes,
    # dropped, re-listed), until most mods have changed since the load: every union still laid.
    for _ in range(6):
        for i in rng.sample(range(470), 60):
            if rng.random() < 0.2:
                index.remove(f"m{i}")
            else:
                index.upsert(_row(rng, f"m{i}", listed=rng.random() < 0.9))
        assert _check(index) > 30
    assert len(index._changed) > 300
    assert index._changed_vocabulary[False] == sorted(index._changed_postings[False])


def test_an_index_without_the_c_module_unions_with_bitmaps(monkeypatch):
    monkeypatch.setattr(searchindex, "_fastsearch", None)
    rng = random.Random(4)
    index = SearchIndex.build([_row(rng, f"m{i}") for i in range(150)])
    assert not index._laid and len(index._name_offsets) == 1  # (no laid name sets)
    index.upsert(_row(rng, "m3"))
    _check(index)


def test_union_range_is_the_sorted_union_of_the_sets_and_refuses_bad_offsets():
    fast = _fast()
    rng = random.Random(5)
    for _ in range(200):
        sets = [sorted(rng.sample(range(5000), rng.randint(0, 40))) for _ in range(rng.randint(1, 30))]
        flat, offsets = array("I"), array("Q", [0])
        for s in sets:
            flat.extend(s)
            offsets.append(len(flat))
        lo = rng.randint(0, len(sets))
        hi = rng.randint(lo, len(sets))
        got = fast.union_range(flat, offsets, lo, hi)
        assert got.typecode == "I" and list(got) == sorted({x for s in sets[lo:hi] for x in s})
        # (a snapshot's laid postings are memoryviews over its mapping, cast from bytes)
        views = memoryview(flat.tobytes()).cast("I"), memoryview(offsets.tobytes()).cast("Q")
        assert list(fast.union_range(*views, lo, hi)) == list(got)
    flat, offsets = array("I", [1, 2, 3]), array("Q", [0, 2, 3])
    with pytest.raises(ValueError, match="lo and hi"):
        fast.union_range(flat, offsets, 1, 3)
    with pytest.raises(ValueError, match="lo and hi"):
        fast.union_range(flat, offsets, 2, 1)
    with pytest.raises(ValueError, match="past the end"):
        fast.union_range(flat, array("Q", [0, 4]), 0, 1)
    with pytest.raises(ValueError, match="decrease"):
        fast.union_range(flat, array("Q", [2, 1, 3]), 0, 2)
    with pytest.raises(TypeError, match="uint32"):
        fast.union_range(array("i", [1]), array("Q", [0, 1]), 0, 1)
    with pytest.raises(TypeError, match="uint64"):
        fast.union_range(flat, array("I", [0, 3]), 0, 1)
    # A failed call leaves the kept bit set clean: the next union has nothing of it.
    assert list(fast.union_range(array("I", [7, 9]), array("Q", [0, 1, 2]), 1, 2)) == [9]
