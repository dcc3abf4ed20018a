"""Our search beside tantivy, the honest peer (issue 38): the same catalogue, the same query
mix, both in this process.

    python bench/api/peer.py [--mods 100000] [--data /tmp/searchprofile] [--index-dir DIR] [--repeat 3]

tantivy (PyPI ``tantivy``, the official bindings of a Lucene-class engine written in Rust)
indexes the listed mods of the seeded catalogue (searchprofile.py's, seeded once under
``--data`` and kept; 1,000,000 mods for the scale row with ``--mods 1000000``) in a directory
on disk, which it opens mmap'ed. Its build runs in a child process (its writer's heap and the
rows read do not count in this process's memory), then this process opens it and loads our own
index as a replica does (``indexed.load`` and ``prewarm``), and runs run.py's query mix through
both, query by query in turns: ours as run.py's in-process rows run it (``indexed.search`` on
one connection: its PostgreSQL statements included), tantivy's as a replica built on it would
answer (the page's 20 hits read from its document store, the total counted).

The peer's schema follows what our search reads: name, slug, summary and authors as text
(English stemming as PostgreSQL's ``english`` configuration does, Snowball's; Russian summaries
with Snowball's Russian stemmer; every word unstemmed too, as the ``simple`` configuration,
for as-you-type prefixes and typos), facets for the per-file ``loader|game_version`` pairs
(``mods.file_facets``, as our trigger keeps them), game versions, loaders, categories and
environment, downloads as a fast field (relevance weighted by it: tantivy's popularity term,
``score * log2(2 + downloads)``) and the browse orders' times as fast fields. A query is: every
word must match (in any field, the name boosted), or every word with the last as a prefix
(as-you-type); the filters as required clauses; when nothing matches and the query has 3
characters or more, the words again within one edit (tantivy's Levenshtein automaton: its
typo tolerance). Browse: the filters alone, ordered by a fast field.

Prints p50/p95 per kind of query for both, their ratio, each side's load (open) time and
memory, the peer's build time and size on disk, and how close its answers are to ours: the
overlap of each query's first 10 hits, and how often its total equals ours. Lines
``target: <measure> = <value> <unit> (goal <op> <limit> <unit>)`` are the issue's targets.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import msgspec

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import data  # noqa: E402
from run import _search_query, api_recheck, pct, queries  # noqa: E402

PAGE = 20  # sqlpath.SearchQuery's default limit, the bench's pages
TOP = 10  # how many first hits are compared
# The fields a query's words are looked for in, and how much a match counts (the name most:
# our rank gives an exact or prefix name 1.0 / 0.5 on top of ts_rank).
TEXT_FIELDS = ("name", "summary", "summary_ru", "words")
BOOSTS = {"name": 3.0}
SORT_FIELDS = {"updated": "updated", "downloads": "downloads", "newest": "created"}
_WORDS = re.compile(r"[^\W_]+")


def status_kb() -> dict[str, int]:
    """VmRSS, RssAnon, RssFile of this process (kB): an mmap'ed index's pages are RssFile,
    shared with every process mapping the same file and dropped by the kernel under pressure."""
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])
    return out


def mb(kb: int) -> float:
    return kb / 1024


def schema():
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_text_field("slug", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("name", tokenizer_name="en")
    sb.add_text_field("summary", tokenizer_name="en")
    sb.add_text_field("summary_ru", tokenizer_name="ru")
    sb.add_text_field("words", tokenizer_name="default")  # name, slug, summary, authors unstemmed
    # Each of those words' prefixes from 3 letters (an edge n-gram, Elasticsearch's as-you-type
    # field): a prefix is one term. (A regex over the term dictionary took ~190 us to compile per
    # query; a single-word phrase prefix stops at 50 terms, and a slug's compounds pass that.)
    sb.add_text_field("prefixes", tokenizer_name="edge", index_option="freq")
    for facet in ("ff", "gv", "lo", "cat", "env"):
        sb.add_facet_field(facet)
    sb.add_unsigned_field("downloads", fast=True)
    sb.add_integer_field("updated", fast=True)
    sb.add_integer_field("created", fast=True)
    sb.add_bytes_field("hit", stored=True, indexed=False)  # the hit a page shows (JSON)
    return sb.build()


def analyzer(language: str | None):
    """tantivy's default analyzer (words of letters and digits, at most 40 bytes, lower-cased),
    then Snowball's stemmer for ``language`` (PostgreSQL's english and russian configurations
    stem with Snowball too)."""
    import tantivy

    b = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    b = b.filter(tantivy.Filter.lowercase())
    return (b.filter(tantivy.Filter.stemmer(language)) if language else b).build()


def register(index) -> None:
    import tantivy

    index.register_tokenizer("en", analyzer("english"))
    index.register_tokenizer("ru", analyzer("russian"))
    index.register_tokenizer("edge", tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.ngram(3, 40, True)).build())


def _micros(t) -> int:
    return 0 if t is None else int(t.timestamp() * 1_000_000)


_hit_encoder = msgspec.json.Encoder()


def document(row):
    import tantivy
    from indexium_search.searchindex import _hit

    doc = tantivy.Document()
    doc.add_text("slug", row["slug"])
    doc.add_text("name", row["name"])
    doc.add_text("summary", row["summary"] or "")
    doc.add_text("summary_ru", row["summary"] or "")
    words = " ".join([row["name"], row["slug"].replace("-", " "), row["summary"] or "", *(row["authors"] or [])])
    doc.add_text("words", words)
    for word in dict.fromkeys(_WORDS.findall(words.lower())):
        if len(word) >= 3:
            doc.add_text("prefixes", word)
    for pair in row["file_facets"] or ():
        loader, _, gv = pair.partition("|")
        doc.add_facet("ff", tantivy.Facet.from_string(f"/{loader}/{gv}"))
    for gv in row["game_versions"] or ():
        doc.add_facet("gv", tantivy.Facet.from_string(f"/{gv}"))
    for loader in row["loaders"] or ():
        doc.add_facet("lo", tantivy.Facet.from_string(f"/{loader}"))
    for category in row["categories"] or ():
        doc.add_facet("cat", tantivy.Facet.from_string(f"/{category}"))
    doc.add_facet("env", tantivy.Facet.from_string(f"/{row['environment']}"))
    doc.add_unsigned("downloads", int(row["downloads"] or 0))
    doc.add_integer("updated", _micros(row["last_published_at"]))
    doc.add_integer("created", _micros(row["created_at"]))
    doc.add_bytes("hit", _hit_encoder.encode(_hit(row)))
    return doc


async def build(dsn: str, path: Path, threads: int) -> dict:
    """The peer's index of every listed mod, as our index reads them (indexed._INDEX_COLUMNS)."""
    import tantivy
    from indexium_search import indexed

    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    index = tantivy.Index(schema(), path=str(path))
    register(index)
    writer = index.writer(256_000_000, threads)
    conn = await asyncpg.connect(dsn)
    read_s = add_s = 0.0
    n = 0
    try:
        async with conn.transaction():
            started = time.perf_counter()
            cursor = await conn.cursor(f"SELECT {indexed._INDEX_COLUMNS} FROM mods m WHERE m.listed"
                                       " ORDER BY m.downloads DESC, m.slug")
            while True:
                t0 = time.perf_counter()
                rows = await cursor.fetch(5000)
                read_s += time.perf_counter() - t0
                if not rows:
                    break
                t0 = time.perf_counter()
                for row in rows:
                    writer.add_document(document(row))
                add_s += time.perf_counter() - t0
                n += len(rows)
    finally:
        await conn.close()
    t0 = time.perf_counter()
    writer.commit()
    writer.wait_merging_threads()
    commit_s = time.perf_counter() - t0
    total_s = time.perf_counter() - started
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return {"mods": n, "read_s": read_s, "add_s": add_s, "commit_s": commit_s, "total_s": total_s,
            "bytes": size, "peak_rss_kb": _peak_kb()}


def _peak_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


class Peer:
    """tantivy opened from its directory (mmap'ed), answering the bench's searches."""

    def __init__(self, path: Path) -> None:
        import tantivy

        self.t = tantivy
        self.index = tantivy.Index.open(str(path))
        register(self.index)
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        self._decode = msgspec.json.Decoder().decode
        # Queries are built here rather than by tantivy's query parser (0.22-0.26 ms a query
        # through the bindings, against ~0.03 ms for its search): each word through each text
        # field's own analyzer, as the index analyzed it.
        self.analyzers = {"name": analyzer("english"), "summary": analyzer("english"),
                          "summary_ru": analyzer("russian"), "words": analyzer(None)}

    def _facet(self, field: str, value: str):
        t = self.t
        return t.Query.term_query(self.schema, field, t.Facet.from_string(value))

    def _filters(self, params: dict) -> list:
        """The facet filters as catalog applies them: a file with both the loader and the game version."""
        gv, lo = params.get("game_version"), params.get("loader")
        if gv and lo:
            return [self._facet("ff", f"/{lo}/{gv}")]
        if gv:
            return [self._facet("gv", f"/{gv}")]
        if lo:
            return [self._facet("lo", f"/{lo}")]
        return []

    def _token(self, token: str):
        """One query token in any text field (a phrase where a field's analyzer makes several
        terms of it: "olga's"), None where no field makes a term of it."""
        t = self.t
        clauses = []
        for field, analyzer in self.analyzers.items():
            terms = analyzer.analyze(token)
            if not terms:
                continue
            q = (t.Query.term_query(self.schema, field, terms[0]) if len(terms) == 1
                 else t.Query.phrase_query(self.schema, field, terms))
            if field in BOOSTS:
                q = t.Query.boost_query(q, BOOSTS[field])
            clauses.append((t.Occur.Should, q))
        return t.Query.boolean_query(clauses) if clauses else None

    def _text(self, tokens: list[str]):
        """Every token must match (websearch's AND), each in any field."""
        t = self.t
        clauses = [(t.Occur.Must, q) for q in map(self._token, tokens) if q is not None]
        return t.Query.boolean_query(clauses) if clauses else t.Query.empty_query()

    def _fuzzy(self, q: str):
        """Every word within one edit (a transposition one edit) of a word of the catalogue."""
        t = self.t
        return t.Query.boolean_query([(t.Occur.Must, t.Query.fuzzy_term_query(self.schema, "words", w, 1, True, False))
                                      for w in _WORDS.findall(q.lower())])

    def _as_typed(self, q: str):
        """Every word, or every word with the last as a prefix (from 3 letters, as ours)."""
        t = self.t
        full = self._text(q.split())
        words = _WORDS.findall(q.lower())
        if not words:
            return full
        if len(words[-1]) < 3:  # still being typed: the words before it (ours: sqlpath.prefix_tsquery)
            if len(words) == 1:
                return full
            before = [(t.Occur.Must, t.Query.term_query(self.schema, "words", w)) for w in words[:-1]]
            return t.Query.boolean_query([(t.Occur.Should, full), (t.Occur.Should, t.Query.boolean_query(before))])
        prefix = [(t.Occur.Must, t.Query.term_query(self.schema, "prefixes", words[-1][:40]))]
        prefix += [(t.Occur.Must, t.Query.term_query(self.schema, "words", w)) for w in words[:-1]]
        return t.Query.boolean_query([(t.Occur.Should, full), (t.Occur.Should, t.Query.boolean_query(prefix))])

    def _with(self, query, filters: list):
        t = self.t
        if not filters:
            return query
        return t.Query.boolean_query([(t.Occur.Must, query),
                                      *[(t.Occur.Must, t.Query.const_score_query(f, 0.0)) for f in filters]])

    def search(self, params: dict) -> tuple[list[dict], int]:
        """(the page's hits, the total), as our search answers."""
        t = self.t
        filters = self._filters(params)
        offset = int(params.get("offset", 0))
        q = params.get("q")
        if not q:
            query = (t.Query.boolean_query([(t.Occur.Must, t.Query.const_score_query(f, 0.0)) for f in filters])
                     if filters else t.Query.all_query())
            result = self.searcher.search(query, PAGE, count=True, order_by_field=SORT_FIELDS[params["sort"]],
                                          offset=offset, order=t.Order.Desc)
        else:
            result = self.searcher.search(self._with(self._as_typed(q), filters), PAGE, count=True,
                                          weight_by_field="downloads", offset=offset)
            if result.count == 0 and len(q.strip()) >= 3:  # a typo: the words within one edit
                result = self.searcher.search(self._with(self._fuzzy(q), filters), PAGE, count=True,
                                              weight_by_field="downloads", offset=offset)
        doc, decode = self.searcher.doc, self._decode
        hits = []
        for _, address in result.hits:
            stored = doc(address)
            hits.append(decode(stored.get_first("hit")))
        return hits, result.count


def overlap(ours: list[str], theirs: list[str]) -> float | None:
    """Share of our first TOP hits among the peer's first TOP (None: ours found nothing)."""
    a = ours[:TOP]
    if not a:
        return None if theirs else 1.0
    return len(set(a) & set(theirs[:TOP])) / len(a)


def target(measure: str, value: float, unit: str, op: str, limit: float) -> str:
    unit_sp = f" {unit}" if unit else ""
    return f"target: {measure} = {value:.2f}{unit_sp} (goal {op} {limit:g}{unit_sp})"


async def rows(dsn: str, catalogue: data.Catalogue, index_dir: Path, *, repeat: int = 3,
               threads: int = 1) -> list[str]:
    """The peer's rows, for run.py and for main() below."""
    from indexium_search import sqlpath
    from indexium_search import indexed
    from indexium_search.searchindex import Lexicon

    lines = []
    # 1. The peer's build, in a child process (its memory is not this one's).
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).resolve()), "--build-only", dsn, str(index_dir), str(threads),
        stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"tantivy build failed ({proc.returncode})")
    built = json.loads(out.splitlines()[-1])
    lines.append(f"  tantivy build ({threads} writer thread{'s' if threads > 1 else ''}): {built['mods']} mods in "
                 f"{built['total_s']:.1f} s (rows read {built['read_s']:.1f} s, documents added "
                 f"{built['add_s']:.1f} s, commit + merge {built['commit_s']:.1f} s); {built['bytes'] / 2**20:.1f} MiB "
                 f"on disk; the builder's peak RSS {mb(built['peak_rss_kb']):.0f} MB")
    # 2. Open the peer, then load ours, each with the memory it adds.
    before = status_kb()
    started = time.perf_counter()
    peer = Peer(index_dir)
    open_s = time.perf_counter() - started
    opened = status_kb()
    conn = await asyncpg.connect(dsn)
    try:
        lexicon, corrections = Lexicon(), sqlpath.Corrections()
        started, cpu = time.perf_counter(), time.process_time()
        index = await indexed.load(conn)
        index.recheck = api_recheck()
        await indexed.prewarm(conn, lexicon, index)
        load_s, load_cpu = time.perf_counter() - started, time.process_time() - cpu
        loaded = status_kb()
        lines.append(f"  tantivy open (mmap): {open_s * 1000:.1f} ms, RSS +{mb(opened['VmRSS'] - before['VmRSS']):.1f} MB "
                     f"(anonymous +{mb(opened['RssAnon'] - before['RssAnon']):.1f}, file-backed "
                     f"+{mb(opened['RssFile'] - before['RssFile']):.1f})")
        lines.append(f"  ours: {len(index)} mods loaded from PostgreSQL in {load_s:.1f} s ({load_cpu:.1f} s CPU), "
                     f"RSS +{mb(loaded['VmRSS'] - opened['VmRSS']):.0f} MB (anonymous "
                     f"+{mb(loaded['RssAnon'] - opened['RssAnon']):.0f})")
        # 3. The mix, query by query, the sides in turns (which goes first alternates): a first
        # pass, each query once per side (a first search, as run.py's rows time it: ours' learned
        # words and corrections, tantivy's pages not yet in), then a warm pass, each query best of
        # ``repeat`` per side (what is left when a slow spell of this shared machine is not).
        mix = queries(catalogue, random.Random(11))
        timed = {name: ({k: [] for k in mix}, {k: [] for k in mix}) for name in ("first", "warm")}
        overlaps: dict[str, list[float]] = {k: [] for k in mix}
        totals: dict[str, list[bool]] = {k: [] for k in mix}
        first: dict[str, list[bool]] = {k: [] for k in mix}  # the same first hit (ours found any)
        only_ours: dict[str, int] = {k: 0 for k in mix}  # ours found some, tantivy none
        for name, tries in (("first", 1), ("warm", repeat)):
            for kind, items in mix.items():
                for i, params in enumerate(items):
                    best = [float("inf"), float("inf")]
                    for r in range(tries):
                        for side in ([0, 1] if (i + r) % 2 == 0 else [1, 0]):
                            started = time.perf_counter()
                            if side == 0:
                                our_rows, our_total = await indexed.search(
                                    conn, _search_query(params), index=index, lexicon=lexicon, corrections=corrections)
                            else:
                                their_rows, their_total = peer.search(params)
                            best[side] = min(best[side], time.perf_counter() - started)
                    timed[name][0][kind].append(best[0] * 1000)
                    timed[name][1][kind].append(best[1] * 1000)
                    if name == "first":
                        o = overlap([r["slug"] for r in our_rows], [h["slug"] for h in their_rows])
                        if o is not None:
                            overlaps[kind].append(o)
                        if our_rows:
                            first[kind].append(bool(their_rows) and their_rows[0]["slug"] == our_rows[0]["slug"])
                            only_ours[kind] += not their_rows
                        totals[kind].append(our_total == their_total)
        after = status_kb()
    finally:
        await conn.close()
    lines.append(f"  tantivy after the mix: RSS +{mb(after['RssFile'] - loaded['RssFile']):.1f} MB file-backed "
                 f"(its pages touched), anonymous +{mb(after['RssAnon'] - loaded['RssAnon']):.1f} MB (both sides' "
                 f"caches); the whole process {mb(after['VmRSS']):.0f} MB")
    lines.append(f"  {'':24} {'first time, p95 ms':>27} {f'warm (best of {repeat}), p95 ms':>27}")
    lines.append(f"  {'kind':24} {'ours':>7} {'tantivy':>8} {'ratio':>9} {'ours':>7} {'tantivy':>8} {'ratio':>9} "
                 f"{'top-10 overlap':>14} {'same 1st':>8} {'same total':>10} {'only ours':>9}")
    every = lambda d: [x for v in d.values() for x in v]  # noqa: E731
    p95 = {}
    for kind in ["all searches", *mix]:
        cells = []
        for name in ("first", "warm"):
            o = every(timed[name][0]) if kind == "all searches" else timed[name][0][kind]
            p = every(timed[name][1]) if kind == "all searches" else timed[name][1][kind]
            p95[name, kind] = (pct(o, 95), pct(p, 95))
            cells.append(f"{pct(o, 95):7.2f} {pct(p, 95):8.2f} {pct(o, 95) / pct(p, 95):8.2f}x")
        ov = every(overlaps) if kind == "all searches" else overlaps[kind]
        tt = every(totals) if kind == "all searches" else totals[kind]
        ff = every(first) if kind == "all searches" else first[kind]
        oo = sum(only_ours.values()) if kind == "all searches" else only_ours[kind]
        lines.append(f"  {kind:24} {cells[0]} {cells[1]} {sum(ov) / max(1, len(ov)):13.0%} "
                     f"{sum(ff) / max(1, len(ff)):8.0%} {sum(tt) / max(1, len(tt)):9.0%} {oo:9}")
    lines.append(f"  (overlap: the share of our first {TOP} hits among tantivy's first {TOP}, over queries where "
                 f"ours found any; same 1st: the same first hit; only ours: queries where ours found hits and "
                 f"tantivy none)")
    share = lambda d, k: sum(d[k]) / max(1, len(d[k]))  # noqa: E731
    browse, name_facets = "browse (facets, sorts)", "name + facets"
    lines.append("  the behaviours our tests pin, against tantivy without our code on top:")
    lines.append(f"    per-file facets: given once our loader|game_version pairs (mods.file_facets) are indexed as "
                 f"facets: browse totals equal ours in {share(totals, browse):.0%}, pages in {share(overlaps, browse):.0%}")
    lines.append(f"    exact totals: tantivy counts every match too; equal to ours in {share(totals, 'full name'):.0%} of "
                 f"full names, {share(totals, 'as-you-type prefix'):.0%} of prefixes: what matches differs (PostgreSQL's "
                 f"three configurations ORed, its stopwords and parser, the prefix rule), not the counting")
    lines.append(f"    typo correction: tantivy's one-edit fuzzy terms are not pg_trgm's nearest catalogue word: top-10 "
                 f"overlap {share(overlaps, 'typo'):.0%} on typos; the fuzzy name pass (word similarity >= 0.5) has no "
                 f"counterpart: {only_ours[name_facets]} of {len(mix[name_facets])} name + facets queries found hits "
                 f"only with ours")
    lines.append(f"    ts_rank order: tantivy ranks by BM25 x log2(2 + downloads): the same first hit in "
                 f"{share(first, 'full name'):.0%} of full names ({share(first, 'as-you-type prefix'):.0%} of prefixes), "
                 f"top-10 overlap {share(overlaps, 'full name'):.0%}")
    o95, p95_ = p95["first", "all searches"]
    w95 = p95["warm", "all searches"]
    lines.append(target(f"search vs tantivy p95 ratio at {len(index)} mods", o95 / p95_, "", "<=", 1))
    lines.append(f"  first time: ours p95 {o95:.2f} ms, tantivy p95 {p95_:.2f} ms; warm: {w95[0]:.2f} / {w95[1]:.2f} ms "
                 f"({w95[0] / w95[1]:.2f}x); load: ours {load_s:.1f} s from PostgreSQL, "
                 f"tantivy {open_s * 1000:.0f} ms to open its {built['bytes'] / 2**20:.0f} MiB (built in "
                 f"{built['total_s']:.0f} s); memory: ours +{mb(loaded['RssAnon'] - opened['RssAnon']):.0f} MB "
                 f"anonymous, tantivy +{mb(opened['RssAnon'] - before['RssAnon'] + after['RssFile'] - loaded['RssFile']):.0f} MB "
                 f"(mostly file-backed, shared by replicas on one node)")
    return lines


async def main(args) -> None:
    from searchprofile import seeded

    pg, names = await seeded(Path(args.data), args.mods)
    try:
        index_dir = Path(args.index_dir or f"{args.data}/tantivy-{args.mods}")
        say = lambda s: print(s, flush=True)  # noqa: E731
        say(f"search vs tantivy, {args.mods} mods, run.py's query mix, in process "
            f"(load average {os.getloadavg()[0]:.2f})")
        for line in await rows(pg.dsn("bench"), data.Catalogue(names=names), index_dir,
                               repeat=args.repeat, threads=args.threads):
            say(line)
    finally:
        pg.stop()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--build-only":  # the child process of rows()
        print(json.dumps(asyncio.run(build(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4])))))
        sys.exit(0)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--index-dir", help="where the peer's index is built (default: under --data)")
    parser.add_argument("--repeat", type=int, default=3, help="each query of the timed pass, best of this many")
    parser.add_argument("--threads", type=int, default=1, help="tantivy writer threads for the build")
    asyncio.run(main(parser.parse_args()))
