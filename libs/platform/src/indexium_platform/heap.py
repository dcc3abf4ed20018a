"""CPython's cyclic garbage collector around a large structure a serving process builds and keeps
(the API's search index: about 1.3 million tracked objects for 100,000 mods).

Left alone, the collector walks such a structure again and again. While it is built, full
passes come every time the objects that survived since the last one grow by a quarter: 11 of
them in a 100,000-mod start-up load, the longest 0.7 s, 3.4 s in all; in a reload, with the old
index still held, 4 of up to 1.3 s. After it, any full pass walks it whole: about 0.6 s, every
request in flight stopped meanwhile (``bench/api/gcprofile.py``, 2026-12-04).

So, in a process that turns this on (:func:`enable`, from its ``main``; tests leave it off, as
their process holds everything the test run made):

* :func:`building`: automatic passes paused while the structure is built (reference counting
  still frees everything acyclic, which is nearly everything a request makes);
* :func:`settle`, once it is in place: one full pass over every object, frozen ones included
  (a cycle that died since the last settle is found, so nothing stays uncollected for longer
  than until the next load), then every object alive frozen out of later passes
  (``gc.freeze``): they walk only what was made since. ``settle(full=False)`` walks only what
  was made since the last settle (the API's refresh from a new snapshot, most of the time).

One pause per load instead of several, and later passes as short as in a process without the
structure. A frozen object is still freed when nothing refers to it (the index a reload
replaces); only a cycle that dies after a settle waits for the next one.

:func:`watch` (every service, from ``web.serve``) times every pass of the process, whatever
starts it: :func:`passes`, exported as ``indexium_<service>_gc_pause_seconds{generation}``
(``metrics.ServiceMetrics``). A pass stops the whole process, requests and consumers alike.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import time
from collections.abc import Iterator

_enabled = False
_pauses = 0  # building() sections open (a reload may start before the start-up load ends)
_resume = False  # whether automatic passes were on when the first section opened


def enable(on: bool = True) -> None:
    """Turn :func:`building` and :func:`settle` on for this process (off: both do nothing)."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled


@contextlib.contextmanager
def building() -> Iterator[None]:
    """Automatic collector passes paused until the last open section closes (then resumed if they
    were on when the first opened). Does nothing unless :func:`enable`\\ d."""
    global _pauses, _resume
    if not _enabled:
        yield
        return
    if _pauses == 0:
        _resume = gc.isenabled()
        gc.disable()
    _pauses += 1
    try:
        yield
    finally:
        _pauses -= 1
        if _pauses == 0 and _resume:
            gc.enable()


def settle(full: bool = True) -> float | None:
    """One full pass over every object, then everything alive frozen out of later passes; the
    seconds that took (every request in flight waits for it), or None unless enabled.

    ``full`` False: the frozen objects are not walked again, only those made since the last settle
    (the new structure's among them) before they are frozen too. For a structure whose predecessor
    reference counting frees whole (no cycle keeps it: the API's index from a snapshot); a cycle
    that died among the frozen objects (a connection frozen while open) waits for the next full
    settle, so a caller still settles fully now and then."""
    if not _enabled:
        return None
    started = time.perf_counter()
    if full:
        gc.unfreeze()
    gc.collect()
    gc.freeze()
    return time.perf_counter() - started


# Pause bounds in seconds: a young pass takes well under a millisecond, a full one over a large
# heap most of a second.
PAUSE_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
# generation -> [passes, seconds in all, passes per bucket (the last: over every bound)]
_passes: dict[int, list] = {g: [0, 0.0, [0] * (len(PAUSE_BUCKETS) + 1)] for g in range(3)}
_pass_started = 0.0
_watching = False


def _timed(phase: str, info: dict) -> None:
    global _pass_started
    now = time.perf_counter()
    if phase == "start":
        _pass_started = now
        return
    seconds = now - _pass_started
    series = _passes[info["generation"]]
    series[0] += 1
    series[1] += seconds
    series[2][bisect.bisect_left(PAUSE_BUCKETS, seconds)] += 1


def watch(on: bool = True) -> None:
    """Time every collector pass of this process from now on (off: no longer; the figures stay)."""
    global _watching
    if on and not _watching:
        gc.callbacks.append(_timed)
    elif not on and _watching:
        gc.callbacks.remove(_timed)
    _watching = on


def watching() -> bool:
    return _watching


def passes() -> dict[int, tuple[int, float, tuple[int, ...]]]:
    """Per generation (2: a full pass): passes timed, their seconds in all, and how many fell in
    each of :data:`PAUSE_BUCKETS` (not cumulative; the last count: longer than every bound)."""
    return {g: (n, total, tuple(buckets)) for g, (n, total, buckets) in _passes.items()}
