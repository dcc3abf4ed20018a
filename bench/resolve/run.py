"""Time the pure resolver core: 50 requested mods and their dependencies.

A synthetic catalogue in memory (no database: the DB adapter and its reads are not built
yet): ``--mods`` mods of ``--versions`` versions each, Fabric predicates on 0-3 libraries per
version (see ``catalogue``; 5% of versions also ``breaks`` an older range of another mod),
half the versions for the target game. The baseline, in the same
run over the same source, is a greedy pass: the newest matching version of each requested
mod and its dependencies, no range checked. Prints p50/p95 of both and their ratio.

    .venv/bin/python bench/resolve/run.py [--mods 2000] [--versions 30] [--rounds 60]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time

from indexium_jar.deps import CandidateFile, CandidateVersion, MemorySource, Requested, parse_dependency, resolve
from indexium_jar.model import Dependency

GAME = "1.21.4"


def catalogue(mods: int, versions: int, rng: random.Random, libraries: int = 150) -> dict[str, list[CandidateVersion]]:
    """Mods depend on libraries, as real ones do (Fabric API, Cloth Config, Architectury ...):
    mod0..mod{libraries-1} are libraries, picked by popularity (weight 1/rank); a library
    depends on at most one more popular library."""
    weights = [1 / (rank + 1) for rank in range(libraries)]
    projects = {}
    for m in range(mods):
        out = []
        for v in range(versions):
            deps = []
            count = rng.choice((0, 1)) if m < libraries else rng.choice((0, 1, 1, 2, 2, 3))
            for _ in range(count):
                target = rng.choices(range(m if m < libraries else libraries), weights[: m if m < libraries else libraries])[0] if m else m
                if target != m:
                    low = rng.randrange(versions // 2)
                    deps.append(Dependency(mod_id=f"mod{target}", kind="required", version_range=f">=1.{low}"))
            if rng.random() < 0.05:
                deps.append(Dependency(mod_id=f"mod{rng.randrange(libraries, mods)}", kind="incompatible",
                                       version_range=f"<1.{rng.randrange(versions // 4)}"))
            games = (GAME, "1.21.3") if v % 2 else ("1.21.1",)
            file = CandidateFile(f"mod{m}-{v}", ("fabric",), games,
                                 tuple(parse_dependency(d, "fabric") for d in deps))
            out.append(CandidateVersion(f"p{m}", f"Mod {m}", f"mod{m}@{v}", f"1.{v}.0", files=(file,)))
        projects[f"mod{m}"] = out
    return projects


def greedy(source: MemorySource, mods: list[str]) -> int:
    seen, todo = set(), list(mods)
    while todo:
        mod_id = todo.pop()
        if mod_id in seen:
            continue
        seen.add(mod_id)
        for v in sorted(source.versions_of(mod_id) or (), key=lambda v: int(v.version.split(".")[1]), reverse=True):
            file = next((f for f in v.files if GAME in f.game_versions and "fabric" in f.loaders), None)
            if file:
                todo += [d.mod_id for d in file.dependencies if d.kind == "required"]
                break
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mods", type=int, default=2000)
    parser.add_argument("--versions", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--request", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(37)
    projects = catalogue(args.mods, args.versions, rng)
    ours, cpu, base, sizes, failed = [], [], [], [], 0
    for _ in range(args.rounds):
        wanted = rng.sample(sorted(projects), args.request)
        source = MemorySource(projects)
        t, c = time.perf_counter(), time.process_time()
        result = resolve(source, "fabric", GAME, [Requested(m) for m in wanted])
        ours.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        sizes.append(len(result.picks))
        failed += not result.ok
        t = time.perf_counter()
        greedy(MemorySource(projects), wanted)
        base.append((time.perf_counter() - t) * 1000)

    def p(xs, q):
        return statistics.quantiles(xs, n=100)[q - 1]

    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(f"catalogue {args.mods} mods x {args.versions} versions; {args.rounds} rounds of {args.request} requested")
    print(f"picks per answer: median {statistics.median(sizes):.0f}, max {max(sizes)}; no solution in {failed}")
    print(f"resolver  p50 {p(ours, 50):7.2f} ms  p95 {p(ours, 95):7.2f} ms  (CPU p50 {p(cpu, 50):.2f}, p95 {p(cpu, 95):.2f} ms)")
    print(f"greedy    p50 {p(base, 50):7.2f} ms  p95 {p(base, 95):7.2f} ms")
    print(f"ratio p95 {p(ours, 95) / p(base, 95):.1f}x (target: the core well under 50 ms p95)")


if __name__ == "__main__":
    main()
