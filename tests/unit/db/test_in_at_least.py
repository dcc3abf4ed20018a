"""trigram.in_at_least and at_least_layers: members of at least k (or j >= k) of the sets, against
counting them one by one."""

import random

import pytest
from pyroaring import BitMap

from indexium_db.trigram import at_least_layers, in_at_least


@pytest.mark.parametrize(("seed", "rounds", "universe", "most", "set_counts", "within_size"), [
    (7, 300, 60, 40, (1, 8), 30),
    # As many sets as a long query has trigrams: every k, the layers cut to those that can reach it.
    (11, 40, 200, 120, (9, 30), 150),
])
def test_members_of_at_least_k_sets_as_counted_one_by_one(seed, rounds, universe, most, set_counts, within_size):
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
