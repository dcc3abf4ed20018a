"""Per-query search profile: our search (``indexed.search``, as run.py's search_baseline runs
it) against the plain FTS baseline, query by query, with the PostgreSQL round trips ours made
and the path it took.

    python bench/api/searchprofile.py [--mods 20000] [--data /tmp/searchprofile] [--repeat 3] [--slowest 40]
                                      [--snapshot] [--changed N]

``--snapshot``: the index searched is the one a replica maps (written as a snapshot under
``--data``, then ``snapshot.load``ed; its lexicon prewarmed once more), not the one loaded from
PostgreSQL. ``--changed N``: N mods (the same N every run) re-read into it first, 20 a
statement, as a serving replica re-reads the mods its events name until its next snapshot.

The catalogue is seeded once into an embedded PostgreSQL under ``--data`` (kept: a second
run with the same --mods reuses it). Each query is timed best of ``--repeat``; before each
repetition the lexicon is put back as prewarm left it and the corrections memory is fresh,
so every repetition does what run.py's single pass does. Round trips are counted by
wrapping the connection (each fetch/execute, and BEGIN/COMMIT of a transaction).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import json
import pstats
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import asyncpg
import nats

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import data
from indexium_db import migrate
from indexium_search import sqlpath
from indexium_search import indexed, snapshot
from indexium_search.searchindex import Lexicon
from indexium_devstack.embedded import EmbeddedNats, EmbeddedPostgres
from indexium_platform import natsutil
from run import PgClock, _baseline_sql, _search_query, api_recheck, load_catalogue, pct, queries


class Counted(PgClock):
    """A connection that counts its round trips (and names each by its statement)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        super().__init__(conn)
        self.trips: list[str] = []

    def _note(self, trip: str, sql: str | None) -> None:
        self.trips.append(_kind_of(sql) if sql is not None else trip)


def _kind_of(sql: str) -> str:
    s = " ".join(sql.split())
    if "AS token" in s:
        return "learn"
    if "search_words" in s:
        return "correct"
    if s.startswith("SET LOCAL"):
        return "thresholds"
    if "c.o, word_similarity" in s:
        return "word_similar"
    if "word_similarity" in s or "<%" in s:
        return "fuzzy_page"
    if "EXPLAIN" in s:
        return "estimate"
    if "WITH parts AS" in s:
        return "catalog_page"
    if "OFFSET 0) m" in s:
        return "page"
    return "other"


def _path(trips: list[str]) -> str:
    kinds = set(trips)
    if "catalog_page" in kinds and "correct" in kinds:
        return "catalog (typo)"
    if "catalog_page" in kinds:
        return "catalog"
    if "fuzzy_page" in kinds or "word_similar" in kinds:
        return "fuzzy"
    tags = []
    if "correct" in kinds:
        tags.append("corrected (pg)")
    if "learn" in kinds:
        tags.append("learn")
    return "+".join(tags) or "index"


async def seeded(root: Path, mods: int) -> tuple[EmbeddedPostgres, list[str]]:
    root.mkdir(parents=True, exist_ok=True)
    names_file = root / f"names-{mods}.json"
    pg = EmbeddedPostgres(root / f"pg-{mods}", durable=False).start()
    if names_file.exists():
        # Kept from an earlier run, perhaps of older code: brought to this code's schema.
        conn = await asyncpg.connect(pg.dsn("bench"))
        try:
            await migrate.migrate(conn)
        finally:
            await conn.close()
        return pg, json.loads(names_file.read_text())
    admin = await asyncpg.connect(pg.dsn("postgres"))
    await admin.execute("DROP DATABASE IF EXISTS bench")
    await admin.execute("CREATE DATABASE bench")
    await admin.close()
    catalogue = await load_catalogue(pg.dsn("bench"), mods)
    names_file.write_text(json.dumps(catalogue.names))
    return pg, catalogue.names


@contextlib.asynccontextmanager
async def seeded_with_nats(root: Path, mods: int, prefix: str):
    """``seeded``'s catalogue and an embedded NATS in a new temporary folder (``prefix``), its
    streams and buckets set up as the setup step does: (pg, names, the folder, NATS's URL). After:
    NATS and PostgreSQL stopped, the folder removed (the catalogue under ``root`` kept)."""
    pg, names = await seeded(root, mods)
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    nats_server = EmbeddedNats(tmp / "nats").start()
    try:
        nc = await nats.connect(nats_server.url)
        await natsutil.ensure_all(nc.jetstream())
        await nc.drain()
        yield pg, names, tmp, nats_server.url
    finally:
        nats_server.stop()
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


async def main(args) -> None:
    pg, names = await seeded(Path(args.data), args.mods)
    try:
        conn = await asyncpg.connect(pg.dsn("bench"))
        index = await indexed.load(conn)
        lexicon = Lexicon()
        await indexed.prewarm(conn, lexicon, index)
        if args.snapshot:  # (the file mapped as a replica maps it; its lexicon, the writer's, prewarmed once more here,
            # which a replica does not do: the lexicon each repetition starts from is the prewarmed one either way)
            path = Path(args.data) / f"searchprofile-{args.mods}.snap"
            snapshot.write(index, lexicon, path, updated_at=index.position)
            del index
            index, lexicon, _ = snapshot.load(path)
            await indexed.prewarm(conn, lexicon, index)
        if args.changed:  # (as a serving replica between two snapshots: this many mods re-read after events)
            slugs = [r[0] for r in await conn.fetch(
                "SELECT slug FROM mods WHERE listed ORDER BY md5(slug) LIMIT $1", args.changed)]
            for batch in indexed.batches(slugs, 20):
                await indexed.reread(conn, index, batch)
        index.recheck = args.recheck
        tokens, prefix = dict(lexicon._tokens), dict(lexicon._prefix)
        catalogue = data.Catalogue(names=names)
        counted = Counted(conn)
        profile = cProfile.Profile() if args.profile else None
        ab = []
        rows = []
        for kind, items in queries(catalogue, random.Random(11)).items():
            if args.kind and kind not in args.kind:
                continue
            for params in items:
                sql, qargs = _baseline_sql(params)
                base = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    await conn.fetch(sql, *qargs)
                    base.append((time.perf_counter() - started) * 1000)
                ours, cpu = [], []
                for _ in range(args.repeat):
                    lexicon._tokens, lexicon._prefix = dict(tokens), dict(prefix)
                    counted.trips = []
                    started, c0 = time.perf_counter(), time.process_time()
                    if profile is not None:
                        profile.enable()
                    await indexed.search(counted, _search_query(params), index=index, lexicon=lexicon,
                                         corrections=sqlpath.Corrections())
                    if profile is not None:
                        profile.disable()
                    ours.append((time.perf_counter() - started) * 1000)
                    cpu.append((time.process_time() - c0) * 1000)
                row = (kind, params, min(base), min(ours), min(cpu), list(counted.trips))
                if args.ab:
                    # The same query with one module constant changed, timed at the same moment.
                    name, value = args.ab.split("=")
                    old = getattr(indexed, name)
                    setattr(indexed, name, type(old)(value))
                    try:
                        other, other_cpu = [], []
                        for _ in range(args.repeat):
                            lexicon._tokens, lexicon._prefix = dict(tokens), dict(prefix)
                            started, c0 = time.perf_counter(), time.process_time()
                            await indexed.search(conn, _search_query(params), index=index, lexicon=lexicon,
                                                 corrections=sqlpath.Corrections())
                            other.append((time.perf_counter() - started) * 1000)
                            other_cpu.append((time.process_time() - c0) * 1000)
                    finally:
                        setattr(indexed, name, old)
                    ab.append((kind, params, min(ours), min(other), min(cpu), min(other_cpu)))
                rows.append(row)
        await conn.close()
    finally:
        pg.stop()
    if profile is not None:
        stats = pstats.Stats(profile).strip_dirs()
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
    if ab:
        print(f"A/B: indexed.{args.ab} (B) against as is (A), same moment, best of {args.repeat} each")
        for kind in dict.fromkeys(r[0] for r in ab):
            rs = [r for r in ab if r[0] == kind]
            print(f"  {kind:24} p95 A {pct([r[2] for r in rs], 95):6.2f} B {pct([r[3] for r in rs], 95):6.2f} ms"
                  f"  CPU p95 A {pct([r[4] for r in rs], 95):6.2f} B {pct([r[5] for r in rs], 95):6.2f} ms"
                  f"  sum A {sum(r[2] for r in rs):7.1f} B {sum(r[3] for r in rs):7.1f} ms")
    b95 = pct([r[2] for r in rows], 95)
    o95 = pct([r[3] for r in rows], 95)
    print(f"{len(rows)} queries, {args.mods} mods, best of {args.repeat}")
    print(f"{'kind':24} {'n':>4} {'base p95':>9} {'ours p95':>9} {'ratio':>6} {'> 0.5x base p95':>16}  trips")
    for kind in dict.fromkeys(r[0] for r in rows):
        rs = [r for r in rows if r[0] == kind]
        b, o = pct([r[2] for r in rs], 95), pct([r[3] for r in rs], 95)
        slow = sum(r[3] > 0.5 * b95 for r in rs)
        trips = Counter(len(r[5]) for r in rs)
        print(f"{kind:24} {len(rs):4} {b:8.2f}  {o:8.2f}  {o / b:5.2f}x {slow:16}  "
              + " ".join(f"{k}:{v}" for k, v in sorted(trips.items())))
    slow = sum(r[3] > 0.5 * b95 for r in rows)
    print(f"{'all':24} {len(rows):4} {b95:8.2f}  {o95:8.2f}  {o95 / b95:5.2f}x {slow:16}  "
          f"(at most {int(len(rows) * 0.05)} may exceed 0.5x the baseline p95 = {0.5 * b95:.2f} ms)")
    print(f"\npaths: {dict(Counter(_path(r[5]) for r in rows))}")
    print(f"\nslowest {args.slowest} (ours ms, CPU ms, baseline ms, round trips, path, query):")
    for kind, params, b, o, c, trips in sorted(rows, key=lambda r: -r[3])[:args.slowest]:
        q = {k: v for k, v in params.items()}
        print(f"  {o:6.2f} {c:6.2f} {b:6.2f}  {len(trips)} {_path(trips):16} {','.join(trips):40} {kind[:10]:10} {q}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=20_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slowest", type=int, default=40)
    parser.add_argument("--profile", action="store_true", help="cProfile our searches (printed first)")
    parser.add_argument("--ab", help="also time each query with indexed.NAME=VALUE (an int constant)")
    parser.add_argument("--snapshot", action="store_true", help="search the index mapped from a snapshot, as a replica does")
    parser.add_argument("--changed", type=int, default=0,
                        help="mods re-read into the index before searching (a replica's events since its snapshot)")
    parser.add_argument("--kind", action="append", help="only this kind of query (repeatable)")
    parser.add_argument("--recheck", action=argparse.BooleanOptionalAction, default=api_recheck(),
                        help="pages re-read from PostgreSQL (default: the API's own default)")
    asyncio.run(main(parser.parse_args()))
