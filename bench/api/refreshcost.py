"""What a serving API replica's refresh from a new search snapshot costs its event loop, part by part.

    python bench/api/refreshcost.py [--mods 100000] [--data /tmp/searchprofile] [--changed 500]

On searchprofile.py's seeded catalogue: an index loaded from PostgreSQL and written as a snapshot
(as the writer does), then, in this one process as in a replica:

* the snapshot mapped (``snapshot.load``: on a worker thread in the replica);
* ``--changed`` mods re-read (``indexed.reread``'s statement, then its upserts), 500 a statement
  (``indexed.REREAD_BATCH``: before a replica serves) and 20 (``search_index.SERVING_REREAD_BATCH``),
  the rows' fetch and decoding and the upserts timed apart: both hold the event loop;
* ``heap.settle``'s collector pass after the first load and after a refresh (the old index
  dropped), full and not (``full=False``: the frozen heap not walked), and what each found: every
  request in flight waits for it; then a full pass finds what the one not full left frozen.

Each part's milliseconds are what a request arriving meanwhile waits at most (the loop is held).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from searchprofile import seeded  # noqa: E402
from indexium_search import indexed, snapshot  # noqa: E402
from indexium_search.searchindex import Lexicon  # noqa: E402

SERVING_BATCH = 20  # search_index.SERVING_REREAD_BATCH (the API's package is not this bench's import)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


async def reread_timed(conn, index, slugs: list[str], size: int) -> tuple[float, float, float]:
    """The re-read of ``slugs`` ``size`` a statement: (the longest batch's fetch, its upserts, all of it)."""
    worst_fetch = worst_apply = total = 0.0
    for batch in indexed.batches(slugs, size):
        t0 = time.perf_counter()
        rows = await conn.fetch(f"SELECT {indexed._INDEX_COLUMNS}, {indexed._NEW_WORDS} FROM mods m"
                                " WHERE m.slug = ANY($1::text[])", batch)
        t1 = time.perf_counter()
        for row in rows:  # (indexed.reread's body)
            index.words.update(row["words"])
            index.upsert(row)
        t2 = time.perf_counter()
        worst_fetch, worst_apply, total = max(worst_fetch, t1 - t0), max(worst_apply, t2 - t1), total + t2 - t0
    return worst_fetch, worst_apply, total


def settle(full: bool = True) -> tuple[float, int]:
    """heap.settle's work, timed, and what its pass found unreachable."""
    t = time.perf_counter()
    if full:
        gc.unfreeze()
    found = gc.collect()
    gc.freeze()
    return time.perf_counter() - t, found


async def main(args) -> None:
    pg, _ = await seeded(Path(args.data), args.mods)
    tmp = Path(tempfile.mkdtemp(prefix="refreshcost-"))
    try:
        conn = await asyncpg.connect(pg.dsn("bench"))
        path = tmp / "index.snap"
        t = time.perf_counter()
        index = await indexed.load(conn)
        lexicon = Lexicon()
        await indexed.prewarm(conn, lexicon, index)
        snapshot.write(index, lexicon, path, updated_at=index.position)
        print(f"snapshot of {len(index)} mods written in {time.perf_counter() - t:.1f} s ({path.stat().st_size / 2**20:.1f} MiB)")
        del index, lexicon
        gc.collect()
        gc.disable()  # (heap.building: no automatic pass while an index is built)
        before = len(gc.get_objects())
        t = time.perf_counter()
        index, lexicon, _ = snapshot.load(path)
        print(f"mapped: {ms(time.perf_counter() - t)} ({len(gc.get_objects()) - before} objects the collector tracks)")
        slugs = [r[0] for r in await conn.fetch("SELECT slug FROM mods WHERE listed ORDER BY random() LIMIT $1", args.changed)]
        for size in (indexed.REREAD_BATCH, SERVING_BATCH):
            fetch, apply, total = await reread_timed(conn, index, slugs, size)
            print(f"re-read of {len(slugs)} mods, {size} a statement: the longest batch {ms(fetch + apply)}"
                  f" ({ms(fetch)} its rows, {ms(apply)} its upserts), {ms(total)} in all")
        took, found = settle()
        print(f"settle after the first load: {ms(took)}, {found} unreachable found")
        index, lexicon, _ = snapshot.load(path)  # a refresh: the old index dropped
        took, found = settle()
        print(f"settle after a refresh, full (heap.settle()): {ms(took)}, {found} unreachable found")
        index, lexicon, _ = snapshot.load(path)
        took, found = settle(full=False)
        print(f"settle after a refresh, not full (heap.settle(full=False)): {ms(took)}, {found} unreachable found")
        took, found = settle()
        print(f"  a full settle after it: {ms(took)}, {found} unreachable left frozen by it (the replaced index's cycles)")
        gc.enable()
        await conn.close()
    finally:
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--changed", type=int, default=500)
    asyncio.run(main(parser.parse_args()))
