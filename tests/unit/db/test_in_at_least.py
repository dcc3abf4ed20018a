"""trigram.in_at_least: members of at least k of the sets, against counting them one by one."""

import random

from pyroaring import BitMap

from indexium_db.trigram import in_at_least


def test_members_of_at_least_k_sets_as_counted_one_by_one():
    rng = random.Random(7)
    for _ in range(300):
        sets = [BitMap(rng.sample(range(60), rng.randint(0, 40))) for _ in range(rng.randint(1, 8))]
        within = BitMap(rng.sample(range(60), 30)) if rng.random() < 0.5 else None
        for k in range(1, len(sets) + 2):
            counted = {x for x in range(60) if sum(x in s for s in sets) >= k
                       and (within is None or x in within)}
            assert set(in_at_least(sets, k, within)) == counted, (sets, k, within)


def test_many_sets_as_counted_one_by_one():
    """As many sets as a long query has trigrams: every k, the layers cut to those that can reach it."""
    rng = random.Random(11)
    for _ in range(40):
        sets = [BitMap(rng.sample(range(200), rng.randint(0, 120))) for _ in range(rng.randint(9, 30))]
        within = BitMap(rng.sample(range(200), 150)) if rng.random() < 0.5 else None
        for k in range(1, len(sets) + 2):
            counted = {x for x in range(200) if sum(x in s for s in sets) >= k
                       and (within is None or x in within)}
            assert set(in_at_least(sets, k, within)) == counted, (k, len(sets))
