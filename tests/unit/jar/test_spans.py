"""SpanStore and coalesce: the bookkeeping that keeps the reader from fetching a byte twice."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from indexium_jar.spans import SpanStore, coalesce


def test_adjacent_and_overlapping_spans_merge_into_one_window():
    store = SpanStore()
    store.add(10, b"abc")
    store.add(20, b"xyz")
    assert store.spans() == [(10, 13), (20, 23)]
    store.add(13, b"defg")  # touches the first
    assert store.spans() == [(10, 17), (20, 23)]
    store.add(15, b"FGhij")  # overlaps the first, touches the second
    assert store.spans() == [(10, 23)]
    assert store.window(12) == (10, b"abcdeFGhijxyz")
    assert store.window(23) == (23, b"")


def test_missing_parts():
    store = SpanStore()
    store.add(10, b"a" * 10)
    store.add(30, b"b" * 10)
    assert store.missing(0, 50) == [(0, 10), (20, 30), (40, 50)]
    assert store.missing(12, 18) == []
    assert store.missing(15, 35) == [(20, 30)]
    assert SpanStore().missing(5, 7) == [(5, 7)]


def test_coalesce_merges_only_close_ranges():
    assert coalesce([(100, 200), (0, 10), (250, 300), (1000, 1001), (5, 5)], gap=64) == [
        (0, 10),
        (100, 300),
        (1000, 1001),
    ]


ops = st.lists(st.tuples(st.integers(0, 200), st.binary(min_size=1, max_size=40)), max_size=12)


@settings(max_examples=200, deadline=None)
@given(ops, st.integers(0, 250), st.integers(0, 60))
def test_store_agrees_with_a_plain_byte_map(adds, start, length):
    store, model = SpanStore(), {}
    for offset, data in adds:
        store.add(offset, data)
        model.update({offset + i: b for i, b in enumerate(data)})
    spans = store.spans()
    assert all(a[1] < b[0] for a, b in itertools.pairwise(spans))  # sorted, not touching
    for pos, byte in model.items():
        offset, data = store.window(pos)
        assert data[pos - offset] == byte
    end = start + length
    held = {p for p in range(start, end) if p in model}
    gaps = store.missing(start, end)
    assert {p for s, e in gaps for p in range(s, e)} == set(range(start, end)) - held
