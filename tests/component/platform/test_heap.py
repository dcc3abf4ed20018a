"""heap: the collector paused while a large structure is built and one pass once it is in, after
which everything alive is frozen; nothing when a process has not turned it on."""

from __future__ import annotations

import gc
import weakref

import pytest

from indexium_platform import heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def tracked(obj: object) -> bool:
    """Whether a collector pass would walk ``obj`` (frozen objects are in no generation)."""
    return any(o is obj for o in gc.get_objects())


def test_off_unless_a_process_turns_it_on():
    assert not heap.enabled()
    frozen = gc.get_freeze_count()
    with heap.building():
        assert gc.isenabled()
    assert heap.settle() is None
    assert gc.get_freeze_count() == frozen and gc.isenabled()


def test_building_pauses_automatic_passes_until_the_last_section_closes(heap_on):
    assert gc.isenabled()
    with heap.building():
        assert not gc.isenabled()
        with heap.building():  # a reload starting before the start-up load ended
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), heap.building():
        raise RuntimeError("the load failed")
    assert gc.isenabled()


def test_a_collector_someone_turned_off_stays_off(heap_on):
    gc.disable()
    with heap.building():
        pass
    assert not gc.isenabled()


def test_settle_collects_the_window_s_garbage_and_freezes_what_is_alive(heap_on):
    with heap.building():
        garbage = weakref.ref(Node())
        for _ in range(5000):  # allocations enough for several passes, were passes on
            Node()
        assert garbage() is not None  # paused: nothing collected it
        kept = Node()
        structure = {"a large structure": [kept]}
        seconds = heap.settle()
        assert garbage() is None
    assert seconds is not None and seconds >= 0
    assert gc.isenabled()
    assert not tracked(structure) and not tracked(kept)  # frozen: later passes skip them
    assert tracked({"made later": []})


def test_a_frozen_cycle_that_died_is_collected_by_the_next_settle(heap_on):
    with heap.building():
        dying = Node()
        heap.settle()
    assert not tracked(dying)
    gone = weakref.ref(dying)
    del dying  # a cycle, frozen: no automatic pass will find it
    gc.collect()
    assert gone() is not None
    with heap.building():
        heap.settle()
    assert gone() is None


def test_a_settle_not_full_walks_only_what_was_made_since_and_leaves_frozen_cycles_to_a_full_one(heap_on):
    with heap.building():
        dying = Node()
        heap.settle()
    gone = weakref.ref(dying)
    del dying  # a frozen cycle that died
    with heap.building():
        garbage = weakref.ref(Node())  # a cycle made since the last settle
        kept = Node()
        heap.settle(full=False)
    assert garbage() is None and not tracked(kept)  # collected; the rest frozen
    assert gone() is not None  # the frozen heap was not walked
    with heap.building():
        heap.settle()
    assert gone() is None


def test_watch_times_every_pass_and_the_metrics_export_them():
    before = heap.passes()
    heap.watch()
    try:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    finally:
        heap.watch(False)
    after = heap.passes()
    assert after[0][0] >= before[0][0] + 1 and after[2][0] >= before[2][0] + 2
    assert after[2][1] > before[2][1]  # seconds, summed
    assert sum(after[2][2]) == after[2][0]  # every pass in one bucket
    gc.collect(2)  # not watched: not counted
    assert heap.passes()[2][0] == after[2][0]

    from indexium_platform.metrics import ServiceMetrics
    assert b"gc_pause_seconds_count" not in ServiceMetrics("heaptest").render()[0]  # nothing unless watched
    heap.watch()
    try:
        text = ServiceMetrics("heaptest").render()[0].decode()
    finally:
        heap.watch(False)
    line = next(ln for ln in text.splitlines() if ln.startswith('indexium_heaptest_gc_pause_seconds_count{generation="2"}'))
    assert float(line.split()[1]) == after[2][0]
    assert 'indexium_heaptest_gc_pause_seconds_bucket{generation="2",le="+Inf"}' in text
