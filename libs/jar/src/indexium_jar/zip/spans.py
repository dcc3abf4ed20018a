"""Byte spans of one remote file already fetched, and planning what to fetch next. Pure."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable

Range = tuple[int, int]  # [start, end)


class SpanStore:
    """Fetched bytes of one file as sorted, non-overlapping, non-touching spans.

    Spans that overlap or touch are merged, so any range fetched in pieces can be
    handed to the pure parser as one contiguous window.
    """

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._data: list[bytes] = []

    def add(self, start: int, data: bytes | list[bytes]) -> None:
        """Hold ``data`` (bytes, or consecutive chunks of them) at ``start``."""
        chunks = data if isinstance(data, list) else [data]
        length = sum(map(len, chunks))
        if not length:
            return
        end = start + length
        # Spans [lo, hi) touch or overlap the new one.
        lo = bisect_right(self._starts, start) - 1
        if lo < 0 or self._starts[lo] + len(self._data[lo]) < start:
            lo += 1
        hi = bisect_right(self._starts, end)
        if lo == hi:
            self._starts.insert(lo, start)
            self._data.insert(lo, bytes(chunks[0]) if len(chunks) == 1 else b"".join(chunks))
            return
        # Spans never overlap each other, so only the first can reach before ``start`` and
        # only the last past ``end``: the merge is one join (one copy; a 2 MB directory
        # joining its tail was copied twice through a bytearray).
        first_start, first = self._starts[lo], self._data[lo]
        last_start, last = self._starts[hi - 1], self._data[hi - 1]
        pieces = []
        if first_start < start:
            pieces.append(first[: start - first_start])
        pieces += chunks
        if last_start + len(last) > end:
            pieces.append(last[end - last_start :])
        self._starts[lo:hi] = [min(start, first_start)]
        self._data[lo:hi] = [b"".join(pieces)]

    def window(self, pos: int) -> tuple[int, bytes]:
        """The span containing ``pos`` as ``(offset, data)``, or ``(pos, b"")``."""
        i = bisect_right(self._starts, pos) - 1
        if i >= 0 and pos < self._starts[i] + len(self._data[i]):
            return self._starts[i], self._data[i]
        return pos, b""

    def missing(self, start: int, end: int) -> list[Range]:
        """Parts of ``[start, end)`` not held yet."""
        gaps: list[Range] = []
        pos = start
        i = max(0, bisect_right(self._starts, start) - 1)
        while pos < end and i < len(self._starts):
            s, e = self._starts[i], self._starts[i] + len(self._data[i])
            if s >= end:
                break
            if e > pos:
                if s > pos:
                    gaps.append((pos, s))
                pos = max(pos, e)
            i += 1
        if pos < end:
            gaps.append((pos, end))
        return gaps

    def spans(self) -> list[Range]:
        return [(s, s + len(d)) for s, d in zip(self._starts, self._data, strict=True)]


def coalesce(ranges: Iterable[Range], gap: int) -> list[Range]:
    """Merge ranges whose distance is below ``gap``: one request instead of several."""
    merged: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if merged and start - merged[-1][1] < gap:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def plan_requests(
    required: Iterable[Range], optional: Iterable[Range] = (), *, max_gap: int, allowance: int
) -> tuple[list[Range], int]:
    """Group missing byte ranges into as few requests as the byte allowance permits.

    ``required`` ranges are always fetched; two of them share a request when the bytes
    between them (re-fetched or not needed) cost at most ``max_gap`` and fit the remaining
    ``allowance``; smallest gaps are bridged first. ``optional`` ranges (in priority order)
    never cost a request of their own: one is added only by widening a planned request,
    when the bytes that adds fit the allowance. Returns the requests, sorted, and the
    allowance left.
    """
    groups = [list(r) for r in coalesce(required, 1)]
    left = max(0, allowance)
    # Bridge the cheapest gaps first: each merge saves one request.
    while len(groups) > 1:
        gaps = sorted((groups[i + 1][0] - groups[i][1], i) for i in range(len(groups) - 1))
        gap, i = gaps[0]
        if gap > max_gap or gap > left:
            break
        left -= gap
        groups[i][1] = groups[i + 1][1]
        del groups[i + 1]
    for start, end in optional:
        if end <= start or not groups:
            continue
        best: tuple[int, int] | None = None  # (cost, index)
        for i, (g_start, g_end) in enumerate(groups):
            if start >= g_start and end <= g_end:
                best = (0, i)
                break
            reach = max(g_start - start, 0) + max(end - g_end, 0)
            gap = max(g_start - end, start - g_end, 0)
            if gap <= max_gap and (best is None or reach < best[0]):
                best = (reach, i)
        if best is None or best[0] > left:
            continue
        cost, i = best
        left -= cost
        groups[i] = [min(groups[i][0], start), max(groups[i][1], end)]
        # Widening may have made neighbours touch or overlap.
        groups = [list(r) for r in coalesce([tuple(g) for g in groups], 1)]
    return [(s, e) for s, e in groups], left
