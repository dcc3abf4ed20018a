"""The search index's snapshot: one file a replica ``mmap``s instead of building its index from
PostgreSQL (docs/api.md, "Replica start: the snapshot"). No I/O but the file's own.

Layout (format ``FORMAT``, little-endian): ``MAGIC``, then sections each 8-byte aligned, then a
JSON header naming every section (offset, size, item type) with the snapshot's ``meta``, then
the header's length (uint64) and a SHA-256 of every byte before that digest (32 bytes). What
``meta`` holds: the format, the number of ordinals, the collation facts (``ordered``,
``words_exact``) and the **position** the snapshot covers: ``updated_at`` (PostgreSQL's
``transaction_timestamp()`` of the load's transaction, microseconds: every row written by a
transaction that began before it is in, less what the catch-up margin covers) and
``stream_seq`` (the VERSIONS stream's last sequence when the load began; for operators).

Per ordinal (the index's, popularity order): id, downloads and times as int64 columns, slug
and lower-cased name as UTF-8 blobs with offsets, lexeme ids with their ts_rank terms (float4),
weight-A lexeme ids, filter key ids, the README hash and the hit (msgpack, whose timestamp
extension gives back the same datetimes). Then the vocabulary, the filter keys and the README
vocabulary (sorted), each key's roaring bitmap (serialized), the sorted views as ordinal
arrays, the laid postings the C unions read, the catalogue words with their trigram counts and
trigram bitmaps, and the lexicon PostgreSQL taught the writer.

``load`` maps the file and gives a :class:`SearchIndex` over it: the per-mod columns stay in
the file (an :class:`Entries` sequence builds an ``Entry`` when a search reads one, keeping a
bounded number), each posting is deserialized the first time a search reads it (a
:class:`Table`), the laid postings are used in place; what search needs as Python objects is
built (vocabularies, slugs, names). The index then follows events as one loaded from
PostgreSQL does (``upsert``/``remove``): a changed mod's entry lives in memory over the file's.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import mmap
import os
import struct
import uuid
import weakref
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import msgspec
from pyroaring import BitMap

from . import searchindex
from .searchindex import Entry, Lexicon, SearchIndex, TokenLexemes
from .trigram import Words

MAGIC = b"IXSNAP\0\1"
FORMAT = 1
ENTRIES_KEPT = 2048  # entries built from the file and kept (then forgotten whole): ~3 KB each
# Postings read for searches and kept (Table), by their serialized bytes (in memory ~1-1.5x).
POSTINGS_READ_MAX = 8 * 2**20
# A snapshot written from another lets the old file's pages it read go every this many bytes
# written (most of them copied from it): its RSS holds ~this much of the old file, not all of it.
RELEASE_EVERY = 8 * 2**20
_TRAILER = struct.Struct("<Q32s")
_NONE_TIME = -(2**63)
_pack = msgspec.msgpack.Encoder()
_unpack = msgspec.msgpack.Decoder()


class Unusable(Exception):
    """The file is not a snapshot this code can read (format, size, digest): build from PostgreSQL."""


# --- writing -------------------------------------------------------------------------------

class _Writer:
    def __init__(self, f, release=None) -> None:
        """``release``: called every RELEASE_EVERY bytes written (the old file's pages let go
        while a snapshot is written from another: _write_over)."""
        self.f, self.sections, self.hash = f, {}, hashlib.sha256()
        self._release, self._written = release, 0
        self._write(MAGIC)

    def _write(self, raw) -> None:
        self.f.write(raw)
        self.hash.update(raw)
        if self._release is not None:
            self._written += len(raw) if not isinstance(raw, memoryview) else raw.nbytes
            if self._written >= RELEASE_EVERY:
                self._written = 0
                self._release()

    def put(self, name: str, payload, kind: str = "B") -> None:
        pad = (-self.f.tell()) % 8
        self._write(b"\0" * pad)
        raw = payload.tobytes() if isinstance(payload, array) else bytes(payload)
        self.sections[name] = (self.f.tell(), len(raw), kind)
        self._write(raw)

    def stream(self, name: str, chunks, kind: str = "B") -> None:
        """A section written as its chunks come (bytes-like; never held whole)."""
        pad = (-self.f.tell()) % 8
        self._write(b"\0" * pad)
        start = self.f.tell()
        for chunk in chunks:
            self._write(chunk.tobytes() if isinstance(chunk, array) else chunk)
        self.sections[name] = (start, self.f.tell() - start, kind)

    def blobs(self, name: str, items) -> None:
        """Byte strings end to end and where each starts (uint64, n + 1), written as they come."""
        offsets = array("Q", [0])

        def each():
            size = 0
            for b in items:
                size += len(b)
                offsets.append(size)
                yield b

        self.stream(name, each())
        self.put(name + ".offsets", offsets, "Q")

    def strings(self, name: str, items) -> None:
        self.blobs(name, (s.encode() for s in items))

    def close(self, meta: dict) -> str:
        header = json.dumps({"meta": meta, "sections": self.sections}).encode()
        self._write(header)
        self._write(struct.pack("<Q", len(header)))
        digest = self.hash.digest()
        self.f.write(digest)
        return digest.hex()


def write(index: SearchIndex, lexicon: Lexicon, path: Path, *, updated_at: int, stream_seq: int = 0,
          meta: dict | None = None) -> str:
    """``index`` and ``lexicon`` as a snapshot at ``path`` (written beside it, then renamed, so a
    reader never maps half a file); its SHA-256 (hex). ``updated_at``/``stream_seq``: the
    position it covers (see the module doc); ``meta``: more of the header's meta (the writer's).
    An index over a snapshot (``load``, then re-reads) is written from its file: see _write_over."""
    if isinstance(index.entries, Entries):
        return _write_over(index, lexicon, path, updated_at=updated_at, stream_seq=stream_seq, meta=meta)
    entries = index.entries
    n = len(entries)
    vocabulary = sorted(index.postings)
    lexeme_id = {x: i for i, x in enumerate(vocabulary)}
    filter_keys = sorted(index.filters)
    filter_id = {x: i for i, x in enumerate(filter_keys)}
    readme_vocabulary = sorted(index.readme)
    empty = Entry(uuid.UUID(int=0), "", "", 0, None, 0, (), 0, (), 0, array("f"), 0.0)
    rows = [e if e is not None else empty for e in entries]
    part = path.with_name(path.name + f".{os.getpid()}.part")
    with open(part, "wb") as f:
        w = _Writer(f)
        w.put("ids", b"".join(e.id.bytes for e in rows))
        w.put("downloads", array("q", [e.downloads for e in rows]), "q")
        w.put("created", array("q", [e.created for e in rows]), "q")
        w.put("changed", array("q", [e.changed for e in rows]), "q")
        w.put("updated", array("q", [_NONE_TIME if e.updated is None else e.updated for e in rows]), "q")
        w.put("readme_hash", array("q", [e.readme for e in rows]), "q")
        w.strings("slug", [e.slug for e in rows])
        w.strings("name", index.name_of)
        lex, lex_off, terms = array("I"), array("Q", [0]), array("f")
        heavy, heavy_off, keys, keys_off = array("I"), array("Q", [0]), array("I"), array("Q", [0])
        for e in rows:
            lex.extend(lexeme_id[x] for x in e.keys[:e.lexemes])
            lex_off.append(len(lex))
            terms.extend(e.terms)
            heavy.extend(lexeme_id[x] for x in e.heavy)
            heavy_off.append(len(heavy))
            keys.extend(filter_id[x] for x in e.keys[e.lexemes:])
            keys_off.append(len(keys))
        for name, col in (("lexemes", lex), ("lexemes.offsets", lex_off), ("terms", terms), ("heavy", heavy),
                          ("heavy.offsets", heavy_off), ("keys", keys), ("keys.offsets", keys_off)):
            w.put(name, col, col.typecode)
        w.blobs("hits", (b"" if e.hit is None else _pack.encode(e.hit) for e in rows))
        w.put("listed", index.listed.serialize())
        w.strings("vocabulary", vocabulary)
        w.blobs("postings", (index.postings[x].serialize() for x in vocabulary))
        w.blobs("heavy_postings", (index.heavy[x].serialize() if x in index.heavy else b"" for x in vocabulary))
        w.strings("filter_keys", filter_keys)
        w.blobs("filter_postings", (index.filters[x].serialize() for x in filter_keys))
        w.strings("readme_vocabulary", readme_vocabulary)
        w.blobs("readme_postings", (index.readme[x].serialize() for x in readme_vocabulary))
        w.put("names_order", index._names, "I")
        for sort, view in index._orders.items():
            w.put(f"order.{sort}", view, "I")
        laid = bool(index._laid) and not index._changed and index._laid_vocabulary == vocabulary
        if laid:  # (as loaded: the laid postings follow the vocabulary as written)
            for heavy_side, (flat, offsets) in index._laid.items():
                w.put(f"laid.{int(heavy_side)}", flat, "I")
                w.put(f"laid.{int(heavy_side)}.offsets", offsets, "Q")
        return _finish(w, f, part, path, index, lexicon, n=n, laid=laid, updated_at=updated_at,
                       stream_seq=stream_seq, meta=meta)


def _finish(w: _Writer, f, part: Path, path: Path, index: SearchIndex, lexicon: Lexicon, *, n: int, laid: bool,
            updated_at: int, stream_seq: int, meta: dict | None) -> str:
    """The sections both writes end with (the catalogue words, the lexicon), the header (``n``
    ordinals; ``meta``: more of it, the writer's), the rename."""
    words = index.words
    w.strings("words", words._words)
    w.put("word_sizes", words._sizes, "H")
    trigrams = sorted(words._postings)
    w.strings("word_trigrams", trigrams)
    w.blobs("word_postings", (words._postings[t].serialize() for t in trigrams))
    w.put("lexicon", _pack.encode({"tokens": {k: None if v is None else [v.english, v.russian, v.simple]
                                              for k, v in lexicon._tokens.items()},
                                   "prefix": lexicon._prefix}))
    digest = w.close({"format": FORMAT, "ordinals": n, "mods": len(index.listed), "ordered": index.ordered,
                      "words_exact": index.words_exact, "laid": laid, "updated_at": updated_at,
                      "stream_seq": stream_seq, **(meta or {})})
    f.flush()
    os.fsync(f.fileno())
    f.close()
    os.replace(part, path)
    return digest


# --- writing from a snapshot ----------------------------------------------------------------

_CHUNK = 1 << 18  # bytes of a column copied (or key ids renumbered: a quarter as many) at a time
_NO_ID = 0xFFFFFFFF


def _write_over(index: SearchIndex, lexicon: Lexicon, path: Path, *, updated_at: int, stream_seq: int,
                meta: dict | None) -> str:
    """An index mapped from a snapshot (``load``) and brought up to date by re-reads, written as a
    new snapshot without building it as objects (the snapshot's writer, issue 38: a replica's
    memory, not a full load's): every unchanged mod's columns and hit, and every posting no re-read
    held (``Table.held``), are the old file's bytes, copied (lexeme and filter key ids renumbered
    when the vocabularies changed); a re-read mod's from its ``Entry``, a held posting serialized.
    Keys whose posting no mod holds any more are left out, as a full load has none. The old file's
    pages this process read are let go as it goes (``Snapshot.release_pages``). The ordinals stay
    the old file's (a removed mod's a hole, a new mod's after the rest): not popularity order
    (a full load's) for the mods re-read since that load; the writer loads in full periodically."""
    entries: Entries = index.entries
    snap: Snapshot = index.snapshot
    n_old, n, over = entries._n, len(entries), entries._over
    segments = list(_segments(n_old, n, sorted(over)))
    needed_lexemes, needed_keys = set(), set()
    for e in over.values():
        if e is not None:
            needed_lexemes.update(e.keys[:e.lexemes])
            needed_keys.update(e.keys[e.lexemes:])
    laid = searchindex._fastsearch is not None
    part = path.with_name(path.name + f".{os.getpid()}.part")
    with open(part, "wb") as f:
        w = _Writer(f, release=snap.release_pages)
        # The vocabulary and its postings, weight A's and the laid ones (the same order).
        vocabulary, from_old = _live_keys(w, "postings", index.postings, entries._vocabulary)
        w.blobs("heavy_postings", (_posting(index.heavy, x, i) or b"" for x, i in zip(vocabulary, from_old)))
        if laid:
            for heavy_side, table in ((False, index.postings), (True, index.heavy)):
                offsets = array("Q", [0])
                w.stream(f"laid.{int(heavy_side)}", _laid_chunks(vocabulary, from_old, table,
                                                                 index._laid.get(heavy_side), offsets), "I")
                w.put(f"laid.{int(heavy_side)}.offsets", offsets, "Q")
        w.strings("vocabulary", vocabulary)
        lexeme_remap = _remap(from_old, len(entries._vocabulary))
        lexeme_id = {x: i for i, x in enumerate(vocabulary) if x in needed_lexemes}
        del vocabulary, from_old
        snap.release_pages()
        filter_keys, from_old = _live_keys(w, "filter_postings", index.filters, entries._filter_keys)
        w.strings("filter_keys", filter_keys)
        key_remap = _remap(from_old, len(entries._filter_keys))
        filter_id = {x: i for i, x in enumerate(filter_keys) if x in needed_keys}
        del filter_keys, from_old
        snap.release_pages()
        readme_vocabulary, _ = _live_keys(w, "readme_postings", index.readme, index.readme._keys)
        w.strings("readme_vocabulary", readme_vocabulary)
        del readme_vocabulary
        snap.release_pages()

        # Per ordinal: the fixed-size columns, then the variable ones, then the hits.
        empty = Entry(uuid.UUID(int=0), "", "", 0, None, 0, (), 0, (), 0, array("f"), 0.0)
        ids = bytearray(snap.raw("ids"))
        ids += bytes(16 * (n - n_old))
        for o, e in over.items():
            ids[o * 16:o * 16 + 16] = (e or empty).id.bytes
        w.put("ids", ids)
        del ids
        for name, value in (("downloads", lambda e: e.downloads), ("created", lambda e: e.created),
                            ("changed", lambda e: e.changed),
                            ("updated", lambda e: _NONE_TIME if e.updated is None else e.updated),
                            ("readme_hash", lambda e: e.readme)):
            col = array("q")
            col.frombytes(snap.raw(name))
            col.extend(bytes(n - n_old))
            for o, e in over.items():
                col[o] = value(e or empty)
            w.put(name, col, "q")
        slugs = list(entries._slugs)
        slugs.extend([""] * (n - n_old))
        for o, e in over.items():
            slugs[o] = (e or empty).slug
        w.strings("slug", slugs)
        del slugs
        w.strings("name", index.name_of)
        snap.release_pages()
        _ids_column(w, "lexemes", snap, lexeme_remap, segments, over,
                    lambda e: [lexeme_id[x] for x in e.keys[:e.lexemes]])
        _column(w, "terms", snap.raw("terms"), snap.col("lexemes.offsets"), 4, segments, over,
                lambda e: e.terms.tobytes())
        _ids_column(w, "heavy", snap, lexeme_remap, segments, over, lambda e: [lexeme_id[x] for x in e.heavy])
        _ids_column(w, "keys", snap, key_remap, segments, over, lambda e: [filter_id[x] for x in e.keys[e.lexemes:]])
        snap.release_pages()
        # (a hit whose active_servers alone moved, Entries.set_servers: the file's hit patched)
        hits_over = {o: _Patched(o) for o in entries._servers} | over
        _column(w, "hits", snap.raw("hits"), snap.col("hits.offsets"), 1,
                list(_segments(n_old, n, sorted(hits_over))) if entries._servers else segments, hits_over,
                lambda e: _pack.encode(entries.hit_of(e.o)) if isinstance(e, _Patched)
                else b"" if e.hit is None else _pack.encode(e.hit), offsets=True)
        snap.release_pages()
        w.put("listed", index.listed.serialize())
        w.put("names_order", index._names, "I")
        for sort, view in index._orders.items():
            w.put(f"order.{sort}", view, "I")
        return _finish(w, f, part, path, index, lexicon, n=n, laid=laid, updated_at=updated_at,
                       stream_seq=stream_seq, meta=meta)


class _Patched(NamedTuple):
    """A mod in _write_over's hits column whose hit is the file's with its active servers patched."""
    o: int


def _segments(n_old: int, n: int, changed: list[int]) -> Iterator[tuple[int, int, bool]]:
    """The ordinals in order as (a, b, False) runs of the old file's mods unchanged and (o, o + 1,
    True) for each mod re-read, added or removed since (every ordinal past the file's is one)."""
    prev = 0
    for c in changed:
        if prev < min(c, n_old):
            yield prev, min(c, n_old), False
        yield c, c + 1, True
        prev = c + 1
    if prev < n_old:
        yield prev, n_old, False


def _merged(old, extra) -> Iterator[tuple[str, int | None]]:
    """The sorted keys ``old`` (a file's) and ``extra`` (some of them in ``old``) in order, once
    each, with the key's index in ``old`` (None: not there)."""
    extra = sorted(extra)
    j, m = 0, len(extra)
    for i, key in enumerate(old):
        while j < m and extra[j] < key:
            yield extra[j], None
            j += 1
        if j < m and extra[j] == key:
            j += 1
        yield key, i
    while j < m:
        yield extra[j], None
        j += 1


def _posting(table: Table, key: str, i: int | None):
    """``key``'s posting serialized as it is now (None: it holds no mod): the file's bytes when no
    re-read changed it (nor took a mod out of it: ``Table.dropped``), else serialized again."""
    bm = dict.get(table, key)
    if bm is not None:
        return bm.serialize() if bm else None
    if i is None:
        return None
    raw = table._raw[table._offsets[i]:table._offsets[i + 1]]
    if not raw:
        return None
    if table.dropped:
        bm = BitMap.deserialize(raw)
        if bm.intersect(table.dropped):
            bm -= table.dropped
            return bm.serialize() if bm else None
    return raw


def _live_keys(w: _Writer, section: str, table: Table, old) -> tuple[list[str], array]:
    """The table's keys that hold a mod, in order, with each one's index in the old file's keys
    (-1: new), its postings written as ``section`` on the way."""
    keys, from_old = [], array("i")

    def payloads():
        for key, i in _merged(old, dict.keys(table)):
            raw = _posting(table, key, i)
            if raw is not None:
                keys.append(key)
                from_old.append(-1 if i is None else i)
                yield raw

    w.blobs(section, payloads())
    return keys, from_old


def _remap(from_old: array, n_old: int) -> array | None:
    """Old key id -> new key id (None: the same ids)."""
    if len(from_old) == n_old and all(i == j for j, i in enumerate(from_old)):
        return None
    remap = array("I", [_NO_ID]) * n_old
    for j, i in enumerate(from_old):
        if i >= 0:
            remap[i] = j
    return remap


def _laid_chunks(vocabulary: list[str], from_old: array, table: Table, old, offsets: array):
    """The laid postings of ``vocabulary`` (its ordinals, end to end; ``offsets`` filled): runs of
    unchanged postings copied from the old file's laid arrays, the others from the postings."""
    flat, old_offsets = old if old else (None, None)
    total, run = 0, None

    def copied():
        nonlocal total
        a, b = old_offsets[run[0]], old_offsets[run[1]]
        base = total - a
        offsets.extend(x + base for x in old_offsets[run[0] + 1:run[1] + 1])
        total += b - a
        return flat[a:b]

    for key, i in zip(vocabulary, from_old):
        held = dict.get(table, key)
        if held is None and i >= 0 and flat is not None:
            if run is not None and run[1] == i:
                run = (run[0], i + 1)
                continue
            if run is not None:
                yield copied()
            run = (i, i + 1)
            continue
        if run is not None:
            yield copied()
            run = None
        if held is None:
            raw = table._raw[table._offsets[i]:table._offsets[i + 1]] if i >= 0 else b""
            held = BitMap.deserialize(raw) if raw else BitMap()
        ordinals = held.to_array()
        total += len(ordinals)
        offsets.append(total)
        yield ordinals
    if run is not None:
        yield copied()


def _ids_column(w: _Writer, name: str, snap: Snapshot, remap: array | None, segments, over: dict, of_entry) -> None:
    """A per-mod column of key ids (and its offsets): the old file's runs, renumbered by ``remap``."""
    _column(w, name, snap.raw(name), snap.col(name + ".offsets"), 4, segments, over,
            lambda e: array("I", of_entry(e)).tobytes(), remap=remap, kind="I", offsets=True)


def _column(w: _Writer, name: str, raw: memoryview, old_offsets: memoryview, size: int, segments, over: dict,
            of_entry, *, remap: array | None = None, kind: str = "B", offsets: bool = False) -> None:
    """A per-mod column of ``size``-byte items, mod by mod as ``segments`` has them: a run of
    unchanged mods is the old file's bytes (``raw``, at the old file's ``old_offsets``, in items),
    copied (key ids renumbered by ``remap`` when given); a changed mod's items are ``of_entry``'s
    bytes for its entry (none for a removed one). With ``offsets``, its own offsets section too
    (else it shares another's)."""
    out = array("Q", [0])

    def chunks():
        total = 0
        for a, b, changed in segments:
            if changed:
                e = over[a]
                item = of_entry(e) if e is not None else b""
                total += len(item) // size
                out.append(total)
                yield item
                continue
            x, y = old_offsets[a], old_offsets[b]
            base = total - x
            out.extend(v + base for v in old_offsets[a + 1:b + 1])
            total += y - x
            for s in range(x * size, y * size, _CHUNK):
                part = raw[s:min(y * size, s + _CHUNK)]
                yield part if remap is None else array("I", map(remap.__getitem__, part.cast("I")))

    w.stream(name, chunks(), kind)
    if offsets:
        w.put(name + ".offsets", out, "Q")


# --- reading -------------------------------------------------------------------------------

class Snapshot:
    """A snapshot file mapped (read-only; its pages file-backed, shared by every process mapping it)."""

    def __init__(self, path: Path, *, verify: bool = False) -> None:
        """``verify``: read every byte once and check the digest (a file just fetched; the
        object store has checked its own digest of the same bytes on the way)."""
        self.path = Path(path)
        with open(self.path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < len(MAGIC) + _TRAILER.size:
                raise Unusable("too short")
            self.map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        # Sections read a few bytes at a time at random and only to be copied (the hits: a page
        # of results' rows) are read with pread through this descriptor, not the mapping: the
        # bytes come from the page cache all the same, and no page of them stays in the RSS
        # (mapped, the hits were ~34 of the file's 147 MiB after 2 s of load at 100,000 mods).
        fd = os.open(self.path, os.O_RDONLY)
        weakref.finalize(self, os.close, fd)
        self.fd = fd
        # Searches read the file at random (an entry's columns, a posting): no read-ahead nor
        # fault-around, so a page is mapped when it is read, not its neighbours (without this,
        # a minute of the bench's mixed load mapped 141 of the file's 145 MiB into the RSS).
        if hasattr(mmap, "MADV_RANDOM"):
            self.map.madvise(mmap.MADV_RANDOM)
        view = memoryview(self.map)
        if bytes(view[:len(MAGIC)]) != MAGIC:
            raise Unusable("not a snapshot of this format")
        header_len, digest = _TRAILER.unpack(view[size - _TRAILER.size:])
        body_end = size - _TRAILER.size + 8
        if header_len > body_end:
            raise Unusable("bad header length")
        self.digest = digest.hex()
        if verify and _file_sha256(self.path, body_end) != digest:
            raise Unusable("digest mismatch")
        header = json.loads(bytes(view[body_end - 8 - header_len:body_end - 8]))
        self.meta, self.sections = header["meta"], header["sections"]
        if self.meta.get("format") != FORMAT:
            raise Unusable(f"format {self.meta.get('format')}")
        self.view = view

    def release_pages(self) -> None:
        """Unmap this process's pages of the file (``MADV_DONTNEED``: they stay in the page cache,
        shared with every replica on the node, and the next read maps one again at a minor fault's
        cost). Searches read the file at random (entries' columns, postings): after a
        minute of load nearly every page is mapped and counted in the RSS though none is this
        process's own memory; a replica lets them go periodically (search_index.py)."""
        if hasattr(mmap, "MADV_DONTNEED"):
            self.map.madvise(mmap.MADV_DONTNEED)

    def read(self, name: str, start: int, end: int) -> bytes:
        """Bytes ``start:end`` of a section, read (pread) rather than mapped."""
        pos, size, _ = self.sections[name]
        if not 0 <= start <= end <= size:
            raise IndexError((name, start, end))
        return os.pread(self.fd, end - start, pos + start)

    def raw(self, name: str) -> memoryview:
        pos, size, _ = self.sections[name]
        return self.view[pos:pos + size]

    def col(self, name: str) -> memoryview:
        pos, size, kind = self.sections[name]
        return self.view[pos:pos + size].cast(kind)

    def strings(self, name: str) -> list[str]:
        return Strings(self, name).tolist()

    def blob(self, name: str, i: int) -> memoryview:
        offsets = self.col(name + ".offsets")
        return self.raw(name)[offsets[i]:offsets[i + 1]]

    def blobs(self, name: str) -> Iterator[memoryview]:
        blob, offsets = self.raw(name), self.col(name + ".offsets").tolist()
        return (blob[a:b] for a, b in zip(offsets, offsets[1:]))


def _file_sha256(path: Path, size: int) -> bytes:
    """SHA-256 of the file's first ``size`` bytes, read (page cache) rather than through the
    mapping, so checking a file does not bring all of it into this process's RSS."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while size > 0:
            chunk = f.read(min(size, 1 << 20))
            if not chunk:
                break
            h.update(chunk)
            size -= len(chunk)
    return h.digest()


class Strings:
    """A sorted string section read in place: each item decoded when read (bisect reads ~17), none
    held. For the keys only search's look-ups read (the filter keys: ~150,000 at 100,000 mods, most
    of them name trigrams, ~10 MB as Python strings)."""

    def __init__(self, snap: Snapshot, name: str) -> None:
        self._raw, self._offsets = snap.raw(name), snap.col(name + ".offsets")
        self._n = len(self._offsets) - 1

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return bytes(self._raw[self._offsets[i]:self._offsets[i + 1]]).decode()

    def __iter__(self):
        return (self[i] for i in range(self._n))

    def tolist(self) -> list[str]:
        """Every item decoded at once (one copy of the section, not a read per item)."""
        blob, offsets = bytes(self._raw), self._offsets.tolist()
        return [blob[a:b].decode() for a, b in zip(offsets, offsets[1:])]


class Sorted:
    """A sorted string sequence over a :class:`Strings` section and the keys inserted since (kept
    sorted beside it), read as one merged sequence: what ``bisect``, indexing and slicing read, and
    ``insert`` (at the place bisect gave) adds to. For the README vocabulary (~145,000 words at
    100,000 mods, ~10 MB as a list of Python strings), which only prefix look-ups read."""

    def __init__(self, base: Strings) -> None:
        self._base = base
        self._extra: list[str] = []
        self._at: list[int] = []  # each extra key's index in the merged sequence

    def __len__(self) -> int:
        return len(self._base) + len(self._extra)

    def insert(self, i: int, key: str) -> None:
        bisect.insort(self._extra, key)
        base = self._base
        self._at = [j + bisect.bisect_left(base, x) for j, x in enumerate(self._extra)]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        at = self._at
        if not at:
            return self._base[i]
        j = bisect.bisect_left(at, i)
        if j < len(at) and at[j] == i:
            return self._extra[j]
        return self._base[i - j]

    def __iter__(self):
        return (self[i] for i in range(len(self)))


class Column:
    """A string per ordinal read in place (a :class:`Strings` section), with the items set or
    appended since held in memory: the names and slugs of a snapshot's mods (``name_of``,
    ``Entries``' slugs; ~7 MB each as lists of Python strings at 100,000 mods), which a search
    reads a few of (its candidates', a bisect's)."""

    def __init__(self, base: Strings) -> None:
        self._base, self._n = base, len(base)
        self._set: dict[int, str] = {}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: int) -> str:
        if i < 0:
            i += self._n
        found = self._set.get(i)
        if found is not None:
            return found
        if not 0 <= i < self._n:
            raise IndexError(i)
        return self._base[i]

    def __setitem__(self, i: int, value: str) -> None:
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        self._set[i] = value

    def append(self, value: str) -> None:
        self._set[self._n] = value
        self._n += 1

    def __iter__(self):
        return (self[i] for i in range(self._n))


class SlugMap:
    """SearchIndex.by_slug (a listed mod's slug -> its ordinal) over the snapshot's slug column:
    the listed ordinals sorted by slug (4 bytes a mod, sorted once at load) looked up by bisect,
    the slugs set or deleted since in a dict. As a dict of 100,000 it held ~6.7 MiB."""

    def __init__(self, slugs: Strings, listed: BitMap) -> None:  # (the file's: never changed)
        decoded = slugs.tolist()
        self._order = array("I", sorted(listed, key=decoded.__getitem__))
        self._slugs = slugs
        self._changed: dict[str, int | None] = {}  # None: deleted since

    def _base(self, slug: str) -> int | None:
        order, slugs = self._order, self._slugs
        i = bisect.bisect_left(order, slug, key=slugs.__getitem__)
        return order[i] if i < len(order) and slugs[order[i]] == slug else None

    def get(self, slug: str, default=None):
        if slug in self._changed:
            found = self._changed[slug]
        else:
            found = self._base(slug)
        return default if found is None else found

    def __contains__(self, slug: str) -> bool:
        return self.get(slug) is not None

    def __getitem__(self, slug: str) -> int:
        found = self.get(slug)
        if found is None:
            raise KeyError(slug)
        return found

    def __setitem__(self, slug: str, ordinal: int) -> None:
        self._changed[slug] = ordinal

    def __delitem__(self, slug: str) -> None:
        self[slug]  # (KeyError, as a dict's)
        self._changed[slug] = None

    def items(self):
        changed, slugs = self._changed, self._slugs
        for o in self._order:
            slug = slugs[o]
            if slug not in changed:
                yield slug, o
        yield from ((slug, o) for slug, o in changed.items() if o is not None)

    def __iter__(self):
        return (slug for slug, _ in self.items())

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Table(dict):
    """A posting table (key -> BitMap) whose bitmaps stay serialized in the snapshot until read.

    Two kinds of bitmaps in memory: **held** ones (the dict's own: every key added since the
    snapshot, and every posting an event changed, which the index takes with ``held``), kept for
    good; and **read** ones, deserialized for searches (``get``) and kept in a cache bounded by
    ``budget`` (their serialized bytes, shared by a snapshot's tables): past it, every table's read
    bitmaps are let go and ``budget.evicted`` called (the index forgets its remembered prefix
    unions, which may have been built from them: SearchIndex._follow keeps those exact only over
    the postings still in memory). Without the bound, a replica kept every posting a search ever
    read (a README prefix union reads thousands): +90 MB over a minute of mixed load at 100,000
    mods. ``dropped``: ordinals taken out of every posting (``drop``) whose file copies are read
    later (a README table: SearchIndex._drop_readme)."""

    def __init__(self, snap: Snapshot, keys, section: str, budget: Budget | None = None) -> None:
        super().__init__()
        self._snap, self._keys, self._section = snap, keys, section
        self._offsets, self._raw = snap.col(section + ".offsets"), snap.raw(section)
        self.dropped = BitMap()
        self._read: dict[str, BitMap] = {}
        self.budget = budget if budget is not None else Budget()
        self.budget.tables.append(weakref.ref(self))

    def _file(self, key: str) -> BitMap | None:
        keys = self._keys
        i = bisect.bisect_left(keys, key)
        if i == len(keys) or keys[i] != key:
            return None
        raw = self._raw[self._offsets[i]:self._offsets[i + 1]]
        if not raw:
            return None
        bm = BitMap.deserialize(raw)
        if self.dropped:
            bm -= self.dropped
        self.budget.spend(len(raw))
        return bm

    def get(self, key, default=None):
        found = dict.get(self, key)
        if found is None:
            found = self._read.get(key)
            if found is None:
                found = self._file(key)
                if found is not None:
                    self._read[key] = found
        return default if found is None else found

    def held(self, key):
        """The posting of ``key`` to change in place (an event's re-read): kept for good."""
        found = dict.get(self, key)
        if found is None:
            found = self._read.pop(key, None)
            if found is None:
                found = self._file(key)
            if found is not None:
                dict.__setitem__(self, key, found)
        return found

    def __getitem__(self, key):
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __setitem__(self, key, value) -> None:
        self._read.pop(key, None)
        dict.__setitem__(self, key, value)

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def setdefault(self, key, default=None):
        found = self.held(key)
        if found is None:
            dict.__setitem__(self, key, default)
            return default
        return found

    def __iter__(self):
        return iter(sorted(set(self._keys).union(dict.keys(self))))

    def keys(self):
        return list(self)

    def items(self):
        return [(k, self[k]) for k in self]

    def __len__(self) -> int:
        return len(self.keys())

    def drop(self, ordinal: int) -> list[str]:
        """Take ``ordinal`` out of every posting; the keys of those in memory that held it
        (a posting not in memory is not in any remembered union: SearchIndex._follow)."""
        dropped = []
        for table in (dict.items(self), self._read.items()):
            for key, bm in table:
                if ordinal in bm:
                    bm.discard(ordinal)
                    dropped.append(key)
        self.dropped.add(ordinal)
        return dropped

    def forget_read(self) -> None:
        self._read.clear()


class Budget:
    """The serialized bytes of the postings a snapshot's tables hold as read (Table): past
    ``limit``, every table lets its read ones go, then ``evicted`` is called."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit or POSTINGS_READ_MAX
        self.spent = 0
        # (weak: a table refers to its budget, and a cycle would keep a replaced index, its mapping
        # included, until a full collector pass found it; this way it goes when its last reference does)
        self.tables: list[weakref.ref[Table]] = []
        self.evicted = lambda: None
        self.evictions = 0

    def spend(self, n: int) -> None:
        self.spent += n
        if self.spent > self.limit:
            self.spent = n
            self.evictions += 1
            for ref in self.tables:
                table = ref()
                if table is not None:
                    table.forget_read()
            self.evicted()


class _Postings:
    """SearchIndex._vocabulary_postings (and _heavy's, _readme's) over a Table: the postings of
    the vocabulary's slice, read through the table (the vocabulary list itself is kept exact)."""

    def __init__(self, vocabulary: list[str], table: Table) -> None:
        self._vocabulary, self._table = vocabulary, table

    def __getitem__(self, i):
        if isinstance(i, slice):
            get = self._table.get
            return [get(x) for x in self._vocabulary[i]]
        return self._table.get(self._vocabulary[i])

    def insert(self, i: int, value) -> None:  # (the table holds it)
        pass

    def __setitem__(self, i, value) -> None:
        pass

    def __len__(self) -> int:
        return len(self._vocabulary)


class Ranking:
    """What ranking a candidate reads of its entry (SearchIndex.ranked, _fastsearch.relevances:
    name, lexemes and their terms, popularity; downloads and slug break ties), read from the
    columns without the rest of an ``Entry``: its filter keys (~40 a mod, most of them name
    trigrams, each a string decoded from the file), weight-A lexemes and id are for a mod's
    removal and its page, not for ranking. Building the whole Entry for every candidate took
    ~60 % of a search's CPU at 100,000 mods, and kept the keys columns (~17 MiB) hot in the RSS."""

    __slots__ = ("name", "slug", "downloads", "keys", "lexemes", "terms", "popularity")

    def __init__(self, name: str, slug: str, downloads: int, keys: tuple[str, ...], terms: array) -> None:
        self.name, self.slug, self.downloads, self.keys, self.terms = name, slug, downloads, keys, terms
        self.lexemes = len(keys)
        self.popularity = searchindex.popularity(downloads)


class Entries:
    """SearchIndex.entries over the snapshot's columns: an ``Entry`` built when read (the last
    ENTRIES_KEPT kept), the entries of mods re-read or added since held in memory. Ranking reads
    a :class:`Ranking` of each candidate instead (``ranking``), and a page its mods' ids from their
    column (``id_of``)."""

    def __init__(self, snap: Snapshot, vocabulary: list[str], filter_keys: list[str], listed: BitMap,
                 name_of: Column, slugs: Column) -> None:
        s = snap
        self._n = snap.meta["ordinals"]
        self._present = BitMap(listed)
        self._vocabulary, self._filter_keys, self._name_of, self._slugs = vocabulary, filter_keys, name_of, slugs
        self._ids = s.raw("ids")
        self._downloads, self._created, self._changed, self._updated = (
            s.col("downloads"), s.col("created"), s.col("changed"), s.col("updated"))
        self._readme = s.col("readme_hash")
        self._lex, self._lex_off, self._terms = s.col("lexemes"), s.col("lexemes.offsets"), s.raw("terms")
        self._heavy, self._heavy_off = s.col("heavy"), s.col("heavy.offsets")
        self._keys, self._keys_off = s.col("keys"), s.col("keys.offsets")
        self._read, self._hits_off = s.read, s.col("hits.offsets")  # (the hits read, not mapped: Snapshot.fd)
        self._over: dict[int, Entry | None] = {}  # re-read, added or dropped since the snapshot
        # Hits whose active_servers alone moved since the snapshot (the writer's day's turn:
        # ``set_servers``), ordinal -> servers: the rest of the hit is the file's.
        self._servers: dict[int, int] = {}
        self._kept: dict[int, Entry] = {}
        self._ranking: dict[int, Ranking] = {}  # (kept as _kept is)
        self._len = self._n

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, o: int) -> Entry | None:
        if o < 0:
            o += len(self)
        over = self._over
        if o in over:
            return over[o]
        found = self._kept.get(o)
        if found is None:
            if o >= self._n:
                raise IndexError(o)
            if o not in self._present:
                return None
            found = self._build(o)
            if len(self._kept) >= ENTRIES_KEPT:
                self._kept.clear()
            self._kept[o] = found
        return found

    def ranking(self, o: int) -> Entry | Ranking:
        """What ranking reads of a listed mod: its Entry when one is held (re-read since, or
        built and kept), else a :class:`Ranking` from the columns."""
        if o in self._over:
            return self._over[o]
        found = self._kept.get(o) or self._ranking.get(o)
        if found is None:
            if not 0 <= o < self._n or o not in self._present:
                raise KeyError(o)  # (ranking reads listed candidates only)
            lexemes, terms = self._lexemes_of(o)
            found = Ranking(self._name_of[o], self._slugs[o], self._downloads[o], tuple(lexemes), terms)
            if len(self._ranking) >= ENTRIES_KEPT:
                self._ranking.clear()
            self._ranking[o] = found
        return found

    def _lexemes_of(self, o: int) -> tuple[list[str], array]:
        """A mod's lexemes (Entry.keys[:lexemes]) and their terms, from the file's columns."""
        a, b = self._lex_off[o], self._lex_off[o + 1]
        vocabulary = self._vocabulary
        terms = array("f")
        terms.frombytes(self._terms[a * 4:b * 4])
        return [vocabulary[i] for i in self._lex[a:b]], terms

    def id_of(self, o: int):
        """The mod's id (Entry.id), from its column unless re-read since."""
        if o in self._over:
            return self._over[o].id
        return uuid.UUID(bytes=bytes(self._ids[o * 16:o * 16 + 16]))

    def __setitem__(self, o: int, entry: Entry | None) -> None:
        self._kept.pop(o, None)
        self._ranking.pop(o, None)
        self._servers.pop(o, None)
        self._over[o] = entry

    def set_servers(self, o: int, servers: int) -> None:
        """The hit of a mod not re-read says ``servers`` active servers from now on (the rest of
        its hit the file's): telemetry's count moves without the mod's row (sqlpath.ACTIVE_SERVERS,
        every mod's at the day's turn), so the writer patches it instead of re-reading the mod."""
        if o in self._over:
            raise ValueError(f"ordinal {o} was re-read: its hit is its entry's")
        self._servers[o] = servers

    def append(self, entry: Entry) -> None:
        self._over[self._len] = entry
        self._len += 1

    def __iter__(self):
        return (self[o] for o in range(len(self)))

    def hit_of(self, o: int) -> dict | None:
        """The mod's hit: an entry's own when re-read since, else decoded from the file (an Entry
        built from the file holds none: most are built to be ranked, not shown)."""
        if o in self._over:
            e = self._over[o]
            return None if e is None else e.hit
        a, b = self._hits_off[o], self._hits_off[o + 1]
        hit = _unpack.decode(self._read("hits", a, b)) if b > a else None
        if hit is not None and o in self._servers:
            hit["active_servers"] = self._servers[o]
        return hit

    def changed_of(self, o: int) -> int:
        """Entry.changed of a mod the index holds, from its column (an entry re-read since: its own)."""
        if o in self._over:
            return self._over[o].changed
        return self._changed[o]

    def order_key(self, sort: str, o: int) -> tuple:
        """SearchIndex._order_key of a mod, from the columns (an entry re-read since: its own)."""
        if o in self._over:
            return SearchIndex._order_key(sort, self._over[o])
        slug = self._slugs[o]
        if sort == "updated":
            u = self._updated[o]
            return (u == _NONE_TIME, -(0 if u == _NONE_TIME else u), slug)
        if sort == "newest":
            return (-self._created[o], slug)
        if sort == "downloads":
            return (-self._downloads[o], slug)
        return (self._name_of[o], slug)

    def _build(self, o: int) -> Entry:
        vocabulary, fkeys = self._vocabulary, self._filter_keys
        lexemes, terms = self._lexemes_of(o)
        h0, h1 = self._heavy_off[o], self._heavy_off[o + 1]
        k0, k1 = self._keys_off[o], self._keys_off[o + 1]
        filters = [fkeys[i] for i in self._keys[k0:k1]]
        updated = self._updated[o]
        downloads = self._downloads[o]
        return Entry(self.id_of(o), self._slugs[o], self._name_of[o],
                     downloads, None if updated == _NONE_TIME else updated, self._created[o],
                     (*lexemes, *filters), self._changed[o], tuple(vocabulary[i] for i in self._heavy[h0:h1]),
                     len(lexemes), terms, searchindex.popularity(downloads),
                     None, self._readme[o],
                     tuple(k[3:] for k in filters if k.startswith("ab:")))


def load(path: Path, *, verify: bool = False) -> tuple[SearchIndex, Lexicon, dict]:
    """The index and lexicon of the snapshot at ``path``, and its ``meta`` (Unusable: it cannot be read)."""
    snap = Snapshot(path, verify=verify)
    meta = snap.meta
    index = SearchIndex()
    vocabulary = snap.strings("vocabulary")
    filter_keys = Strings(snap, "filter_keys")
    readme_vocabulary = Strings(snap, "readme_vocabulary")
    index.listed = BitMap.deserialize(snap.raw("listed"))
    index.name_of = Column(Strings(snap, "name"))
    slugs = Column(Strings(snap, "slug"))
    index.by_slug = SlugMap(slugs._base, index.listed)
    index.entries = Entries(snap, vocabulary, filter_keys, index.listed, index.name_of, slugs)
    budget = Budget()
    index.postings = Table(snap, vocabulary, "postings", budget)
    index.heavy = Table(snap, vocabulary, "heavy_postings", budget)
    index.filters = Table(snap, filter_keys, "filter_postings", budget)
    index.readme = Table(snap, readme_vocabulary, "readme_postings", budget)
    budget.evicted = index._prefix_unions.clear  # (unions may have been built from the postings let go)
    index.snapshot = snap
    index._vocabulary = list(vocabulary)
    index._vocabulary_postings = _Postings(index._vocabulary, index.postings)
    index._vocabulary_heavy = _Postings(index._vocabulary, index.heavy)
    index._readme_vocabulary = Sorted(readme_vocabulary)
    index._readme_vocabulary_postings = _Postings(index._readme_vocabulary, index.readme)
    if meta["laid"] and searchindex._fastsearch is not None:
        index._laid_vocabulary = vocabulary
        index._laid = {h: (snap.col(f"laid.{int(h)}"), snap.col(f"laid.{int(h)}.offsets")) for h in (False, True)}
    index._names = _array("I", snap.raw("names_order"))
    if index._laid:
        index._name_offsets = array("Q", range(len(index._names) + 1))
    for sort in index._orders:
        index._orders[sort] = _array("I", snap.raw(f"order.{sort}"))
    index.ordered, index.words_exact, index.position = meta["ordered"], meta["words_exact"], meta["updated_at"]
    index.words = Words.restore(snap.strings("words"), _array("H", snap.raw("word_sizes")),
                                dict(zip(snap.strings("word_trigrams"),
                                         map(BitMap.deserialize, snap.blobs("word_postings")))))
    lexicon = Lexicon()
    learned = _unpack.decode(snap.raw("lexicon"))
    for token, lexemes in learned["tokens"].items():
        lexicon._tokens[token] = None if lexemes is None else TokenLexemes(*(_term(t) for t in lexemes))
    lexicon._prefix.update(learned["prefix"])
    return index, lexicon, dict(meta, digest=snap.digest, bytes=len(snap.view))


def _array(typecode: str, raw) -> array:
    out = array(typecode)
    out.frombytes(raw)
    return out


def _term(t):
    return None if t is None else tuple(t)
