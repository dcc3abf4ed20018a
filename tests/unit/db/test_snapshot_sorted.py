"""snapshot.Sorted: a snapshot's sorted string section plus the keys inserted since, read as one
sorted list (what the README vocabulary's prefix look-ups bisect and slice)."""

from __future__ import annotations

import bisect
import random

import pytest

from indexium_search import snapshot


def _strings(tmp_path, items):
    path = tmp_path / "s.snap"
    with open(path, "wb") as f:
        w = snapshot._Writer(f)
        w.strings("words", items)
        w.close({"format": snapshot.FORMAT})
    return snapshot.Strings(snapshot.Snapshot(path), "words")


def test_sorted_reads_as_the_list_it_stands_for(tmp_path):
    rng = random.Random(5)
    words = sorted({"".join(rng.choice("abcdé") for _ in range(rng.randint(1, 6))) for _ in range(400)})
    base = words[::2]
    merged, model = snapshot.Sorted(_strings(tmp_path, base)), list(base)
    for key in [w for w in words[1::2]] + ["", "zzz", "ab\uffff"]:
        i = bisect.bisect_left(merged, key)
        assert i == bisect.bisect_left(model, key)
        merged.insert(i, key)
        model.insert(i, key)
        assert len(merged) == len(model)
        for prefix in ("", "a", "ab", "é", "dd", "z"):
            lo = bisect.bisect_left(merged, prefix)
            hi = bisect.bisect_left(merged, prefix + "\U0010ffff", lo)
            assert merged[lo:hi] == [w for w in model if w.startswith(prefix)]
    assert list(merged) == model and merged[-1] == model[-1]


def test_a_column_and_the_slug_map_read_as_the_list_and_dict_they_stand_for(tmp_path):
    """snapshot.Column (names, slugs by ordinal) and snapshot.SlugMap (by_slug) over the file,
    against a list and a dict given the same changes: set, appended, deleted, a slug re-listed."""
    from pyroaring import BitMap

    rng = random.Random(7)
    slugs = list(dict.fromkeys("".join(rng.choice("abcé-") for _ in range(rng.randint(1, 7))) for _ in range(300)))
    base = _strings(tmp_path, slugs)
    column, model = snapshot.Column(base), list(slugs)
    listed = BitMap(o for o in range(len(slugs)) if o % 7)  # (not every mod listed)
    by_slug, want = snapshot.SlugMap(base, listed), {slugs[o]: o for o in listed}
    for step in range(400):
        action = rng.random()
        if action < 0.3 and want:  # a mod dropped
            slug = rng.choice(sorted(want))
            del by_slug[slug], want[slug]
        elif action < 0.6:  # a mod (re-)listed, at its ordinal or a new one
            slug = rng.choice(slugs + [f"new-{step}"])
            o = rng.randrange(len(model) + 1)
            if o == len(model):
                column.append(slug)
                model.append(slug)
            else:
                column[o] = model[o] = slug
            by_slug[slug] = want[slug] = o
        for slug in (rng.choice(slugs), f"new-{step}", "", "zz"):
            assert by_slug.get(slug) == want.get(slug) and (slug in by_slug) == (slug in want)
    assert sorted(by_slug.items()) == sorted(want.items()) and sorted(by_slug) == sorted(want)
    assert len(by_slug) == len(want) and list(column) == model and column[-1] == model[-1]
    missing = next(s for s in slugs + ["absent"] if s not in want)
    with pytest.raises(KeyError):
        del by_slug[missing]
