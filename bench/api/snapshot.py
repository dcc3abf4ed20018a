"""Replica start from a snapshot of the search index (issue 38): a prototype in bench/ only, not
wired into the API (docs/api.md, "Replica start: the snapshot (proposed)").

    python bench/api/snapshot.py [--mods 100000] [--data /tmp/searchprofile] [--events 1000]

Each way of getting a replica's index is measured in a child process of its own (a replica's
start: its time, its CPU, the memory it adds, anonymous and file-backed), on searchprofile.py's
seeded catalogue:

* ``postgresql``: today's start (``indexed.load`` and ``prewarm`` under ``heap.building``, as
  search_index.LiveIndex._load), with where its time goes (rows read, ``Builder.add``, ``finish``,
  the catalogue words, prewarm's statement, the collector's settle). This child then writes the
  snapshots below, timing each write, and records the answers of run.py's query mix.
* ``pickle``: the loaded ``SearchIndex`` and the lexicon prewarm learned, pickled (protocol 5)
  into one file; a replica unpickles it: the same Python objects, rebuilt.
* ``columnar``: the same content laid out as arrays and serialized roaring bitmaps in one file
  (``write_columnar``), which a replica ``mmap``s: per-mod columns are ``memoryview``\\ s over the
  mapping (zero copy, file-backed pages shared by every replica on the node), the postings
  deserialized into pyroaring bitmaps, the vocabulary and the slugs decoded into Python strings,
  the hits left as JSON in the file until a page shows them. A prototype of the format, not of
  the search over it: what it proves is what loading such a file costs, and that it holds the
  index's whole content (a digest of every mod's fields and every posting, compared with the
  index loaded from PostgreSQL).
* ``lazy``: the same file, its postings left serialized in the mapping until a search first
  reads one (a lexeme -> position dict; each bitmap deserialized on first use and kept).
* ``nats``: the columnar file put into a NATS JetStream object store (what a replica on another
  node would fetch: it cannot map another node's file), fetched, written to local disk, then
  loaded as ``columnar``.

Then, for the events since the snapshot: ``indexed.reread`` of ``--events`` mods on the
unpickled index (what a replica applies after loading; PostgreSQL reads included), and the
pickled index's answers to the query mix compared with the PostgreSQL-loaded one's.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import json
import mmap
import os
import pickle
import random
import struct
import subprocess
import sys
import time
from array import array
from pathlib import Path

import asyncpg
import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import data  # noqa: E402
from peer import mb, status_kb  # noqa: E402
from run import _search_query, api_recheck, queries  # noqa: E402

MAGIC = b"IXSNAP01"
_json = msgspec.json.Encoder()


# --- the columnar snapshot ---------------------------------------------------------------

class Writer:
    """Sections of one file, each 8-byte aligned, named in a JSON header at the end."""

    def __init__(self, f) -> None:
        self.f = f
        self.sections: dict[str, tuple[int, int, str]] = {}
        f.write(MAGIC)

    def put(self, name: str, payload, kind: str = "b") -> None:
        pos = self.f.tell()
        pad = (-pos) % 8
        self.f.write(b"\0" * pad)
        raw = payload.tobytes() if isinstance(payload, array) else bytes(payload)
        self.sections[name] = (pos + pad, len(raw), kind)
        self.f.write(raw)

    def strings(self, name: str, items: list[str]) -> None:
        """Strings as one UTF-8 blob and where each starts (uint64, n + 1)."""
        blob, offsets = bytearray(), array("Q", [0])
        for s in items:
            blob += s.encode()
            offsets.append(len(blob))
        self.put(name, blob)
        self.put(name + ".offsets", offsets, "Q")

    def blobs(self, name: str, items: list[bytes]) -> None:
        blob, offsets = bytearray(), array("Q", [0])
        for b in items:
            blob += b
            offsets.append(len(blob))
        self.put(name, blob)
        self.put(name + ".offsets", offsets, "Q")

    def close(self) -> None:
        header = json.dumps(self.sections).encode()
        self.f.write(header)
        self.f.write(struct.pack("<Q", len(header)))


def write_columnar(index, lexicon, path: Path) -> None:
    """``index`` (a loaded SearchIndex) and ``lexicon`` as the columnar snapshot."""
    entries = [e for e in index.entries]
    n = len(entries)
    vocabulary = sorted(index.postings)
    lexeme_id = {x: i for i, x in enumerate(vocabulary)}
    filter_keys = sorted(index.filters)
    filter_id = {x: i for i, x in enumerate(filter_keys)}
    with open(path, "wb") as f:
        w = Writer(f)
        w.put("ids", b"".join(e.id.bytes for e in entries))
        for column in ("downloads", "created", "changed"):
            w.put(column, array("q", [getattr(e, column) for e in entries]), "q")
        w.put("updated", array("q", [-(2**63) if e.updated is None else e.updated for e in entries]), "q")
        w.strings("slug", [e.slug for e in entries])
        w.strings("name", [e.name for e in entries])
        lex, lex_off, terms, heavy, heavy_off, keys, keys_off = (array("I"), array("Q", [0]), array("f"),
                                                                 array("I"), array("Q", [0]), array("I"),
                                                                 array("Q", [0]))
        for e in entries:
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
        w.blobs("hits", [_json.encode(e.hit) for e in entries])
        w.strings("vocabulary", vocabulary)
        w.blobs("postings", [index.postings[x].serialize() for x in vocabulary])
        w.blobs("heavy_postings", [index.heavy[x].serialize() if x in index.heavy else b"" for x in vocabulary])
        w.strings("filter_keys", filter_keys)
        w.blobs("filter_postings", [index.filters[x].serialize() for x in filter_keys])
        w.put("names_order", array("I", index._names), "I")
        for sort, view in index._orders.items():
            w.put(f"order.{sort}", array("I", view), "I")
        for heavy_side, (flat, offsets) in index._laid.items():
            w.put(f"laid.{int(heavy_side)}", flat, "I")
            w.put(f"laid.{int(heavy_side)}.offsets", offsets, "Q")
        words = index.words
        w.strings("words", words._words)
        trigrams = sorted(words._postings)
        w.strings("word_trigrams", trigrams)
        w.blobs("word_postings", [words._postings[t].serialize() for t in trigrams])
        w.put("lexicon", _json.encode({"tokens": {k: None if v is None else [v.english, v.russian, v.simple]
                                                  for k, v in lexicon._tokens.items()},
                                       "prefix": lexicon._prefix}))
        w.put("meta", _json.encode({"mods": n, "ordered": index.ordered, "words_exact": index.words_exact}))
        w.close()


class Columnar:
    """The columnar snapshot mapped: what a replica would hold after loading it."""

    def __init__(self, path: Path, lazy: bool = False) -> None:
        """``lazy``: the postings stay serialized in the file until a search first reads one
        (a key -> position dict, each bitmap deserialized on first use and kept)."""
        from pyroaring import BitMap

        self.file = open(path, "rb")
        self.map = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
        view = memoryview(self.map)
        assert view[:8] == MAGIC
        (header_len,) = struct.unpack("<Q", view[-8:])
        self.sections = json.loads(bytes(view[-8 - header_len:-8]))
        self.view = view
        meta = msgspec.json.decode(self._raw("meta"))
        self.n = meta["mods"]
        # Zero-copy columns (file-backed pages).
        for column in ("downloads", "created", "changed", "updated"):
            setattr(self, column, self._col(column))
        self.lexemes, self.lexemes_offsets, self.terms = (self._col("lexemes"), self._col("lexemes.offsets"),
                                                          self._col("terms"))
        self.heavy_ids, self.heavy_offsets = self._col("heavy"), self._col("heavy.offsets")
        self.keys, self.keys_offsets = self._col("keys"), self._col("keys.offsets")
        self.hits_offsets = self._col("hits.offsets")
        self.names_order = self._col("names_order")
        self.orders = {s: self._col(f"order.{s}") for s in ("updated", "newest", "downloads", "name")}
        self.laid = {h: (self._col(f"laid.{int(h)}"), self._col(f"laid.{int(h)}.offsets")) for h in (False, True)}
        # What search needs as Python objects: the vocabulary (bisect for prefixes), the postings
        # as bitmaps (set algebra), the filter keys, slug -> ordinal (events), the catalogue words.
        self.vocabulary = self._strings("vocabulary")
        self.lazy = lazy
        if lazy:
            self.lexeme_ids = {x: i for i, x in enumerate(self.vocabulary)}
            self._postings: dict[tuple[bool, int], BitMap] = {}
        else:
            self.postings = dict(zip(self.vocabulary, map(BitMap.deserialize, self._blobs("postings"))))
            self.heavy = {x: BitMap.deserialize(b) for x, b in zip(self.vocabulary, self._blobs("heavy_postings"))
                          if b}
        self.filter_keys = self._strings("filter_keys")
        self.filters = dict(zip(self.filter_keys, map(BitMap.deserialize, self._blobs("filter_postings"))))
        self.by_slug = {s: i for i, s in enumerate(self._strings("slug"))}
        self.words = self._strings("words")
        self.word_ids = {w: i for i, w in enumerate(self.words)}
        self.word_postings = dict(zip(self._strings("word_trigrams"),
                                      map(BitMap.deserialize, self._blobs("word_postings"))))
        lexicon = msgspec.json.decode(self._raw("lexicon"))
        self.tokens, self.prefix = lexicon["tokens"], lexicon["prefix"]
        self.ordered, self.words_exact = meta["ordered"], meta["words_exact"]

    def posting(self, lexeme: str, heavy: bool = False):
        """A lexeme's bitmap (``heavy``: weight A), from the file on first use when lazy."""
        from pyroaring import BitMap

        if not self.lazy:
            return (self.heavy if heavy else self.postings).get(lexeme)
        i = self.lexeme_ids.get(lexeme)
        if i is None:
            return None
        found = self._postings.get((heavy, i))
        if found is None:
            name = "heavy_postings" if heavy else "postings"
            offsets = self._col(name + ".offsets")
            raw = self._raw(name)[offsets[i]:offsets[i + 1]]
            if not raw:
                return None
            found = self._postings[(heavy, i)] = BitMap.deserialize(raw)
        return found

    def _raw(self, name: str) -> memoryview:
        pos, size, _ = self.sections[name]
        return self.view[pos:pos + size]

    def _col(self, name: str) -> memoryview:
        pos, size, kind = self.sections[name]
        return self.view[pos:pos + size].cast(kind)

    def _strings(self, name: str) -> list[str]:
        blob, offsets = bytes(self._raw(name)), self._col(name + ".offsets")
        return [blob[offsets[i]:offsets[i + 1]].decode() for i in range(len(offsets) - 1)]

    def _blobs(self, name: str):
        blob, offsets = self._raw(name), self._col(name + ".offsets")
        return (blob[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1))

    def string(self, name: str, i: int) -> str:
        offsets = self._col(name + ".offsets")
        return bytes(self._raw(name)[offsets[i]:offsets[i + 1]]).decode()

    def hit(self, ordinal: int) -> dict:
        """A page's hit, decoded from the file when shown."""
        o = self.hits_offsets
        return msgspec.json.decode(self._raw("hits")[o[ordinal]:o[ordinal + 1]])


# --- the digest: the same content, whichever way it was loaded ----------------------------

def _digest_rows(h, slug, name, downloads, updated, created, lexemes, heavy, terms, keys, hit) -> None:
    h.update(f"{slug}\0{name}\0{downloads}\0{updated}\0{created}\0".encode())
    h.update("\0".join(lexemes).encode() + b"\1" + "\0".join(heavy).encode() + b"\1" + "\0".join(keys).encode())
    h.update(array("f", terms).tobytes())
    h.update(hit)


def digest_index(index) -> str:
    h = hashlib.sha256()
    for e in index.entries:
        _digest_rows(h, e.slug, e.name, e.downloads, -(2**63) if e.updated is None else e.updated, e.created,
                     e.keys[:e.lexemes], e.heavy, e.terms, e.keys[e.lexemes:], _json.encode(e.hit))
    for table in (index.postings, index.heavy, index.filters):
        for k in sorted(table):
            h.update(k.encode() + table[k].serialize())
    return h.hexdigest()


def digest_columnar(c: Columnar) -> str:
    h = hashlib.sha256()
    vocab, fkeys = c.vocabulary, c.filter_keys
    lo, ho, ko, ho2 = c.lexemes_offsets, c.heavy_offsets, c.keys_offsets, c.hits_offsets
    hits = c._raw("hits")
    for i in range(c.n):
        _digest_rows(h, c.string("slug", i), c.string("name", i), c.downloads[i], c.updated[i], c.created[i],
                     [vocab[x] for x in c.lexemes[lo[i]:lo[i + 1]]], [vocab[x] for x in c.heavy_ids[ho[i]:ho[i + 1]]],
                     c.terms[lo[i]:lo[i + 1]].tolist(), [fkeys[x] for x in c.keys[ko[i]:ko[i + 1]]],
                     bytes(hits[ho2[i]:ho2[i + 1]]))
    tables = ((c.postings, c.heavy) if not c.lazy else
              ({x: c.posting(x) for x in vocab}, {x: b for x in vocab if (b := c.posting(x, True)) is not None}))
    for table in (*tables, c.filters):
        for k in sorted(table):
            h.update(k.encode() + table[k].serialize())
    return h.hexdigest()


# --- the children ----------------------------------------------------------------------

def _measured(before: dict, started: float, cpu: float) -> dict:
    after = status_kb()
    return {"seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
            "rss_mb": mb(after["VmRSS"] - before["VmRSS"]), "anon_mb": mb(after["RssAnon"] - before["RssAnon"]),
            "file_mb": mb(after["RssFile"] - before["RssFile"]), "process_rss_mb": mb(after["VmRSS"])}


async def _answers(conn, index, lexicon, names: list[str]) -> str:
    """A digest of the query mix's answers (slugs and totals), as the API would give them."""
    from indexium_search import sqlpath
    from indexium_search import indexed

    h = hashlib.sha256()
    corrections = sqlpath.Corrections()
    for kind, items in queries(data.Catalogue(names=names), random.Random(11)).items():
        for params in items:
            rows, total = await indexed.search(conn, _search_query(params), index=index, lexicon=lexicon,
                                               corrections=corrections)
            h.update(json.dumps([[r["slug"] for r in rows], total]).encode())
    return h.hexdigest()


async def child_postgresql(dsn: str, out: Path, names: list[str]) -> dict:
    from indexium_search import indexed, searchindex, trigram
    from indexium_platform import heap

    phases = {"Builder.add": 0.0, "Builder.finish": 0.0, "Words.update": 0.0, "prewarm": 0.0}

    def timed(owner, name, bucket):
        f = getattr(owner, name)

        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                phases[bucket] += time.perf_counter() - t0

        async def awrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return await f(*a, **k)
            finally:
                phases[bucket] += time.perf_counter() - t0

        setattr(owner, name, awrapper if asyncio.iscoroutinefunction(f) else wrapper)

    timed(searchindex.Builder, "add", "Builder.add")
    timed(searchindex.Builder, "finish", "Builder.finish")
    timed(trigram.Words, "update", "Words.update")
    timed(indexed, "prewarm", "prewarm")
    heap.enable(True)
    conn = await asyncpg.connect(dsn)
    lexicon = searchindex.Lexicon()
    before, started, cpu = status_kb(), time.perf_counter(), time.process_time()
    with heap.building():  # as search_index.LiveIndex._load
        index = await indexed.load(conn)
        index.recheck = api_recheck()
        await indexed.prewarm(conn, lexicon, index)
        settle = heap.settle()
    result = {"load": _measured(before, started, cpu), "phases": phases, "settle_s": settle, "mods": len(index)}
    result["load"]["lexicon_words"] = len(lexicon)
    if os.environ.get("SNAPSHOT_ONLY_LOAD"):  # (for a profiler: the load alone)
        return result
    result["digest"] = digest_index(index)
    result["answers"] = await _answers(conn, index, lexicon, names)
    # The snapshots, each written by this one process.
    gc.disable()
    t0 = time.perf_counter()
    with open(out / "index.pickle", "wb") as f:
        pickle.dump((index, lexicon), f, protocol=5)
    result["pickle_write_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_columnar(index, lexicon, out / "index.columnar")
    result["columnar_write_s"] = time.perf_counter() - t0
    gc.enable()
    for name in ("index.pickle", "index.columnar"):
        result[name] = (out / name).stat().st_size
    await conn.close()
    return result


async def child_pickle(dsn: str, out: Path, names: list[str], events: int) -> dict:
    from indexium_search import indexed
    from indexium_platform import heap

    heap.enable(True)
    before, started, cpu = status_kb(), time.perf_counter(), time.process_time()
    with heap.building():
        with open(out / "index.pickle", "rb") as f:
            index, lexicon = pickle.load(f)
        settle = heap.settle()
    result = {"load": _measured(before, started, cpu), "settle_s": settle}
    conn = await asyncpg.connect(dsn)
    result["answers"] = await _answers(conn, index, lexicon, names)
    # The events since the snapshot: each mod re-read (indexed.reread, as LiveIndex's re-read loop).
    slugs = random.Random(3).sample([e.slug for e in index.entries if e is not None], events)
    t0 = time.perf_counter()
    for i in range(0, len(slugs), 100):
        await indexed.reread(conn, index, slugs[i:i + 100])
    result["reread_s"] = time.perf_counter() - t0
    await conn.close()
    return result


async def child_columnar(path: Path, lazy: bool) -> dict:
    before, started, cpu = status_kb(), time.perf_counter(), time.process_time()
    c = Columnar(path, lazy=lazy)
    result = {"load": _measured(before, started, cpu)}
    t0 = time.perf_counter()
    page = [c.hit(o) for o in range(20)]
    result["page_us"] = (time.perf_counter() - t0) * 1e6
    assert page[0]["slug"] == c.string("slug", 0)
    if lazy:  # what a first search's lexemes cost to bring in: 3 common name words
        t0 = time.perf_counter()
        for word in ("magic", "storag", "better"):
            c.posting(word), c.posting(word, True)
        result["first_use_us"] = (time.perf_counter() - t0) * 1e6
    result["digest"] = digest_columnar(c)
    return result


async def child_nats(url: str, out: Path) -> dict:
    import nats

    before, started, cpu = status_kb(), time.perf_counter(), time.process_time()
    nc = await nats.connect(url)
    store = await nc.jetstream().object_store("search-snapshot")
    connected = time.perf_counter() - started
    local = out / "fetched.columnar"
    with open(local, "wb") as f:
        # Written chunk by chunk: without writeinto, nats-py appends each 128 KiB chunk to a
        # bytes object (result.data += chunk), quadratic: 46.9 s for 109 MiB (2026-12-04).
        await store.get("index.columnar", writeinto=f)
    await nc.close()
    fetched = _measured(before, started, cpu)
    c = Columnar(local)
    result = {"fetch": fetched, "load": _measured(before, started, cpu), "connect_s": connected}
    result["mods"] = c.n
    return result


async def put_nats(url: str, path: Path) -> float:
    import nats
    from nats.js.api import ObjectStoreConfig

    nc = await nats.connect(url)
    js = nc.jetstream()
    store = await js.create_object_store("search-snapshot", config=ObjectStoreConfig(bucket="search-snapshot"))
    t0 = time.perf_counter()
    await store.put("index.columnar", path.read_bytes())
    seconds = time.perf_counter() - t0
    await nc.close()
    return seconds


async def child(args) -> dict:
    out = Path(args.out)
    names = json.loads(Path(args.names).read_text()) if args.names else []
    if args.child == "postgresql":
        return await child_postgresql(args.dsn, out, names)
    if args.child == "pickle":
        return await child_pickle(args.dsn, out, names, args.events)
    if args.child in ("columnar", "lazy"):
        return await child_columnar(out / "index.columnar", lazy=args.child == "lazy")
    return await child_nats(args.dsn, out)


async def run_child(*argv: str) -> dict:
    proc = await asyncio.create_subprocess_exec(sys.executable, str(Path(__file__).resolve()), *argv,
                                                stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"child {argv[:2]} failed ({proc.returncode})")
    return json.loads(out.splitlines()[-1])


def _line(what: str, m: dict) -> str:
    return (f"  {what:34} {m['seconds']:7.2f} s ({m['cpu']:5.2f} s CPU)  RSS +{m['rss_mb']:5.0f} MB "
            f"(anonymous +{m['anon_mb']:4.0f}, file-backed +{m['file_mb']:4.0f}); process {m['process_rss_mb']:4.0f} MB")


async def rows(dsn: str, names_file: Path, mods: int, out: Path, events: int) -> list[str]:
    from indexium_devstack.embedded import EmbeddedNats

    out.mkdir(parents=True, exist_ok=True)
    lines = [f"replica start at {mods} mods, each way in a process of its own (load average "
             f"{os.getloadavg()[0]:.2f}):"]
    pg = await run_child("--child", "postgresql", "--dsn", dsn, "--out", str(out), "--names", str(names_file))
    lines.append(_line("from PostgreSQL (today)", pg["load"]))
    ph = pg["phases"]
    rest = pg["load"]["seconds"] - sum(ph.values()) - (pg["settle_s"] or 0)
    lines.append(f"    where: Builder.add {ph['Builder.add']:.2f} s, Builder.finish {ph['Builder.finish']:.2f} s, "
                 f"Words.update {ph['Words.update']:.2f} s, prewarm {ph['prewarm']:.2f} s "
                 f"({pg['load']['lexicon_words']} words learned), collector settle {pg['settle_s'] or 0:.2f} s, "
                 f"the rest (waiting on PostgreSQL's rows, decoding them) {rest:.2f} s")
    lines.append(f"    snapshots written: pickle {pg['index.pickle'] / 2**20:.0f} MiB in {pg['pickle_write_s']:.2f} s, "
                 f"columnar {pg['index.columnar'] / 2**20:.0f} MiB in {pg['columnar_write_s']:.2f} s")
    pk = await run_child("--child", "pickle", "--dsn", dsn, "--out", str(out), "--names", str(names_file),
                         "--events", str(events))
    lines.append(_line("pickle (unpickled, settled)", pk["load"]))
    lines.append(f"    the query mix's answers {'equal' if pk['answers'] == pg['answers'] else 'DIFFER from'} the "
                 f"PostgreSQL-loaded index's; {events} events applied (indexed.reread, 100 a batch) in "
                 f"{pk['reread_s']:.2f} s ({pk['reread_s'] / events * 1000:.2f} ms a mod)")
    co = await run_child("--child", "columnar", "--out", str(out))
    lines.append(_line("columnar (mmap)", co["load"]))
    lines.append(f"    content digest {'equals' if co['digest'] == pg['digest'] else 'DIFFERS from'} the "
                 f"PostgreSQL-loaded index's; a 20-hit page decoded from the file in {co['page_us']:.0f} µs")
    lz = await run_child("--child", "lazy", "--out", str(out))
    lines.append(_line("columnar (mmap), postings lazy", lz["load"]))
    lines.append(f"    content digest {'equals' if lz['digest'] == pg['digest'] else 'DIFFERS from'} the "
                 f"PostgreSQL-loaded index's; 3 words' postings brought in on first use in {lz['first_use_us']:.0f} µs")
    nats_server = EmbeddedNats(out / "nats").start()
    try:
        put_s = await put_nats(nats_server.url, out / "index.columnar")
        na = await run_child("--child", "nats", "--dsn", nats_server.url, "--out", str(out))
    finally:
        nats_server.stop()
    lines.append(_line("NATS object store, then columnar", na["load"]))
    lines.append(f"    put {put_s:.2f} s by the writer; connect {na['connect_s']:.2f} s, get + written to local disk "
                 f"{na['fetch']['seconds'] - na['connect_s']:.2f} s")
    best = min(("pickle", pk["load"]["seconds"]), ("columnar", co["load"]["seconds"]),
               ("columnar, postings lazy", lz["load"]["seconds"]), key=lambda x: x[1])
    lines.append(f"target: snapshot load at {mods} mods ({best[0]}) = {best[1]:.2f} s (goal <= "
                 f"{2 if mods <= 100_000 else 10} s)")
    return lines


async def main(args) -> None:
    from searchprofile import seeded

    pg, _names = await seeded(Path(args.data), args.mods)
    try:
        for line in await rows(pg.dsn("bench"), Path(args.data) / f"names-{args.mods}.json", args.mods,
                               Path(args.data) / f"snapshot-{args.mods}", args.events):
            print(line, flush=True)
    finally:
        pg.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--child", choices=("postgresql", "pickle", "columnar", "lazy", "nats"), help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--names", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args))))
    else:
        asyncio.run(main(args))
