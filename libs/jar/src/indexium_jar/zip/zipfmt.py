"""Pure ZIP parsing over byte windows of a file: no I/O, no trust in the numbers.

The reader sees a file only through windows ``(buf, buf_offset)``. When a window is
missing bytes a function raises :class:`NeedMoreBytes` naming the exact range, so a
range reader can fetch just that and call again.

Every number read from the file is checked before it is used as an index or an
allocation size; malformed input ends as a :class:`JarReadError` subclass, never as
``IndexError``/``struct.error``/``zlib.error``. Inflating is bounded by the smaller of
the declared size and ``max_size`` (no unbounded ``decompress()`` of untrusted data).

Facts from the spec that shaped this module (docs: manifest-formats.md section 2):
sizes come from the central directory because data descriptors (flag bit 3) leave
zeros in the local header, and the data start comes from the LOCAL header because its
extra field often differs in length from the central one.
"""

from __future__ import annotations

import bisect
import re
import zlib

import msgspec

from ..errors import (
    CorruptZip,
    CrcMismatch,
    EncryptedEntry,
    EntryTooLarge,
    NeedMoreBytes,
    UnsupportedCompression,
)
from .records import (
    CENTRAL,
    CENTRAL_SIG,
    CENTRAL_USED,
    CENTRAL_WALK,
    DEFLATED,
    EOCD,
    EOCD_SIG,
    FLAG_DESCRIPTOR,
    FLAG_ENCRYPTED,
    LOCAL,
    LOCAL_SIG,
    MAX_COMMENT,
    STORED,
    U16_MAX,
    U32_MAX,
    ZIP64_EOCD,
    ZIP64_EOCD_SIG,
    ZIP64_LOCATOR,
    ZIP64_LOCATOR_SIG,
    decode_name,
    replace_sentinels,
    zip64_extra_values,
)

EOCD_SIZE = EOCD.size
# The EOCD of an archive with a maximal comment starts this far from the end.
MAX_EOCD_DISTANCE = EOCD_SIZE + MAX_COMMENT  # 65_557
LOCAL_HEADER_SIZE = LOCAL.size
DEFAULT_MARGIN = 1024  # room for a local extra field longer than the central one
# Names up to this many bytes are kept in a CentralDirectory's dict; longer ones are found by
# searching its bytes. Every path looked up by a fixed name (the manifests, MANIFEST.MF,
# the JarJar metadata: 29 bytes at most) is this short, and few other names are.
INDEXED_NAME_BYTES = 32

try:  # the record walk in C (_cdwalk.c), built by `make env` where a compiler is; else Python's loop
    from . import _cdwalk
except ImportError:  # no compiler: the Python loop (the tests run it too, with _cdwalk set to None)
    _cdwalk = None
_CD_WALK_ERRORS = {-1: "truncated central directory", -2: "bad central directory record"}
_META_PREFIX = b"META-INF/"  # (CentralDirectory._meta; _cdwalk.c has the same)

_METHOD_NAMES = {
    1: "shrink",
    6: "implode",
    9: "deflate64",
    12: "bzip2",
    14: "lzma",
    93: "zstd",
    95: "xz",
    99: "aes",
}


class CentralDirectoryInfo(msgspec.Struct, frozen=True):
    cd_offset: int  # absolute position of the central directory in the file
    cd_size: int
    entry_count: int  # as declared; advisory (see parse_central_directory)
    comment: bytes
    # Bytes prepended to the archive (a stub); add to every local header offset.
    # Always 0 in the surveyed jars, but java.util.zip and CPython both allow it.
    base_offset: int = 0
    zip64: bool = False


class ZipEntry(msgspec.Struct, frozen=True):
    name: str
    method: int
    flags: int
    crc32: int
    compressed_size: int
    uncompressed_size: int
    local_header_offset: int  # absolute, base_offset already added
    name_size: int  # length of the encoded name in bytes

    @property
    def is_dir(self) -> bool:
        return self.name.endswith("/")


# --- end of central directory ---------------------------------------------------------------


def locate_eocd(tail: bytes, tail_offset: int, file_size: int) -> CentralDirectoryInfo:
    """Find the central directory from the last bytes of the file.

    ``tail`` must be the bytes ``[tail_offset, file_size)``. Raises
    :class:`NeedMoreBytes` when a zip64 end record lies before the tail (the caller
    fetches it, prepends it to the tail and calls again), :class:`CorruptZip` when no
    plausible end record exists.
    """
    if tail_offset < 0 or tail_offset + len(tail) != file_size:
        raise ValueError("tail must end at file_size")
    # Newest candidate first. A signature inside the comment is rejected because its
    # comment length would not end at the end of the file, or because the central
    # directory it points to does not start with a central header.
    candidates = []
    pos = len(tail) - EOCD_SIZE
    lowest = max(0, len(tail) - MAX_EOCD_DISTANCE)
    sig = EOCD_SIG.to_bytes(4, "little")
    while pos >= lowest:
        pos = tail.rfind(sig, lowest, pos + 4)
        if pos < 0:
            break
        candidates.append(pos)
        pos -= 1
    exact = [p for p in candidates if p + EOCD_SIZE + EOCD.unpack_from(tail, p)[7] == len(tail)]
    exact_set = set(exact)
    for p in exact:
        info = _interpret_eocd(tail, tail_offset, p, verify_cd=False)
        if info is not None:
            return info
    # Bytes appended after the archive (java.util.zip tolerates this when the central
    # directory checks out): accept only a candidate we can verify inside the tail.
    for p in candidates:
        if p not in exact_set and p + EOCD_SIZE + EOCD.unpack_from(tail, p)[7] <= len(tail):
            info = _interpret_eocd(tail, tail_offset, p, verify_cd=True)
            if info is not None:
                return info
    raise CorruptZip("end of central directory not found")


def _interpret_eocd(tail: bytes, tail_offset: int, p: int, *, verify_cd: bool) -> CentralDirectoryInfo | None:
    _sig, _disk, _cd_disk, _disk_count, count, cd_size, cd_offset, comment_len = EOCD.unpack_from(tail, p)
    comment = tail[p + EOCD_SIZE : p + EOCD_SIZE + comment_len]
    eocd_abs = tail_offset + p
    cd_end = eocd_abs
    zip64 = False
    z64 = _read_zip64(tail, tail_offset, p)
    if z64 is not None:
        z64_pos, z_count, z_size, z_offset = z64
        # Like java.util.zip: use the zip64 values only where they agree with the
        # classic record or the classic field holds the "see zip64" sentinel.
        if (
            (z_size == cd_size or cd_size == U32_MAX)
            and (z_offset == cd_offset or cd_offset == U32_MAX)
            and (z_count == count or count == U16_MAX)
        ):
            count, cd_size, cd_offset, cd_end, zip64 = z_count, z_size, z_offset, z64_pos, True
    # The central directory ends where the end record starts, so its real position
    # does not depend on cd_offset; a difference is a prepended stub.
    cd_start = cd_end - cd_size
    base = cd_start - cd_offset
    if cd_start < 0 or base < 0:
        return None
    if cd_size and cd_start >= tail_offset:
        if int.from_bytes(tail[cd_start - tail_offset : cd_start - tail_offset + 4], "little") != CENTRAL_SIG:
            return None
    elif verify_cd and (cd_size or count):
        return None
    return CentralDirectoryInfo(cd_start, cd_size, count, comment, base, zip64)


def _read_zip64(tail: bytes, tail_offset: int, p: int) -> tuple[int, int, int, int] | None:
    """Return (record position, count, cd size, cd offset), or None when not zip64."""
    loc = p - ZIP64_LOCATOR.size
    if loc < 0:
        # The locator would start before the tail. Only worth fetching when the
        # classic record says "see zip64".
        _sig, _d, _cd, _dc, count, size, offset, _c = EOCD.unpack_from(tail, p)
        if tail_offset > 0 and (count == U16_MAX or U32_MAX in (size, offset)):
            raise NeedMoreBytes(max(0, tail_offset + loc - ZIP64_EOCD.size), tail_offset)
        return None
    lsig, _disk, z64_pos, disks = ZIP64_LOCATOR.unpack_from(tail, loc)
    if lsig != ZIP64_LOCATOR_SIG:
        return None
    if disks > 1:
        raise CorruptZip("multi-disk archives are not supported")
    # The locator's offset (java.util.zip), else "right before the locator" (CPython),
    # which survives a prepended stub. Both must end before the locator.
    limit = tail_offset + loc
    missing = None
    for pos in (z64_pos, limit - ZIP64_EOCD.size):
        if pos < 0 or pos + ZIP64_EOCD.size > limit:
            continue
        if pos < tail_offset:
            missing = pos if missing is None else missing
            continue
        rec = ZIP64_EOCD.unpack_from(tail, pos - tail_offset)
        if rec[0] == ZIP64_EOCD_SIG:
            _sig, _rec_size, _made, _need, _disk, _cd_disk, _disk_count, count, size, offset = rec
            return pos, count, size, offset
    if missing is not None:
        raise NeedMoreBytes(missing, missing + ZIP64_EOCD.size)
    return None


# --- central directory ----------------------------------------------------------------------


def parse_central_directory(data: bytes, count_hint: int, *, base_offset: int = 0) -> list[ZipEntry]:
    """Parse every central-directory record in ``data`` (exactly the directory's bytes).

    The byte size, not ``count_hint``, decides how many records there are, as in
    java.util.zip and CPython: writers that exceed 65,535 entries without zip64 wrap
    the 16-bit count, and Java still opens those jars. Duplicate names are kept, in
    directory order.
    """
    del count_hint  # advisory only, see above
    return CentralDirectory(data, base_offset=base_offset).entries()


class CentralDirectory:
    """A central directory walked once; entries are built when asked for.

    Opening checks every record's signature and bounds, as java.util.zip does when it
    opens a jar, but builds no per-entry object and indexes only the short names (up to
    :data:`INDEXED_NAME_BYTES`, which every manifest path is): in a 20,000-entry
    directory the dict of every raw name was more than half the cost of opening, and the
    indexer looks up a dozen names. A longer name is found by searching the directory's
    bytes from the end (``bytes.rfind``, in C). Duplicate names resolve to the LAST
    record, as in java.util.zip. Prefix and pattern searches run over the directory's
    bytes (``bytes.find``, ``re``: in C) too; every search keeps only hits inside the name
    of a record of the walked chain, so a name hidden in an extra field or comment is
    never taken for a record. A record's zip64 fields are resolved (and checked) when its
    entry is built.

    The directory is ``data[start:end]`` (all of ``data`` by default), read in place: a
    reader holding the directory inside a larger window (the tail it fetched first)
    hands that window over rather than a copy of megabytes. ``suffix`` is the directory's
    last records already walked (:func:`scan_directory_suffix`), ``shift`` what to add to
    its positions to get positions in ``data``: when the walk from ``start`` arrives
    exactly at the suffix's first record over the same bytes, the rest of the chain is
    the suffix's (each record's length decides where the next one starts), so its
    records are taken rather than walked again.
    """

    __slots__ = ("_data", "_lo", "_hi", "_base", "_starts", "_index", "_all", "_streamed", "_meta", "_looked_up")

    def __init__(self, data: bytes, *, base_offset: int = 0, start: int = 0, end: int | None = None,
                 suffix: CentralDirectory | None = None, shift: int = 0) -> None:
        self._data = data = bytes(data)
        end = len(data) if end is None else end
        if not 0 <= start <= end <= len(data):
            raise ValueError("the directory must lie inside data")
        self._lo, self._hi = start, end
        self._base = base_offset
        self._all: list[ZipEntry] | None = None
        # Answers of entry(): a reader asks for the same dozen names while planning,
        # reading and parsing (the directory never changes).
        self._looked_up: dict[str, ZipEntry | None] = {}
        self._starts: list[int] = []
        self._index: dict[bytes, int] = {}  # short raw name -> start of its last record
        self._streamed: list[int] = []  # starts of the records flagged with a data descriptor
        # Starts of the records named META-INF/...: nested jars, manifests and services are
        # searched by prefix there, a few records of thousands (a search of the directory's
        # bytes read all of a 2 MB one for them).
        self._meta: list[int] = []
        joint = suffix._starts[0] + shift if suffix is not None and suffix._starts else end
        pos = self._walk(start, min(max(joint, start), end))
        if pos == joint < end and suffix is not None and suffix._hi + shift == end and (
                data[joint:end] == suffix._data[joint - shift : end - shift]):
            # map() over int.__add__ runs in C: the suffix holds hundreds of records.
            moved = shift.__add__
            self._starts += map(moved, suffix._starts) if shift else suffix._starts
            self._index.update(zip(suffix._index, map(moved, suffix._index.values())))
            self._streamed += map(moved, suffix._streamed)
            self._meta += map(moved, suffix._meta)
            pos = end
        elif pos < end:
            pos = self._walk(pos, end)
        if pos > end:
            raise CorruptZip("truncated central directory")

    def _walk(self, pos: int, stop: int) -> int:
        """Walk the records from ``pos`` while before ``stop``; returns where the walk ended."""
        data, end = self._data, self._hi
        starts, index, streamed, meta = self._starts, self._index, self._streamed, self._meta
        if _cdwalk is not None:
            pos = _cdwalk.walk(data, pos, stop, end, INDEXED_NAME_BYTES, starts, index, streamed, meta)
            if pos < 0:
                raise CorruptZip(_CD_WALK_ERRORS[pos])
            return pos
        append, unpack, header, short = starts.append, CENTRAL_WALK.unpack_from, CENTRAL.size, INDEXED_NAME_BYTES
        # Locals, not module globals: each is read once per record.
        signature, descriptor, streamed_append = CENTRAL_SIG, FLAG_DESCRIPTOR, streamed.append
        meta_prefix, meta_size, meta_append = _META_PREFIX, len(_META_PREFIX), meta.append
        last_start = end - header
        # The flags come with the lengths (one unpack): collecting the descriptor-flagged
        # records here costs 0.3 ms per 20,000 records, a second pass over them 1.1 ms.
        while pos < stop:
            if pos > last_start:
                raise CorruptZip("truncated central directory")
            sig, flags, nlen, elen, clen = unpack(data, pos)
            if sig != signature:
                raise CorruptZip("bad central directory record")
            append(pos)
            if nlen <= short:
                index[data[pos + header : pos + header + nlen]] = pos
            if flags & descriptor:
                streamed_append(pos)
            if nlen >= meta_size and data.startswith(meta_prefix, pos + header):
                meta_append(pos)
            pos += header + nlen + elen + clen
        return pos

    def __len__(self) -> int:
        return len(self._starts)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if len(name) <= INDEXED_NAME_BYTES and name.isascii():
            # An ASCII name reads the same as UTF-8 and as CP437, so its bytes alone decide
            # (entry() would build the entry to compare names): the reader asks this of a
            # dozen manifest paths per directory, most of them absent.
            return name.encode("ascii") in self._index
        return self.entry(name) is not None

    def __iter__(self):
        """Every name, in directory order (builds every entry)."""
        return (e.name for e in self.entries())

    def names(self) -> list[str]:
        """Every record's name, in directory order, without building the entries: an ASCII name
        reads the same as UTF-8 and CP437, so its bytes are decoded directly (a pack's classifier
        looks at every name of a 5,000-texture resource pack; building each entry cost 3 us)."""
        if self._all is not None:
            return [e.name for e in self._all]
        data, header, out = self._data, CENTRAL.size, []
        for start in self._starts:
            raw = data[start + header : start + header + _name_length(data, start)]
            out.append(raw.decode("ascii") if raw.isascii() else self._entry_at(start).name)
        return out

    def entries(self) -> list[ZipEntry]:
        """Every record, in directory order, duplicates included."""
        if self._all is None:
            at = self._entry_at
            self._all = [at(start) for start in self._starts]
        return self._all

    def entry(self, name: str) -> ZipEntry | None:
        """The last record named ``name``, or None."""
        found = self._looked_up.get(name, _UNSEEN)
        if found is _UNSEEN:
            found = self._looked_up[name] = self._find(name)
        return found

    def _find(self, name: str) -> ZipEntry | None:
        found, found_at = None, -1
        for raw in _encodings(name):
            start = self._last_named(raw)
            if start is None or start <= found_at:
                continue
            entry = self._entry_at(start)
            if entry.name != name:
                # Same bytes, other meaning (one record flagged UTF-8, the other CP437):
                # an earlier record with these bytes may be the one; rare, so walk them.
                matches = [s for s in self._hits(raw, len(raw)) if self._entry_at(s).name == name]
                if not matches:
                    continue
                start = matches[-1]
                entry = self._entry_at(start)
            if start > found_at:
                found, found_at = entry, start
        return found

    def with_prefix(self, prefix: str) -> list[ZipEntry]:
        """Records whose name starts with ``prefix`` (ASCII), in directory order."""
        entries = (self._entry_at(start) for start in self._hits(prefix.encode("ascii")))
        return [e for e in entries if e.name.startswith(prefix)]

    def search(self, hint: re.Pattern[bytes], name: re.Pattern[bytes] | None = None, *,
               near: tuple[int, int] | None = None) -> list[ZipEntry]:
        """Records whose raw name contains a match of ``hint`` (and matches ``name``, when
        given), in directory order. ``hint`` should be quick to find (a literal start).

        ``near=(lo, hi)``: only the run of records whose local headers lie in ``[lo, hi)`` of
        the file, found by bisection on the assumption that the directory lists the entries
        in file order, as every common writer does (Gradle, the JDK's jar tool, zip). For a
        directory in another order the run is wrong and hits may be missed: only for searches
        whose hits are guesses (the icon-like files a reader takes along)."""
        data, starts, header = self._data, self._starts, CENTRAL.size
        lo_byte, hi_byte = self._lo, self._hi
        if near is not None and len(starts) > _NEAR_MIN_RECORDS:
            window = self._records_near(*near)
            if window is not None:
                lo_byte, hi_byte = window
        picked: dict[int, None] = {}
        for match in hint.finditer(data, lo_byte, hi_byte):
            i = bisect.bisect_right(starts, match.start() - header) - 1
            if i < 0:
                continue
            start = starts[i]
            name_at = start + header
            name_end = name_at + _name_length(data, start)
            if match.end() <= name_end and (name is None or name.search(data[name_at:name_end])):
                picked[start] = None
        return [self._entry_at(start) for start in picked]

    def descriptor_sizes(self) -> list[tuple[int, int]]:
        """``(local header offset, compressed size)`` of every record flagged with a data
        descriptor (bit 3): the entries whose local header leaves its sizes zero, so a
        reader walking the file front to back cannot know where their data ends."""
        data, base, unpack = self._data, self._base, CENTRAL_USED.unpack_from
        out = []
        for start in self._streamed:
            fields = unpack(data, start)
            csize, offset = fields[4], fields[9]
            if offset == U32_MAX or csize == U32_MAX:
                entry = self._entry_at(start)  # zip64 fields resolved and checked there
                csize, offset = entry.compressed_size, entry.local_header_offset - base
            out.append((offset + base, csize))
        return out

    # --- internals --------------------------------------------------------------------

    def _records_near(self, lo: int, hi: int) -> tuple[int, int] | None:
        """Directory bytes of the records with local header offsets in ``[lo, hi)``, bisected
        as if in file order; None when a record on the way has its offset in zip64 fields."""
        data, starts, base = self._data, self._starts, self._base
        zip64 = False

        def offset(start: int) -> int:
            nonlocal zip64
            raw = int.from_bytes(data[start + 42 : start + 46], "little")
            zip64 |= raw == U32_MAX
            return raw + base

        first = bisect.bisect_left(starts, lo, key=offset)
        last = bisect.bisect_left(starts, hi, key=offset)
        if zip64:
            return None
        begin = starts[first] if first < len(starts) else self._hi
        end = starts[last] if last < len(starts) else self._hi
        return begin, max(begin, end)

    def _last_named(self, raw: bytes) -> int | None:
        """Start of the last walked record whose raw name is ``raw``, or None."""
        nlen = len(raw)
        if nlen <= INDEXED_NAME_BYTES:
            return self._index.get(raw)
        data, starts, header = self._data, self._starts, CENTRAL.size
        lo, end = self._lo + header, self._hi
        while (pos := data.rfind(raw, lo, end)) >= 0:
            start = pos - header
            i = bisect.bisect_left(starts, start)
            if i < len(starts) and starts[i] == start and _name_length(data, start) == nlen:
                return start
            end = pos + nlen - 1  # a hit may overlap the next one to its left
        return None

    def _hits(self, raw: bytes, nlen: int | None = None) -> list[int]:
        """Starts of the walked records whose name begins with ``raw`` (and is ``nlen``
        bytes long, when given), in directory order."""
        data, starts, header, size = self._data, self._starts, CENTRAL.size, len(raw)

        def named(start: int) -> bool:  # raw fits in the record's name (of nlen bytes, when given)
            n = _name_length(data, start)
            return n >= size if nlen is None else n == nlen

        if not raw:
            return [start for start in starts if named(start)]
        if raw.startswith(_META_PREFIX):  # among the few records named META-INF/..., in order
            return [start for start in self._meta if named(start) and data.startswith(raw, start + header)]
        # From the end: rfind skips ahead by the needle's length, find by far less.
        out = []
        lo, end = self._lo + header, self._hi
        while (pos := data.rfind(raw, lo, end)) >= 0:
            start = pos - header
            i = bisect.bisect_left(starts, start)
            if i < len(starts) and starts[i] == start and named(start):
                out.append(start)
            end = pos + size - 1  # a hit may overlap the next one to its left
        out.reverse()
        return out

    def _entry_at(self, pos: int) -> ZipEntry:
        data = self._data
        _sig, flags, method, crc, csize, usize, nlen, elen, _clen, offset = CENTRAL_USED.unpack_from(data, pos)
        name_at = pos + CENTRAL.size
        raw_name = data[name_at : name_at + nlen]
        if offset == U32_MAX or csize == U32_MAX or usize == U32_MAX:
            usize, csize, offset = _apply_zip64_extra(
                data[name_at + nlen : name_at + nlen + elen], usize, csize, offset
            )
        # Nearly every name is ASCII, where UTF-8 and CP437 agree: that fast path inline.
        name = raw_name.decode("ascii") if raw_name.isascii() else decode_name(raw_name, flags)
        return ZipEntry(name, method, flags, crc, csize, usize, offset + self._base, nlen)


_UNSEEN = object()  # a name not looked up yet (None is an answer: no such entry)
# search(near=...) narrows only directories longer than this: a shorter one is searched
# whole for less than the bisection costs to think about (and a small jar's order is moot).
_NEAR_MIN_RECORDS = 1_000


def _name_length(directory: bytes, record_start: int) -> int:
    return directory[record_start + 28] | directory[record_start + 29] << 8


def _encodings(name: str) -> list[bytes]:
    """The byte forms a record of that name can have: UTF-8 (flag bit 11) or CP437."""
    out = [name.encode("utf-8")]
    if not name.isascii():
        try:
            out.append(name.encode("cp437"))
        except UnicodeEncodeError:
            pass
    return out


def scan_directory_suffix(
    buf: bytes, buf_offset: int, cd_start: int, cd_end: int, *, base_offset: int = 0, max_tries: int = 32
) -> CentralDirectory | None:
    """The last records of a central directory whose beginning is not in ``buf``.

    A suffix read usually holds the END of a large central directory: records of the
    entries written last, which is where a build puts its resources (manifests, icons).
    Records cannot be parsed backwards, so this tries each central-header signature in
    the window, in order, and keeps the first from which whole records chain exactly to
    ``cd_end``. Returns None when no such chain exists. A signature inside a name or an
    extra field could start a chain that merges into the true one, so callers may only
    use the result to PLAN reads; the full directory stays the authority.
    """
    lo = max(cd_start, buf_offset) - buf_offset
    hi = cd_end - buf_offset
    if lo >= hi or hi > len(buf) or lo < 0:
        return None
    buf = bytes(buf)
    sig = CENTRAL_SIG.to_bytes(4, "little")
    pos = buf.find(sig, lo, hi)
    for _ in range(max_tries):
        if pos < 0:
            return None
        try:
            return CentralDirectory(buf, base_offset=base_offset, start=pos, end=hi)
        except CorruptZip:
            pos = buf.find(sig, pos + 1, hi)
    return None


def _apply_zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    """Replace 0xFFFFFFFF fields with their 64-bit values from the zip64 extra block."""
    values = zip64_extra_values(extra)
    if values is None:
        raise CorruptZip("zip64 sizes without a zip64 extra field")
    fields = replace_sentinels([usize, csize, offset], values)
    if fields is None:
        raise CorruptZip("zip64 extra field too short")
    return fields[0], fields[1], fields[2]


# --- entry data -----------------------------------------------------------------------------


def local_data_span(
    entry: ZipEntry, margin: int = DEFAULT_MARGIN, file_size: int | None = None
) -> tuple[int, int]:
    """Estimate the byte range ``[start, end)`` holding the entry's local header and data.

    The local extra field is unknown until the local header is read; ``margin``
    covers it in practice (a second, exact pass is needed only when it does not).
    """
    start = entry.local_header_offset
    end = start + LOCAL_HEADER_SIZE + entry.name_size + entry.compressed_size + margin
    if file_size is not None:
        end = min(end, file_size)
    return start, max(start, end)


def max_compressed_size(uncompressed_size: int) -> int:
    """A generous upper bound on a plausible DEFLATE size.

    zlib never expands by more than stored-block overhead, but a naive encoder using
    fixed Huffman codes can reach 9 bits per byte; a quarter on top covers both.
    """
    return uncompressed_size + (uncompressed_size >> 2) + 1024


def check_entry(entry: ZipEntry, max_size: int) -> None:
    """Reject, before fetching anything, an entry we could not or should not extract."""
    if entry.flags & FLAG_ENCRYPTED:
        raise EncryptedEntry(f"entry {entry.name!r} is encrypted")
    if entry.method not in (STORED, DEFLATED):
        kind = _METHOD_NAMES.get(entry.method, f"method {entry.method}")
        raise UnsupportedCompression(f"entry {entry.name!r} uses {kind}")
    if entry.uncompressed_size > max_size:
        raise EntryTooLarge(f"entry {entry.name!r} is {entry.uncompressed_size} bytes, limit {max_size}")
    if entry.method == STORED and entry.compressed_size != entry.uncompressed_size:
        raise CorruptZip(f"stored entry {entry.name!r} has two different sizes")
    if entry.compressed_size > max_compressed_size(entry.uncompressed_size):
        raise CorruptZip(f"entry {entry.name!r} has an implausible compressed size")


def extract(entry: ZipEntry, buf: bytes, buf_offset: int, max_size: int) -> bytes:
    """Return the entry's uncompressed bytes, read from the window ``buf`` at ``buf_offset``."""
    check_entry(entry, max_size)
    header_at = entry.local_header_offset
    header = _window(buf, buf_offset, header_at, header_at + LOCAL_HEADER_SIZE)
    if header is None:
        raise NeedMoreBytes(*local_data_span(entry))
    sig, _need, _flags, _method, _time, _date, _crc, _csize, _usize, nlen, elen = LOCAL.unpack(header)
    if sig != LOCAL_SIG:
        raise CorruptZip(f"bad local header for {entry.name!r}")
    data_at = header_at + LOCAL_HEADER_SIZE + nlen + elen
    data_end = data_at + entry.compressed_size
    compressed = _window(buf, buf_offset, data_at, data_end)
    if compressed is None:
        raise NeedMoreBytes(header_at, data_end)
    if entry.method == STORED:
        data = bytes(compressed)
    else:
        data = _inflate(compressed, entry.uncompressed_size, entry.name)
    if zlib.crc32(data) != entry.crc32:
        raise CrcMismatch(f"CRC-32 mismatch in {entry.name!r}")
    return data


def extract_prefix(entry: ZipEntry, buf: bytes, buf_offset: int, length: int) -> bytes:
    """The first ``length`` uncompressed bytes of an entry (all of it, CRC-checked, when shorter).

    For entries whose useful part is at their start and whose whole may be large, such as a
    signed jar's MANIFEST.MF (main section first, then one digest section per entry). Needs
    the local header and the first ``prefix_span`` compressed bytes; inflation is bounded
    by ``length``.
    """
    if entry.uncompressed_size <= length:
        return extract(entry, buf, buf_offset, length)
    check_entry(entry, entry.uncompressed_size)
    header_at = entry.local_header_offset
    header = _window(buf, buf_offset, header_at, header_at + LOCAL_HEADER_SIZE)
    if header is None:
        raise NeedMoreBytes(header_at, header_at + LOCAL_HEADER_SIZE + entry.name_size + prefix_span(entry, length))
    sig, _need, _flags, _method, _time, _date, _crc, _csize, _usize, nlen, elen = LOCAL.unpack(header)
    if sig != LOCAL_SIG:
        raise CorruptZip(f"bad local header for {entry.name!r}")
    data_at = header_at + LOCAL_HEADER_SIZE + nlen + elen
    compressed = _window(buf, buf_offset, data_at, data_at + prefix_span(entry, length))
    if compressed is None:
        raise NeedMoreBytes(header_at, data_at + prefix_span(entry, length))
    if entry.method == STORED:
        return bytes(compressed[:length])
    try:
        return zlib.decompressobj(-zlib.MAX_WBITS).decompress(compressed, length)
    except zlib.error:
        raise CorruptZip(f"invalid DEFLATE data in {entry.name!r}") from None


def prefix_span(entry: ZipEntry, length: int) -> int:
    """Compressed bytes that hold at least the first ``length`` uncompressed ones."""
    if entry.method == STORED:
        return min(entry.compressed_size, length)
    return min(entry.compressed_size, max_compressed_size(length))


def _inflate(compressed: memoryview, size: int, name: str) -> bytes:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)  # raw DEFLATE, no zlib header
    try:
        # size + 1 so a stream longer than declared shows itself; size <= max_size
        # was checked, so this bounds the allocation.
        data = inflater.decompress(compressed, size + 1)
    except zlib.error:
        raise CorruptZip(f"invalid DEFLATE data in {name!r}") from None
    if len(data) > size:
        raise CorruptZip(f"{name!r} inflates to more than its declared size")
    if not inflater.eof:
        raise CorruptZip(f"truncated DEFLATE data in {name!r}")
    if len(data) != size:
        raise CorruptZip(f"{name!r} inflates to less than its declared size")
    return data


def _window(buf: bytes, buf_offset: int, start: int, end: int) -> memoryview | None:
    lo = start - buf_offset
    hi = end - buf_offset
    if lo < 0 or hi > len(buf):
        return None
    return memoryview(buf)[lo:hi]
