"""trigram.in_at_least and at_least_layers: members of at least k (or j >= k) of the sets, against
counting them one by one; in_at_least both in C (_fastsearch.shared_counts, from
COUNT_IN_C_FROM sets on) and with bitmap layers (the C module taken away)."""

import array
import random

import pytest
from pyroaring import BitMap

from indexium_search import trigram
from indexium_search.trigram import at_least_layers, in_at_least


@pytest.fixture(params=["as built", "bitmap layers only"])
def counting(request, monkeypatch):
    if request.param == "bitmap layers only":
        monkeypatch.setattr(trigram, "_fastsearch", None)
    elif trigram._fastsearch is None:
        pytest.skip("_fastsearch is not built here (no C compiler): the layers case covers in_at_least")
    return request.param


@pytest.mark.parametrize(("seed", "rounds", "universe", "most", "set_counts", "within_size"), [
    (7, 300, 60, 40, (1, 8), 30),
    # As many sets as a long query has trigrams: every k, the layers cut to those that can reach it.
    (11, 40, 200, 120, (9, 30), 150),
])
def test_members_of_at_least_k_sets_as_counted_one_by_one(counting, seed, rounds, universe, most, set_counts,
                                                          within_size):
    rng = random.Random(seed)
    for _ in range(rounds):
        sets = [BitMap(rng.sample(range(universe), rng.randint(0, most))) for _ in range(rng.randint(*set_counts))]
        within = BitMap(rng.sample(range(universe), within_size)) if rng.random() < 0.5 else None
        for k in range(1, len(sets) + 2):
            counted = {x for x in range(universe) if sum(x in s for s in sets) >= k
                       and (within is None or x in within)}
            assert set(in_at_least(sets, k, within)) == counted, (sets, k, within)
            layers = at_least_layers(sets, k, within)
            for j in range(k, len(sets) + 1):  # Words.nearest reads the layers from k up
                at_j = {x for x in counted if sum(x in s for s in sets) >= j}
                assert set(layers[j]) == at_j, (sets, k, j, within)


def test_shared_counts_gives_each_member_its_count_and_refuses_what_it_cannot_count():
    fast = trigram._fastsearch
    if fast is None:
        pytest.skip("_fastsearch is not built here (no C compiler)")
    rng = random.Random(5)
    for _ in range(50):
        sets = [BitMap(rng.sample(range(3000), rng.randint(0, 900))) for _ in range(rng.randint(1, 20))]
        for k in (1, 2, len(sets) // 2 + 1, len(sets), len(sets) + 1):
            members, counts = fast.shared_counts([s.to_array() for s in sets], k)
            expected = sorted(x for x in BitMap.union(*sets) if sum(x in s for s in sets) >= k)
            assert list(members) == expected and (members.typecode, counts.typecode) == ("I", "H")
            assert list(counts) == [sum(x in s for s in sets) for x in expected]
    # Calls that cannot count raise, and leave the counters clean for the next call.
    with pytest.raises(ValueError, match="ascending"):
        fast.shared_counts([array.array("I", [9, 1]), array.array("I", [3])], 1)
    with pytest.raises(TypeError, match="uint32"):
        fast.shared_counts([array.array("H", [1, 2])], 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        fast.shared_counts([array.array("I", [1])], 0)
    two = fast.shared_counts([array.array("I", [1, 3]), array.array("I", [3])], 1)
    assert [list(x) for x in two] == [[1, 3], [1, 2]]
    assert [list(x) for x in fast.shared_counts([], 1)] == [[], []]
