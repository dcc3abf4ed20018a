"""Compressed sizes of a jar's data-descriptor entries, packed to travel in an event.

The indexer has the central directory in hand; the scan stage streams the file front to
back, where an entry flagged with a data descriptor (bit 3) has zero sizes in its local
header. Handing the scan these sizes lets it step over such entries without inflating
them, and saves it a Range request of its own for the directory.

Format (version byte 1): zlib over two little-endian uint64 arrays of equal length, in
increasing offset order: the compressed sizes, then per entry the gap from the end of
its data to the next entry's local header (the first value: the first offset). A gap is
a header, a name and a descriptor, nearly the same number every time, so zlib packs a
pair into little more than the size's own entropy; packing and unpacking run mostly in
C (sorted, array, zlib, itertools) whatever the entry count.
"""

from __future__ import annotations

import itertools
import sys
import zlib
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping

_VERSION = b"\x01"
# A 53,000-entry jar packs to ~150 KiB; past this the sizes are not sent (the scan then
# inflates those entries to find their ends: slower, never wrong). Keeps a version's
# event well inside the VERSIONS stream's 1 MiB message limit.
MAX_PACKED = 256 * 1024
# All of one event's files together: the rest of a version's event (names, URLs) stays
# far below the other half of the 1 MiB limit.
EVENT_BUDGET = 512 * 1024
_U64 = (1 << 64) - 1
_MAX_PAIRS = 2_000_000  # what unpack accepts at most (a bound on the inflated size)


def _le(values: array) -> array:
    if sys.byteorder == "big":
        values.byteswap()
    return values


def pack(pairs: Iterable[tuple[int, int]], *, limit: int = MAX_PACKED) -> bytes:
    """``(offset, compressed size)`` pairs -> bytes; ``b""`` when there are none or they
    would pack to more than ``limit`` bytes."""
    ordered = sorted(pairs)
    if not ordered:
        return b""
    offsets = [o for o, _ in ordered]
    sizes = [s for _, s in ordered]
    # gap[i]: from the end of entry i-1's data to entry i's header (may be negative in a
    # doctored directory: stored as two's complement, undone by the same wrap on unpack).
    ends = list(map(int.__add__, offsets[:-1], sizes[:-1]))
    gaps = array("Q", [offsets[0]])
    gaps.extend(g & _U64 for g in map(int.__sub__, offsets[1:], ends))
    packed = _VERSION + zlib.compress(_le(array("Q", sizes)).tobytes() + _le(gaps).tobytes(), 6)
    return packed if len(packed) <= limit else b""


def within_budget(packed: Iterable[bytes], budget: int = EVENT_BUDGET) -> list[bytes]:
    """The same list, with ``b""`` for each entry past the point where they would add up to
    more than ``budget`` bytes (a release of many large jars: those scans inflate instead)."""
    out, used = [], 0
    for p in packed:
        fits = used + len(p) <= budget
        used += len(p) if fits else 0
        out.append(p if fits else b"")
    return out


class EntrySizes(Mapping[int, int]):
    """``{offset: compressed size}`` held in two arrays (16 bytes an entry, not a dict's ~100):
    the scan keeps it for a whole file while it streams."""

    __slots__ = ("_offsets", "_sizes")

    def __init__(self, offsets: array, sizes: array) -> None:
        self._offsets, self._sizes = offsets, sizes

    def _find(self, offset: int) -> int:
        i = bisect_right(self._offsets, offset) - 1  # the last of equal offsets, as a dict keeps
        return i if i >= 0 and self._offsets[i] == offset else -1

    def __getitem__(self, offset: int) -> int:
        i = self._find(offset)
        if i < 0:
            raise KeyError(offset)
        return self._sizes[i]

    def get(self, offset: int, default=None):
        i = self._find(offset)
        return self._sizes[i] if i >= 0 else default

    def in_order(self) -> Callable[[int], int | None]:
        """A ``get`` for a walk asking offsets in increasing order, as the scan's front-to-back
        walk does: the next entry is answered from a cursor, without a search (anything else
        is searched, and the cursor moves on past it). Same answers as ``get``."""
        offsets, sizes, n = self._offsets, self._sizes, len(self._offsets)
        i = 0

        def get(offset: int) -> int | None:
            nonlocal i
            if i < n and offsets[i] == offset and (i + 1 == n or offsets[i + 1] != offset):
                i += 1
                return sizes[i - 1]
            j = bisect_right(offsets, offset) - 1  # the last of equal offsets, as get() answers
            i = j + 1
            return sizes[j] if j >= 0 and offsets[j] == offset else None

        return get

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and self._find(offset) >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(dict.fromkeys(self._offsets))

    def __len__(self) -> int:
        return len(dict.fromkeys(self._offsets))


def unpack(data: bytes) -> EntrySizes | None:
    """The sizes by offset; None for ``b""`` or anything not packed by :func:`pack` (the
    caller then walks without sizes: they are an optimisation only)."""
    if not data or data[:1] != _VERSION:
        return None
    d = zlib.decompressobj()
    try:
        raw = d.decompress(data[1:], _MAX_PAIRS * 16 + 1)
    except zlib.error:
        return None
    if not d.eof or len(raw) > _MAX_PAIRS * 16 or len(raw) % 16:
        return None
    values = array("Q")
    values.frombytes(raw)
    _le(values)
    n = len(values) // 2
    sizes, gaps = values[:n], values[n:]
    steps = map(int.__add__, itertools.chain((0,), sizes[:-1]), gaps)  # header i - header i-1
    offsets = array("Q", (o & _U64 for o in itertools.accumulate(steps)))
    if not all(map(int.__le__, offsets, offsets[1:])):
        return None  # pack() writes them in increasing order
    return EntrySizes(offsets, sizes)
