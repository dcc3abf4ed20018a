"""What CPython's cyclic garbage collector costs a replica holding the search index: the index
loaded (``indexed.load``), then loaded again while the first is held (a periodic reload),
timing every collector pass, and then one full pass (what any later full pass costs the
replica, in one stop of its event loop).

    python bench/api/gcprofile.py [--mods 100000] [--data /tmp/searchprofile] [--reloads 2] [--collector left]

The catalogue is searchprofile.py's (seeded once under ``--data`` and kept). ``--collector
settled`` (the default) loads as the API process does (``indexium_platform.heap``: automatic
passes paused while the index loads, then one full pass and everything alive frozen);
``left``: the collector left alone, as before that (and as in a process that does not turn
``heap`` on).

A diagnostic (bench/README.md), not a target: the pass times are this machine's at the moment.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections import Counter
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from indexium_search import indexed  # noqa: E402
from indexium_platform import heap  # noqa: E402
from searchprofile import seeded  # noqa: E402

SLOW_S = 0.05  # a pass this long is a visible stall of every request in flight


class Passes:
    """Every collector pass while installed: (generation, seconds, objects collected)."""

    def __init__(self) -> None:
        self.passes: list[tuple[int, float, int]] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.passes.append((info["generation"], time.perf_counter() - self._started, info["collected"]))

    def take(self) -> list[tuple[int, float, int]]:
        out, self.passes = self.passes, []
        return out


def describe(passes: list[tuple[int, float, int]]) -> str:
    by_generation = Counter(g for g, _, _ in passes)
    full = [s for g, s, _ in passes if g == 2]
    slow = [s for _, s, _ in passes if s > SLOW_S]
    return (f"passes by generation {dict(sorted(by_generation.items()))}; full passes {sum(full):.2f} s in all, "
            f"longest {max(full or [0]) * 1000:.0f} ms; over {SLOW_S * 1000:.0f} ms: {len(slow)}; "
            f"cyclic garbage found {sum(c for _, _, c in passes)}")


async def main(args) -> None:
    pg, _names = await seeded(Path(args.data), args.mods)
    probe = Passes()
    gc.callbacks.append(probe)
    try:
        conn = await asyncpg.connect(pg.dsn("bench"))
        held = None
        heap.enable(args.collector == "settled")
        print(f"{args.mods} mods; collector {args.collector}")
        for n in range(args.reloads + 1):
            what = "start-up load" if n == 0 else f"reload {n} (the last index held meanwhile)"
            started, cpu = time.perf_counter(), time.process_time()
            with heap.building():  # as search_index.LiveIndex._load
                index = await indexed.load(conn)
                held = index  # the swap: the index before is freed here
                settle_s = heap.settle()
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            if settle_s is not None:
                what += f", settled in {settle_s * 1000:.0f} ms"
            print(f"  {what}: {wall:.2f} s ({cpu:.2f} s CPU); {describe(probe.take())}")
            started = time.perf_counter()
            found = gc.collect()
            print(f"    then one full pass: {(time.perf_counter() - started) * 1000:.0f} ms "
                  f"({found} cyclic garbage; {len(gc.get_objects())} objects tracked, {gc.get_freeze_count()} frozen)")
            probe.take()
        gc.unfreeze()  # (the frozen ones too)
        kinds = Counter(type(o).__name__ for o in gc.get_objects())
        print(f"  objects the collector tracks, by type: {kinds.most_common(6)}  ({len(held)} mods held)")
        await conn.close()
    finally:
        gc.callbacks.remove(probe)
        heap.enable(False)
        pg.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--reloads", type=int, default=2)
    parser.add_argument("--collector", choices=("settled", "left"), default="settled",
                        help="settled: as the API process loads (heap.py); left: the collector left alone")
    asyncio.run(main(parser.parse_args()))
