"""Walk a zip archive front to back from a stream of chunks, in memory that does not grow with it.

Pure (no I/O, no threads): :class:`Reader` pulls ``bytes`` chunks from any iterator.

Entry data is found from local headers (APPNOTE 4.3.7). With a data descriptor
(flag bit 3) the local sizes are zero, so:

* DEFLATE: the deflate stream marks its own end; what follows is the descriptor;
* STORED: the central directory's size, when the caller fetched it first
  (``sizes``: local-header offset -> compressed size); otherwise the descriptor is
  found by its signature ``PK\\x07\\x08`` *and* a CRC-32 and size equal to those of
  the bytes before it, holding back at most 24 bytes.

The JVM finds entries through the central directory at the end, not through local
headers. So the directory is checked too, as it streams past: every record must
point at a local header we walked, with the same name, method and compressed size
(a compact fingerprint per entry: 16 bytes). Anything else (a record pointing into
another entry's data, bytes after the end record, an end record hidden in the
comment) is reported in :attr:`ZipWalk.problems`; malformed input raises
:class:`CorruptArchive`.
"""

from __future__ import annotations

import hashlib
import os
import struct
import sys
import zlib
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping

from isal import isal_zlib

from indexium_jar.zip.entrysizes import EntrySizes
from indexium_jar.zip.records import (
    CENTRAL_BODY,
    CENTRAL_SIG_BYTES as CENTRAL_SIG,
    DEFLATED,
    DESCRIPTOR,
    DESCRIPTOR64,
    DESCRIPTOR_SIG_BYTES as DESCRIPTOR_SIG,
    EOCD_BODY,
    EOCD_SIG_BYTES as EOCD_SIG,
    FLAG_DESCRIPTOR,
    FLAG_ENCRYPTED,
    LOCAL,
    LOCAL_BODY,
    LOCAL_SIG_BYTES as LOCAL_SIG,
    STORED,
    U32_MAX as _U32,
    U64_MAX,
    ZIP64_EOCD_SIG_BYTES as ZIP64_EOCD_SIG,
    ZIP64_EOCD_SIZE_FIELD,
    ZIP64_LOCATOR,
    ZIP64_LOCATOR_SIG_BYTES as ZIP64_LOCATOR_SIG,
    decode_name,
    replace_sentinels,
    zip64_extra_values,
)

try:  # the per-entry hot path in C (_fastwalk.c), built by `make env` where a compiler is
    from . import _fastwalk
except ImportError:  # not built: the same walk in Python below
    _fastwalk = None

_PRINT_KEY = os.urandom(16)
_HASH_IS_KEYED = bool(sys.flags.hash_randomization)
_PRINT_TAIL = struct.Struct("<HQ")
OUT_CHUNK = 256 * 1024  # inflated bytes produced per step
FIRST_PIECE = 4096  # compressed bytes first handed to the inflater when the entry's size is unknown
_CONSUMED: tuple[bytes, ...] = ()  # Entry._data once read_all took the bytes
# Whether ZipWalk(classes=...) hands plain entries to the C walk: it needs the module and the
# interpreter's keyed hash for the fingerprints (tests set it to False to compare the walks).
FAST_WALK = _fastwalk is not None and _HASH_IS_KEYED


class CorruptArchive(Exception):
    """The stream is not a zip archive we can walk."""


class LimitExceeded(Exception):
    """A configured bound (inflated bytes, entries) was crossed."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class Budget:
    """Bounds shared by an archive and every archive nested in it."""

    def __init__(self, max_inflated: int, max_entries: int):
        self.inflated_left = max_inflated
        self.entries_left = max_entries

    def inflate(self, n: int) -> None:
        self.inflated_left -= n
        if self.inflated_left < 0:
            raise LimitExceeded("inflate_limit", "the archive inflates to more than the limit")

    def entry(self) -> None:
        self.entries_left -= 1
        if self.entries_left < 0:
            raise LimitExceeded("too_many_entries", "the archive has more entries than the limit")


class Reader:
    """Sequential reads over an iterator of chunks, with look-ahead; knows its offset."""

    __slots__ = ("_chunks", "_buf", "_pos", "_base", "_eof")

    def __init__(self, chunks: Iterator[bytes]):
        self._chunks = chunks
        self._buf = b""
        self._pos = 0
        self._base = 0  # stream offset of _buf[0]
        self._eof = False

    @property
    def offset(self) -> int:
        return self._base + self._pos

    def _fill(self, need: int) -> bool:
        """Make at least ``need`` bytes available; False at end of stream."""
        while len(self._buf) - self._pos < need:
            if self._eof:
                return False
            chunk = next(self._chunks, None)
            if chunk is None:
                self._eof = True
                return False
            if not chunk:
                continue
            rest = len(self._buf) - self._pos
            self._base += self._pos
            self._buf = (self._buf[self._pos :] + bytes(chunk)) if rest else bytes(chunk)
            self._pos = 0
        return True

    def window(self, need: int = 1) -> tuple[bytes, int, int]:
        """``(buf, start, end)``: the bytes available now (at least ``need`` unless at the end)."""
        self._fill(need)
        return self._buf, self._pos, len(self._buf)

    def advance(self, n: int) -> None:
        self._pos += n

    def read(self, n: int) -> bytes:
        if len(self._buf) - self._pos < n and not self._fill(n):
            raise CorruptArchive("unexpected end of archive")
        out = self._buf[self._pos : self._pos + n]
        self._pos += n
        return out

    def skip(self, n: int) -> None:
        if len(self._buf) - self._pos >= n:  # the common case: inside the current chunk
            self._pos += n
            return
        while n:
            buf, start, end = self.window(1)
            if start == end:
                raise CorruptArchive("unexpected end of archive")
            step = min(n, end - start)
            self._pos += step
            n -= step

    def at_end(self) -> bool:
        return not self._fill(1)


class Entry:
    """One local entry. Call :meth:`data` at most once; the walk skips whatever is left."""

    __slots__ = ("_name", "raw_name", "method", "flags", "offset", "csize", "usize", "zip64", "_walk",
                 "_data", "compressed_read")

    def __init__(self, walk: ZipWalk, raw_name: bytes, flags: int, method: int, offset: int,
                 csize: int | None, usize: int | None, zip64: bool):
        self._walk = walk
        self.raw_name, self.flags, self.method, self.offset = raw_name, flags, method, offset
        self._name: str | None = None
        self.csize, self.usize, self.zip64 = csize, usize, zip64
        self._data: Iterator[bytes] | None = None
        self.compressed_read = 0

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = decode_name(self.raw_name, self.flags)
        return self._name

    @property
    def is_dir(self) -> bool:
        return self.raw_name.endswith(b"/")

    @property
    def readable(self) -> bool:
        return not self.flags & FLAG_ENCRYPTED and self.method in (STORED, DEFLATED)

    def read_all(self, limit: int) -> bytes:
        """All uncompressed bytes at once; LimitExceeded("entry_too_large") past ``limit``.

        One call instead of a chunk generator when the compressed size is known: most
        class files are a few KiB and the per-chunk overhead would dominate.
        """
        if self.csize is None or self.csize > limit + (limit >> 2) + 1024:
            return b"".join(self._collect(limit))
        if not self.readable:
            raise CorruptArchive(f"entry {self.name!r} is encrypted or uses an unsupported method")
        self._data = _CONSUMED  # the walk must not skip it again
        csize = self.csize
        r = self._walk._r
        buf, start = r._buf, r._pos
        if len(buf) - start < csize:  # not all in the window yet (else read in place: most classes)
            buf, start, end = r.window(csize)
            if end - start < csize:
                raise CorruptArchive("unexpected end of archive")
        r._pos = start + csize
        self.compressed_read = csize
        if self.method == STORED:
            if csize > limit:
                raise LimitExceeded("entry_too_large", f"{self.name}: larger than {limit} bytes")
            return buf[start : start + csize]
        d = isal_zlib.decompressobj(-zlib.MAX_WBITS)
        try:
            # Out of the window without a copy; bounded whatever the ratio.
            out = d.decompress(memoryview(buf)[start : start + csize], limit + 1)
        except isal_zlib.error:
            raise CorruptArchive(f"invalid deflate data in {self.name!r}") from None
        if len(out) > limit:
            raise LimitExceeded("entry_too_large", f"{self.name}: larger than {limit} bytes")
        if not d.eof:
            raise CorruptArchive(f"entry {self.name!r} is truncated")
        self._walk._budget.inflate(len(out))
        return out

    def _collect(self, limit: int) -> Iterator[bytes]:
        size = 0
        for chunk in self.data():
            size += len(chunk)
            if size > limit:
                raise LimitExceeded("entry_too_large", f"{self.name}: larger than {limit} bytes")
            yield chunk

    def data(self) -> Iterator[bytes]:
        """The uncompressed bytes, in chunks."""
        if self._data is not None:
            raise RuntimeError("entry data already opened")
        if not self.readable:
            raise CorruptArchive(f"entry {self.name!r} is encrypted or uses an unsupported method")
        self._data = self._walk._entry_data(self)
        return self._data


class ClassBatch:
    """Entries the C walk takes at once (``ZipWalk(classes=...)``). Iterate :attr:`hits` (once,
    to the end, before the walk goes on): ``(raw name, flags, bytes)`` of the classes that
    pass the prefilter, in order, each handed over as soon as it is read while helper threads
    read the next ones; then :attr:`classes` is how many ``.class`` entries it took."""

    __slots__ = ("classes", "entries", "_walk", "_c")

    def __init__(self, walk: "ZipWalk", c):
        self.classes = self.entries = 0
        self._walk, self._c = walk, c

    @property
    def hits(self) -> Iterator[tuple[bytes, int, bytes]]:
        c = self._c
        if c is None:
            return
        next_hit = c.next_hit
        while (hit := next_hit()) is not None:
            yield hit
        self._finish()

    def _finish(self) -> None:
        """The batch's end (hits not asked for are dropped): the walk goes on after it."""
        c, self._c = self._c, None
        if c is not None:
            pos, self.entries, self.classes, inflated, walked = c.finish()
            self._walk._took(pos, self.entries, inflated, walked)


class ZipWalk:
    def __init__(self, reader: Reader, *, budget: Budget, sizes: Mapping[int, int] | None = None,
                 max_class_bytes: int | None = None, inflate_threads: int = 1):
        """``max_class_bytes``: lets entries() hand runs of plain entries to the C walk as
        :class:`ClassBatch` items (when it is built, see FAST_WALK): classes up to that size
        are inflated and prefiltered there, every other entry but a nested jar is skipped;
        entries with a data descriptor only when ``sizes`` gives their size. At most
        ``inflate_threads`` threads read one batch's classes (ScanLimits.inflate_threads)."""
        self._r = reader
        self._threads = inflate_threads
        self._not_batched = -1  # the offset of an entry a batch did not take: the Python walk's
        self._budget = budget
        # Never tested for truth: len() of EntrySizes builds a dict over every entry. Asked
        # in increasing offset order: EntrySizes answers those from a cursor.
        self._size_of = None if sizes is None else sizes.in_order() if isinstance(sizes, EntrySizes) else sizes.get
        self._offsets = array("Q")  # local header offsets, increasing
        self._prints = array("Q")  # fingerprint of (name, method, compressed size) per offset
        self.problems: list[str] = []
        self.entries_seen = 0
        self._next_record = 0  # where the next directory record usually is in _offsets
        self._class_limit = max_class_bytes if FAST_WALK else None
        self._keys = self._sizes = None  # the sizes for the C walk: offsets (increasing) and sizes
        if self._class_limit is not None and sizes is not None:
            if isinstance(sizes, EntrySizes):
                self._keys, self._sizes = sizes._offsets, sizes._sizes
            else:
                try:
                    pairs = sorted(sizes.items())
                    self._keys, self._sizes = array("Q", [o for o, _ in pairs]), array("Q", [s for _, s in pairs])
                except (TypeError, OverflowError):  # not offsets and sizes: the Python walk alone
                    self._class_limit = None

    def _problem(self, text: str) -> None:
        if len(self.problems) < 20:
            self.problems.append(text)

    @staticmethod
    def _print(raw_name: bytes, method: int, csize: int) -> int:
        # Keyed with a secret per-process key: whoever writes the archive controls both
        # names, so an unkeyed 64-bit hash would fall to a 2^32 birthday search. The
        # interpreter's own bytes hash is SipHash keyed at random per process (unless
        # PYTHONHASHSEED pins it): 10x cheaper than blake2b.
        if _HASH_IS_KEYED:
            return hash((raw_name, method, csize)) & 0xFFFFFFFFFFFFFFFF
        h = hashlib.blake2b(raw_name + _PRINT_TAIL.pack(method, csize), digest_size=8, key=_PRINT_KEY)
        return int.from_bytes(h.digest(), "little")

    # --- the walk ---------------------------------------------------------------------------
    def entries(self) -> Iterator[Entry]:
        r = self._r
        local_size = LOCAL.size
        while True:
            buf, start = r._buf, r._pos
            end = len(buf)
            if end - start < local_size:
                buf, start, end = r.window(local_size)
                if start == end:
                    raise CorruptArchive("no end of central directory record")
            offset = r._base + start
            sig = buf[start : start + 4]
            if sig == LOCAL_SIG:
                if (self._class_limit is not None and offset != self._not_batched
                        and (self._keys is not None or not buf[start + 6] & FLAG_DESCRIPTOR)):
                    batch = self._batch(buf, start)
                    if batch is not None:
                        yield batch
                        batch._finish()  # (done already when its hits were read to the end)
                        if not batch.entries:  # its first class was not for it: the Python walk's
                            self._not_batched = offset
                        continue
                entry = self._local(offset, buf, start, end)
                yield entry
                self._finish(entry)
            elif sig == CENTRAL_SIG:
                r.advance(4)
                self._central_directory(offset)
                return
            elif sig == EOCD_SIG and not self._offsets:
                r.advance(4)
                self._end_record(offset, cd_offset=offset, cd_size=0)
                return
            else:
                raise CorruptArchive(f"unexpected record at offset {offset}")

    def _batch(self, buf: bytes, start: int) -> ClassBatch | None:
        """The plain entries from ``buf[start:]`` on, walked in C; None if it takes none (the
        entry at ``start`` is then one only the Python walk handles)."""
        budget, offsets = self._budget, self._offsets
        c = _fastwalk.walk_batch_start(
            buf, start, self._r._base, self._keys, self._sizes, budget.entries_left, budget.inflated_left,
            self._class_limit, offsets[-1] + 1 if offsets else 0, self._threads)
        return None if c is None else ClassBatch(self, c)

    def _took(self, pos: int, n: int, inflated: int, walked: bytes) -> None:
        """What a batch took: ``n`` entries up to ``pos`` in the reader's window."""
        if not n:
            return
        budget = self._budget
        self._r._pos = pos
        budget.entries_left -= n
        budget.inflated_left -= inflated
        self.entries_seen += n
        pairs = array("Q", walked)
        self._offsets.extend(pairs[0::2])
        self._prints.extend(pairs[1::2])

    def _local(self, offset: int, buf: bytes, start: int, end: int) -> Entry:
        """The entry whose header starts the window ``buf[start:end]``."""
        # Parsed in place in the reader's window (unpack_from, one slice for the name): the
        # per-entry fixed cost is most of the walk when entries are small class files.
        budget = self._budget
        if budget.entries_left <= 0:
            budget.entry()  # the limit is crossed: raises
        budget.entries_left -= 1
        self.entries_seen += 1
        r = self._r
        if end - start < LOCAL.size:
            raise CorruptArchive("unexpected end of archive")
        (_sig, _need, flags, method, _time, _date, _crc, csize, usize, nlen, elen) = LOCAL.unpack_from(buf, start)
        header = LOCAL.size + nlen + elen
        if end - start < header:
            buf, start, end = r.window(header)
            if end - start < header:
                raise CorruptArchive("unexpected end of archive")
        name_at = start + LOCAL.size
        raw_name = buf[name_at : name_at + nlen]
        r._pos = start + header
        zip64 = False
        if csize == _U32 or usize == _U32:
            z = _zip64_extra(buf[name_at + nlen : start + header], [usize, csize])
            if z is None:
                raise CorruptArchive("zip64 sizes without a zip64 extra field")
            usize, csize = z
            zip64 = True
        known = self._size_of(offset) if self._size_of is not None else None
        if flags & FLAG_DESCRIPTOR:
            return Entry(self, raw_name, flags, method, offset, known, None, zip64)
        return Entry(self, raw_name, flags, method, offset, csize if known is None else known, usize, zip64)

    def _finish(self, entry: Entry) -> None:
        if entry._data is None:
            csize = entry.csize
            if csize is not None:
                r = self._r
                if len(r._buf) - r._pos >= csize:  # inside the window: most entries
                    r._pos += csize
                else:
                    r.skip(csize)
                entry.compressed_read = csize
            elif entry.readable:
                for _ in self._entry_data(entry):
                    pass
            else:
                raise CorruptArchive(f"cannot find the end of entry {entry.name!r}")
        elif entry._data is not _CONSUMED:
            for _ in entry._data:  # the consumer stopped early: drain it
                pass
        if entry.flags & FLAG_DESCRIPTOR:
            self._descriptor(entry)
        offsets = self._offsets
        if offsets and offsets[-1] >= entry.offset:
            raise CorruptArchive("local headers out of order")
        offsets.append(entry.offset)
        self._prints.append(self._print(entry.raw_name, entry.method, entry.compressed_read))

    # --- entry data -------------------------------------------------------------------------
    def _entry_data(self, entry: Entry) -> Iterator[bytes]:
        if entry.method == DEFLATED:
            return self._inflate(entry)
        if entry.csize is not None:
            return self._stored(entry, entry.csize)
        return self._stored_until_descriptor(entry)

    def _stored(self, entry: Entry, size: int) -> Iterator[bytes]:
        r, left = self._r, size
        while left:
            buf, start, end = r.window(1)
            if start == end:
                raise CorruptArchive(f"entry {entry.name!r} is truncated")
            take = min(left, end - start)
            r.advance(take)
            left -= take
            entry.compressed_read += take
            yield buf[start : start + take]

    def _inflate(self, entry: Entry) -> Iterator[bytes]:
        r, budget = self._r, self._budget
        d = isal_zlib.decompressobj(-zlib.MAX_WBITS)
        limit = entry.csize
        piece_size = FIRST_PIECE
        while not d.eof:
            buf, start, end = r.window(1)
            if limit is not None:
                end = min(end, start + limit - entry.compressed_read)
            else:
                # Where the stream ends is unknown: zlib copies whatever input is left after
                # it into unused_data. Handing it the whole window cost a copy of up to
                # 256 KiB for every small entry; growing pieces keep that copy within twice
                # the entry's own compressed size.
                end = min(end, start + piece_size)
                piece_size *= 2
            if start == end:
                raise CorruptArchive(f"entry {entry.name!r} is truncated")
            piece = memoryview(buf)[start:end]
            try:
                out = d.decompress(piece, OUT_CHUNK)
            except isal_zlib.error:
                raise CorruptArchive(f"invalid deflate data in {entry.name!r}") from None
            # At the end of the stream CPython may leave the rest in unconsumed_tail too.
            used = len(piece) - len(d.unused_data) if d.eof else len(piece) - len(d.unconsumed_tail)
            r.advance(used)
            entry.compressed_read += used
            if out:
                budget.inflate(len(out))
                yield out
        if limit is not None and entry.compressed_read < limit:
            # Bytes after the deflate stream but inside the declared size: java.util.zip
            # never reads them either. Skip, so the next header is where the sizes say.
            r.skip(limit - entry.compressed_read)
            entry.compressed_read = limit

    def _stored_until_descriptor(self, entry: Entry) -> Iterator[bytes]:
        """A stored entry of unknown size: ends at a descriptor whose CRC and size match."""
        r = self._r
        crc, size = 0, 0
        tail = 24 if entry.zip64 else 16
        while True:
            buf, start, end = r.window(tail + 1)
            at = buf.find(DESCRIPTOR_SIG, start, end)
            c, done = crc, start  # CRC of the bytes before ``done``: linear however many candidates
            while at >= 0 and at + tail <= end:
                c = zlib.crc32(memoryview(buf)[done:at], c)
                done = at
                n = size + (at - start)
                if entry.zip64:
                    d_crc, d_csize, d_usize = DESCRIPTOR64.unpack_from(buf, at + 4)
                    match = d_crc == c and d_csize == d_usize == n
                else:
                    d_crc, d_csize, d_usize = DESCRIPTOR.unpack_from(buf, at + 4)
                    match = d_crc == c and d_csize == d_usize == n & _U32
                if match:
                    if at > start:
                        yield buf[start:at]
                    r.advance(at - start)
                    entry.compressed_read = n
                    return
                at = buf.find(DESCRIPTOR_SIG, at + 1, end)
            if end - start <= tail:
                raise CorruptArchive(f"no data descriptor after stored entry {entry.name!r}")
            # Hand out all but the last ``tail`` bytes: a descriptor may start among them.
            take = end - start - tail
            crc = zlib.crc32(memoryview(buf)[start : start + take], crc)
            size += take
            r.advance(take)
            yield buf[start : start + take]

    def _descriptor(self, entry: Entry) -> None:
        r = self._r
        wide = entry.zip64
        layout = DESCRIPTOR64 if wide else DESCRIPTOR  # crc, compressed size, size
        buf, start, end = r.window(4 + layout.size)
        at = start + 4 if buf[start : start + 4] == DESCRIPTOR_SIG else start
        if end - at < layout.size:
            raise CorruptArchive("unexpected end of archive")
        _crc, csize, _usize = layout.unpack_from(buf, at)
        r.advance(at - start + layout.size)
        if csize != entry.compressed_read & (U64_MAX if wide else _U32):
            raise CorruptArchive(f"data descriptor of {entry.name!r} disagrees with its data")

    # --- the central directory and end record -------------------------------------------------
    def _central_directory(self, cd_offset: int) -> None:
        r = self._r
        position = cd_offset
        seen = 0
        body = CENTRAL_BODY.size
        unpack = CENTRAL_BODY.unpack_from
        # Every record checked; the common case (the records in local-header order, each
        # matching its header's fingerprint) without a call, the rest by _check_record.
        offsets, prints, fingerprint, n_offsets = self._offsets, self._prints, self._print, len(self._offsets)
        fast = self._class_limit is not None  # runs of records checked in C (cd_batch)
        while True:
            buf, start = r._buf, r._pos
            end = len(buf)
            if fast:
                at, n, self._next_record = _fastwalk.cd_batch(buf, start, offsets, prints, self._next_record)
                if n:
                    r._pos = at
                    seen += n
                    continue
            if end - start < body:
                buf, start, end = r.window(body)
                if end - start < body:
                    raise CorruptArchive("unexpected end of archive")
            (_made, _need, flags, method, _t, _d, _crc, csize, usize, nlen, elen, clen, _disk, _ia, _ea,
             offset) = unpack(buf, start)  # fmt: skip
            record = body + nlen + elen + clen + 4  # and the next signature
            if end - start < record:
                buf, start, end = r.window(record)
                if end - start < record - 4:
                    raise CorruptArchive("unexpected end of archive")
            name_at = start + body
            raw_name = buf[name_at : name_at + nlen]
            if csize == _U32 or usize == _U32 or offset == _U32:
                z = _zip64_extra(buf[name_at + nlen : name_at + nlen + elen], [usize, csize, offset])
                if z is None:
                    raise CorruptArchive("zip64 values without a zip64 extra field")
                usize, csize, offset = z
            seen += 1
            i = self._next_record
            if i < n_offsets and offsets[i] == offset and prints[i] == fingerprint(raw_name, method, csize):
                self._next_record = i + 1
            else:
                self._check_record(raw_name, method, csize, offset)
            if end - start >= record and buf[start + record - 4 : start + record] == CENTRAL_SIG:
                r._pos = start + record  # the next record follows in the window: most of them
                continue
            r.advance(record - 4)
            position = r.offset
            sig = r.read(4)
            if sig == CENTRAL_SIG:
                continue
            if sig == ZIP64_EOCD_SIG:
                (size,) = ZIP64_EOCD_SIZE_FIELD.unpack(r.read(ZIP64_EOCD_SIZE_FIELD.size))
                r.skip(size)
                sig = r.read(4)
            if sig == ZIP64_LOCATOR_SIG:
                r.skip(ZIP64_LOCATOR.size - 4)
                sig = r.read(4)
            if sig != EOCD_SIG:
                raise CorruptArchive("no end of central directory record after the directory")
            self._end_record(r.offset - 4, cd_offset=cd_offset, cd_size=position - cd_offset)
            return

    def _check_record(self, raw_name: bytes, method: int, csize: int, offset: int) -> None:
        offsets, i = self._offsets, self._next_record
        if i >= len(offsets) or offsets[i] != offset:  # records out of local-header order
            i = bisect_left(offsets, offset)
        self._next_record = i + 1
        if i == len(offsets) or offsets[i] != offset:
            self._problem(f"central directory entry {raw_name.decode('utf-8', 'replace')!r} "
                          "points at no local header we read")
        elif self._prints[i] != self._print(raw_name, method, csize):
            self._problem(f"central directory entry {raw_name.decode('utf-8', 'replace')!r} "
                          "differs from its local header")

    def _end_record(self, at: int, *, cd_offset: int, cd_size: int) -> None:
        r = self._r
        (_disk, _cd_disk, _n_disk, _n, size, offset, comment_len) = EOCD_BODY.unpack(r.read(EOCD_BODY.size))
        comment = r.read(comment_len)
        if offset != _U32 and offset != cd_offset:
            self._problem("the end record points at another central directory")
        if size != _U32 and size != cd_size and cd_size:
            self._problem("the end record gives another central directory size")
        if EOCD_SIG in comment:
            # java.util.zip looks for the end record from the back: one in the comment
            # could point it at a directory we never saw.
            self._problem("the archive comment holds another end record")
        if not r.at_end():
            self._problem("data after the end of the archive")
            while not r.at_end():  # read (and so hash) it all; a stream ends where it ends
                buf, start, end = r.window(1)
                r.advance(end - start)


def _zip64_extra(extra: bytes, fields: list[int]) -> list[int] | None:
    """Replace each 0xFFFFFFFF in ``fields`` (order: usize, csize[, offset]) from the zip64 extra block."""
    values = zip64_extra_values(extra)
    return None if values is None else replace_sentinels(fields, values)
