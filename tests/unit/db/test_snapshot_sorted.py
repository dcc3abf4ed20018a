"""snapshot.Sorted: a snapshot's sorted string section plus the keys inserted since, read as one
sorted list (what the README vocabulary's prefix look-ups bisect and slice)."""

from __future__ import annotations

import bisect
import random

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
