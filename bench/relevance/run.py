"""Relevance bench: our search against BM25 over the same catalogue of real mods, in one run.

    python bench/relevance/run.py [--catalogue bench/relevance/.data/catalogue.json] [--mods 4000]
    make bench BENCH=relevance

The catalogue (real names and CurseForge summaries) is rebuilt locally by catalogue.py from
public snapshots it names; it is not committed. ``--mods``: the judged mods plus a fixed sample
of the others, up to that many (all: 0).

Queries (queries.py, our own judgement, one expected mod each), four classes: exact titles,
titles with one typo (a letter dropped, added, replaced or two swapped in one word), the
abbreviations players type (JEI, AE2, REI...), two words of the mod's description. Ours is the
API's search as a replica runs it (the catalogue in an embedded PostgreSQL, migrated as in
production, the in-process index loaded and prewarmed, ``indexed.search``); BM25 is rank_bm25's
Okapi BM25 over the same name, slug and summary. Printed per class and system: hit@1, hit@5 and
MRR@10, and the issue's targets as ``target:`` lines (ours at least BM25's MRR@10 in every class;
exact titles hit@1 >= 0.98; typos hit@5 >= 0.95; abbreviations hit@5 >= 0.8).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

import asyncpg
from rank_bm25 import BM25Okapi

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import queries as judged  # noqa: E402

from indexium_db import migrate  # noqa: E402
from indexium_search import sqlpath  # noqa: E402
from indexium_search import indexed  # noqa: E402
from indexium_search.searchindex import Lexicon  # noqa: E402
from indexium_devstack.embedded import throwaway  # noqa: E402

_TOKENS = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKENS.findall(text.lower())


def sample(mods: list[dict], keep: set[str], n: int) -> list[dict]:
    """The judged mods and a fixed sample of the others, n in all (0: every mod)."""
    if not n or n >= len(mods):
        return mods
    rest = [m for m in mods if m["slug"] not in keep]
    random.Random(3).shuffle(rest)
    chosen = {m["slug"] for m in rest[:max(0, n - len(keep))]} | keep
    return [m for m in mods if m["slug"] in chosen]


def downloads(m: dict, popularity: bool) -> int:
    """No download counts in the sources: 0 for every mod (ties go to the slug), or with
    ``popularity`` a proxy: mcmod.cn's page number, low for long-known mods (10^8 / page)."""
    return 10**8 // m["mcmod"] if popularity and m.get("mcmod") else 0


async def load(conn: asyncpg.Connection, mods: list[dict], popularity: bool) -> None:
    await migrate.migrate(conn)
    rows = [(uuid.UUID(int=i + 1, version=4), 1_000_000 + i, f"owner/{m['slug']}", m["slug"], m["manifest_id"],
             m["name"][:128], m["summary"], ["Someone"], True, downloads(m, popularity)) for i, m in enumerate(mods)]
    await conn.copy_records_to_table("mods", records=rows, columns=[
        "id", "github_repo_id", "repo_full_name", "slug", "manifest_id", "name", "summary", "authors", "listed",
        "downloads"])
    await conn.execute("VACUUM ANALYZE mods")


async def ours(dsn: str, classes: dict[str, list[tuple[str, str]]]) -> dict[str, list[list[str]]]:
    conn = await asyncpg.connect(dsn)
    try:
        index = await indexed.load(conn)
        lexicon, corrections = Lexicon(), sqlpath.Corrections()
        await indexed.prewarm(conn, lexicon, index)
        out = {}
        for kind, items in classes.items():
            out[kind] = []
            for q, _ in items:
                rows, _ = await indexed.search(conn, sqlpath.SearchQuery(q, limit=10), index=index,
                                               lexicon=lexicon, corrections=corrections)
                out[kind].append([r["slug"] for r in rows])
        return out
    finally:
        await conn.close()


def bm25(mods: list[dict], classes: dict[str, list[tuple[str, str]]]) -> dict[str, list[list[str]]]:
    engine = BM25Okapi([_tokens(f"{m['name']} {m['slug'].replace('-', ' ')} {m['summary']}") for m in mods])
    out = {}
    for kind, items in classes.items():
        out[kind] = []
        for q, _ in items:
            scores = engine.get_scores(_tokens(q))
            top = sorted(range(len(mods)), key=lambda i: (-scores[i], i))[:10]
            out[kind].append([mods[i]["slug"] for i in top if scores[i] > 0])
    return out


def measures(found: list[list[str]], expected: list[str]) -> tuple[float, float, float]:
    """hit@1, hit@5, MRR@10."""
    n = len(expected)
    ranks = [hits.index(e) + 1 if e in hits[:10] else None for hits, e in zip(found, expected)]
    return (sum(r == 1 for r in ranks) / n, sum(r is not None and r <= 5 for r in ranks) / n,
            sum(1 / r for r in ranks if r is not None) / n)


async def main(args) -> None:
    mods = json.loads(args.catalogue.read_text())
    classes = judged.classes(mods)
    keep = {slug for items in classes.values() for _, slug in items}
    mods = sample(mods, keep, args.mods)
    print(f"catalogue: {len(mods)} real mods ({sum(1 for m in mods if m['summary'])} with a description; "
          f"popularity: {'mcmod.cn page proxy' if args.popularity else 'none, every mod 0 downloads'}); "
          + ", ".join(f"{kind} {len(items)}" for kind, items in classes.items()) + " judged queries")
    with tempfile.TemporaryDirectory(prefix="indexium-relevance-") as d:
        async with throwaway(Path(d), "relevance", nats=False) as servers:
            conn = await asyncpg.connect(servers.dsn)
            started = time.monotonic()
            await load(conn, mods, args.popularity)
            await conn.close()
            print(f"  loaded and migrated in {time.monotonic() - started:.1f} s")
            started = time.monotonic()
            our_hits = await ours(servers.dsn, classes)
            print(f"  our search: {sum(map(len, classes.values()))} queries in {time.monotonic() - started:.1f} s")
    their_hits = bm25(mods, classes)
    print(f"\n  {'class':22} {'ours hit@1':>10} {'hit@5':>6} {'MRR@10':>7} | {'BM25 hit@1':>10} {'hit@5':>6} {'MRR@10':>7}")
    targets = []
    for kind, items in classes.items():
        expected = [slug for _, slug in items]
        o, b = measures(our_hits[kind], expected), measures(their_hits[kind], expected)
        print(f"  {kind:22} {o[0]:10.2f} {o[1]:6.2f} {o[2]:7.2f} | {b[0]:10.2f} {b[1]:6.2f} {b[2]:7.2f}")
        targets.append((f"{kind} MRR@10, ours vs BM25", o[2], ">=", b[2]))
        if kind == "exact titles":
            targets.append(("exact titles hit@1", o[0], ">=", 0.98))
        if kind == "typos":
            targets.append(("typos hit@5", o[1], ">=", 0.95))
        if kind == "abbreviations":
            targets.append(("abbreviations hit@5", o[1], ">=", 0.8))
        if args.misses:
            for (q, slug), hits in zip(items, our_hits[kind]):
                if slug not in hits[:5]:
                    print(f"    miss: {q!r} -> {slug} (ours: {hits[:3]})")
    print()
    for measure, value, op, limit in targets:
        met = value >= limit
        print(f"target: {measure} = {value:.2f} (goal {op} {limit:.2f}){'' if met else '  MISSED'}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--catalogue", type=Path, default=HERE / ".data" / "catalogue.json")
    parser.add_argument("--mods", type=int, default=4000)
    parser.add_argument("--misses", action="store_true", help="print our misses (expected mod not in the top 5)")
    parser.add_argument("--popularity", action="store_true",
                        help="downloads from a proxy (mcmod.cn's page number: catalogue.py) instead of none")
    args = parser.parse_args()
    if not args.catalogue.exists():
        sys.exit(f"{args.catalogue} is missing: build it with bench/relevance/catalogue.py (see its docstring)")
    asyncio.run(main(args))
