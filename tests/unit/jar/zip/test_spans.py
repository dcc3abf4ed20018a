"""SpanStore and coalesce: the bookkeeping that keeps the reader from fetching a byte twice."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from indexium_jar.zip.spans import SpanStore, coalesce, plan_requests


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


def test_chunks_are_held_as_their_bytes_joined():
    store = SpanStore()
    store.add(10, [b"ab", b"c"])
    store.add(20, [b"x", b"yz"])
    store.add(13, [b"de", b"fg", b"hijk"])  # touches the first, overlaps the second
    assert store.spans() == [(10, 23)] and store.window(10) == (10, b"abcdefghijkyz")
    store.add(30, [])
    assert store.spans() == [(10, 23)]


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
@given(ops, st.integers(0, 250), st.integers(0, 60), st.integers(1, 7))
def test_store_agrees_with_a_plain_byte_map(adds, start, length, chunk):
    store, model = SpanStore(), {}
    for n, (offset, data) in enumerate(adds):
        # every other add as the chunks an HTTP body arrives in
        store.add(offset, [data[i : i + chunk] for i in range(0, len(data), chunk)] if n % 2 else data)
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


# --- plan_requests: fewest requests within a byte allowance ---------------------------------


def test_required_ranges_share_a_request_only_while_the_allowance_lasts():
    # gaps of 10 and 1000 bytes; the allowance pays for the first only
    assert plan_requests([(0, 10), (20, 30), (1030, 1040)], max_gap=64 * 1024, allowance=100) == (
        [(0, 30), (1030, 1040)], 90)
    assert plan_requests([(0, 10), (20, 30), (1030, 1040)], max_gap=64 * 1024, allowance=5000)[0] == [(0, 1040)]
    # never farther than max_gap, however rich
    assert plan_requests([(0, 10), (1030, 1040)], max_gap=500, allowance=10**9)[0] == [(0, 10), (1030, 1040)]


def test_cheapest_gaps_are_bridged_first():
    requests, left = plan_requests([(0, 10), (110, 120), (125, 130)], max_gap=1000, allowance=50)
    assert requests == [(0, 10), (110, 130)] and left == 45


def test_optional_ranges_never_cost_a_request_of_their_own():
    assert plan_requests([], [(0, 10)], max_gap=1000, allowance=10**9) == ([], 10**9)
    # next to a required one and cheap: added; far or too expensive: dropped
    assert plan_requests([(100, 200)], [(0, 90), (5000, 5010)], max_gap=1000, allowance=200) == (
        [(0, 200)], 100)
    assert plan_requests([(100, 200)], [(0, 90)], max_gap=1000, allowance=50) == ([(100, 200)], 50)
    # inside a planned request: free
    assert plan_requests([(0, 1000)], [(10, 20)], max_gap=1, allowance=0) == ([(0, 1000)], 0)


def test_widening_merges_requests_it_reaches():
    requests, _ = plan_requests([(0, 10), (30, 40)], [(10, 30)], max_gap=5, allowance=20)
    assert requests == [(0, 40)]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 300)), max_size=6),
    st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 300)), max_size=6),
    st.integers(0, 3000),
    st.integers(0, 2000),
)
def test_plan_covers_every_required_byte_and_spends_at_most_the_allowance(req, opt, allowance, max_gap):
    required = [(s, s + n) for s, n in req]
    optional = [(s, s + n) for s, n in opt]
    requests, left = plan_requests(required, optional, max_gap=max_gap, allowance=allowance)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(requests))  # sorted, disjoint, not touching
    covered = {p for s, e in requests for p in range(s, e)}
    assert {p for s, e in required for p in range(s, e)} <= covered
    needed = len({p for s, e in required for p in range(s, e)})
    assert 0 <= left <= allowance and len(covered) - needed <= allowance - left
    assert len(requests) <= len(coalesce(required, 1))
