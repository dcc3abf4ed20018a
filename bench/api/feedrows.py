"""What an Atom feed costs PostgreSQL when it is not cached (issue 36): each kind of feed's read
(``indexium_db.queries.feeds``: the entries and the change stamp), best of ``--repeat``, on the
bench's synthetic catalogue.

    python bench/api/feedrows.py [--mods 20000] [--data /tmp/feedrows] [--repeat 3] [--index]

A feed is a cache entry invalidated by every version event of its tag (the global one for the
search and author feeds), so under a steady stream of releases a polled search feed is read
again about once per event. ``--index`` also times each read with a candidate index, the
public versions in publish order (``mod_versions (published_at DESC NULLS LAST) WHERE
status = 'public' AND NOT hidden``), created in the bench's database only: it did not help the
search walk, and a plan walking it for a one-word search took 2.9 s (docs/notifications.md).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from indexium_db import migrate  # noqa: E402
from indexium_db.queries import feeds as feeds_q  # noqa: E402
from indexium_search import sqlpath
from indexium_devstack.embedded import EmbeddedPostgres  # noqa: E402
from run import load_catalogue  # noqa: E402

LIMIT = 50
INDEX = ("CREATE INDEX IF NOT EXISTS bench_versions_public_published_idx ON mod_versions "
         "(published_at DESC NULLS LAST) WHERE status = 'public' AND NOT hidden")


async def seeded(root: Path, mods: int) -> EmbeddedPostgres:
    root.mkdir(parents=True, exist_ok=True)
    marker = root / f"seeded-{mods}"
    pg = EmbeddedPostgres(root / f"pg-{mods}", durable=False).start()
    if marker.exists():  # kept from an earlier run, perhaps of older code: this code's schema
        conn = await asyncpg.connect(pg.dsn("bench"))
        try:
            await migrate.migrate(conn)
        finally:
            await conn.close()
    else:
        admin = await asyncpg.connect(pg.dsn("postgres"))
        await admin.execute("DROP DATABASE IF EXISTS bench")
        await admin.execute("CREATE DATABASE bench")
        await admin.close()
        await load_catalogue(pg.dsn("bench"), mods)
        marker.write_text("")
    return pg


def feeds(conn_rows: list) -> dict[str, list]:
    """(kind -> calls), each call a coroutine factory over a connection."""
    slugs = [r["slug"] for r in conn_rows["mods"]]
    logins = [r["login"] for r in conn_rows["authors"]]
    words = [r["word"] for r in conn_rows["words"]]

    def search(**kw):
        return lambda conn: feeds_q.search_feed(conn, sqlpath.SearchQuery(q=None, **kw) if "q" not in kw
                                                else sqlpath.SearchQuery(**kw), limit=LIMIT)

    return {
        "mod": [lambda conn, s=s: feeds_q.mod_feed(conn, s, limit=LIMIT) for s in slugs[:5]],
        "author": [lambda conn, a=a: feeds_q.author_feed(conn, a, limit=LIMIT) for a in logins[:5]],
        "search, no filter": [search()],
        "search, loader": [search(loaders=("fabric",))],
        "search, loader + game version": [search(loaders=("fabric",), game_versions=("1.20.1",)),
                                          search(loaders=("forge",), game_versions=("1.19.2",))],
        "search, category": [search(categories=("magic",)), search(categories=("technology",))],
        "search, a word": [search(q=w) for w in words[:5]],
        "search, a word + loader": [search(q=w, loaders=("fabric",)) for w in words[:5]],
    }


async def timed(conn, calls, repeat: int) -> tuple[float, int]:
    """(median over the calls of each call's best time in ms, entries of the last call)."""
    bests, n = [], 0
    for call in calls:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            result = await call(conn)
            best = min(best, time.perf_counter() - started)
        rows = result[1] if len(result) == 3 else result[0]
        n = len(rows)
        bests.append(best * 1000)
    return statistics.median(bests), n


async def main(args) -> None:
    pg = await seeded(Path(args.data), args.mods)
    try:
        conn = await asyncpg.connect(pg.dsn("bench"))
        await conn.execute("DROP INDEX IF EXISTS bench_versions_public_published_idx")
        await conn.execute("ANALYZE")
        rng = random.Random(5)
        sample = {
            "mods": rng.sample(await conn.fetch("SELECT slug FROM mods WHERE listed"), 5),
            "authors": rng.sample(await conn.fetch(
                "SELECT a.login FROM authors a WHERE EXISTS (SELECT 1 FROM mods m WHERE m.author_github_id = a.github_id)"), 5),
            "words": rng.sample(await conn.fetch(
                "SELECT w AS word FROM (SELECT DISTINCT lower(split_part(name, ' ', 1)) AS w FROM mods) x "
                "WHERE length(w) > 3"), 5),
        }
        counts = await conn.fetchrow("SELECT (SELECT count(*) FROM mods) AS mods, "
                                     "(SELECT count(*) FROM mod_versions) AS versions")
        print(f"catalogue: {counts['mods']} mods, {counts['versions']} versions; best of {args.repeat}, "
              f"median over the queries of a kind")
        kinds = feeds(sample)
        before = {kind: await timed(conn, calls, args.repeat) for kind, calls in kinds.items()}
        after = {}
        if args.index:
            started = time.perf_counter()
            await conn.execute(INDEX)
            await conn.execute("ANALYZE mod_versions")
            size = await conn.fetchval("SELECT pg_relation_size('bench_versions_public_published_idx')")
            print(f"candidate index: built in {time.perf_counter() - started:.1f} s, {size / 1e6:.1f} MB")
            after = {kind: await timed(conn, calls, args.repeat) for kind, calls in kinds.items()}
            await conn.execute("DROP INDEX bench_versions_public_published_idx")
        for kind, (ms, n) in before.items():
            line = f"  {kind:32s} {ms:8.1f} ms  ({n} entries)"
            if kind in after:
                line += f"   with the index {after[kind][0]:8.1f} ms"
            print(line)
        await conn.close()
    finally:
        pg.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mods", type=int, default=20_000)
    parser.add_argument("--data", default="/tmp/feedrows")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--index", action="store_true")
    asyncio.run(main(parser.parse_args()))
