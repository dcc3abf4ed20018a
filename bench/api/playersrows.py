"""Bench rows for the players' tools (issue 37, docs/players.md), against the API as a process:

  * POST /api/v1/resolve of 50 mods with their dependencies (target p95 <= 50 ms, uncached: the
    route caches nothing, and every request asks for a different 50);
  * POST /api/v1/upgrade-check of 300 hashes (target p95 <= 100 ms).

The synthetic catalogue (data.py) has no manifests, so :func:`add_dependencies` gives every
Fabric file one, as the indexer would store it: its own id and version, ``minecraft`` and
``fabricloader`` ranges, and 1 to 4 required dependencies on 150 library mods chosen by
popularity (Zipf), a quarter of them with a lower bound on the library's version, a few
``breaks`` and optional ones; a third of the libraries need another library (depth up to 3).
The 50 mods asked for each time are drawn from the Fabric mods with a file for 1.21.1.

    python bench/api/playersrows.py [--mods 100000] [--requests 60] [--data DIR]   (this row alone;
        --data keeps the seeded catalogue and reuses it)

``run.py`` runs it after the hash lookups, on its catalogue.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import summary, timed  # noqa: E402

GAME, LOADER = "1.21.1", "fabric"
LIBRARIES = 150


async def add_dependencies(conn: asyncpg.Connection, seed: int = 37) -> dict:
    """Manifests with dependencies on every Fabric file; returns what the rows ask for."""
    rng = random.Random(seed)
    rows = await conn.fetch(
        """SELECT f.id, m.manifest_id, v.version_number, f.game_versions, f.sha1::text AS sha1
           FROM version_files f JOIN mod_versions v ON v.id = f.version_id JOIN mods m ON m.id = v.mod_id
           WHERE 'fabric' = ANY(f.loaders) AND m.listed ORDER BY m.manifest_id, v.version_number, f.id""")
    fitting = sorted({r["manifest_id"] for r in rows if GAME in r["game_versions"]})
    libraries = rng.sample(fitting, LIBRARIES)
    lib_set = set(libraries)
    weights = [1 / (k + 1) for k in range(LIBRARIES)]
    lib_needs = {lib: rng.sample(libraries[:i], 1) for i, lib in enumerate(libraries) if i and rng.random() < 0.33}
    updates = []
    for r in rows:
        mod_id, number = r["manifest_id"], r["version_number"]
        deps = [{"mod_id": "minecraft", "kind": "required", "version_range": ">=1.16"},
                {"mod_id": "fabricloader", "kind": "required", "version_range": rng.choice([">=0.14", ">=0.15", ">=0.16"])}]
        if mod_id in lib_set:
            needs = lib_needs.get(mod_id, [])
        else:
            needs = sorted(set(rng.choices(libraries, weights, k=rng.randint(1, 4))))
        for lib in needs:
            deps.append({"mod_id": lib, "kind": "required",
                         "version_range": rng.choice(["*", "*", "*", ">=0.0.1"])})
        if rng.random() < 0.05:
            deps.append({"mod_id": rng.choice(libraries), "kind": "incompatible", "version_range": "<0.0.1"})
        if rng.random() < 0.1:
            deps.append({"mod_id": rng.choice(fitting), "kind": "optional"})
        updates.append((r["id"], json.dumps([{"loader": "fabric", "mod_id": mod_id, "version": number,
                                              "dependencies": deps}])))
    await conn.execute("CREATE TEMP TABLE bench_manifests (id uuid, manifests jsonb)")
    await conn.copy_records_to_table("bench_manifests", records=updates)
    await conn.execute("UPDATE version_files f SET manifests = b.manifests FROM bench_manifests b WHERE f.id = b.id")
    await conn.execute("DROP TABLE bench_manifests")
    await conn.execute("VACUUM ANALYZE version_files")
    roots = sorted(set(fitting) - lib_set)
    hashes = [r["sha1"].strip() for r in rows if r["sha1"]]
    return {"roots": roots, "hashes": hashes, "files": len(rows)}


def cpu_ms(pid: int | None) -> float:
    """The process's user + system CPU so far (ms), from /proc: on a shared machine wall time is
    mostly waiting for a core, CPU time is what a request costs the API."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


async def rows(http: aiohttp.ClientSession, api: str, asked: dict, *, requests: int = 60,
               pid: int | None = None) -> list[str]:
    """The lines to print; ``pid``: the API process, for its CPU per request."""
    rng = random.Random(7)
    lines = [f"  ({asked['files']} Fabric files given manifests: {LIBRARIES} libraries, 1-4 dependencies each)"]
    ms, picked, ok = [], [], 0
    cpu = cpu_ms(pid)
    for _ in range(requests):
        body = {"loader": LOADER, "game_version": GAME, "mods": rng.sample(asked["roots"], 50)}
        elapsed, resp, raw = await timed(http, "POST", f"{api}/api/v1/resolve", json=body)
        assert resp.status == 200, raw[:300]
        answer = json.loads(raw)
        ok += answer["ok"]
        picked.append(len(answer["mods"]))
        ms.append(elapsed)
    cpu = (cpu_ms(pid) - cpu) / requests
    lines.append(f"  {'resolve (50 mods)':24} {summary(ms)}   (target p95 <= 50 ms; "
                 f"{ok}/{requests} solved, {sum(picked) / len(picked):.0f} mods in an answer; API CPU {cpu:.1f} ms/request)")
    ms = []
    n = max(10, requests // 2)
    cpu = cpu_ms(pid)
    for _ in range(n):
        body = {"hashes": rng.sample(asked["hashes"], 300), "target_game_version": GAME, "loader": LOADER}
        elapsed, resp, raw = await timed(http, "POST", f"{api}/api/v1/upgrade-check", json=body)
        assert resp.status == 200, raw[:300]
        ms.append(elapsed)
    cpu = (cpu_ms(pid) - cpu) / n
    lines.append(f"  {'upgrade-check (300)':24} {summary(ms)}   (target p95 <= 100 ms; API CPU {cpu:.1f} ms/request)")
    return lines


async def _seed(pg, mods: int, migrate, data, run) -> dict:
    admin = await asyncpg.connect(pg.dsn("postgres"))
    await admin.execute("DROP DATABASE IF EXISTS bench")
    await admin.execute("CREATE DATABASE bench")
    await admin.close()
    conn = await asyncpg.connect(pg.dsn("bench"))
    try:
        await migrate.migrate(conn)
        started = time.monotonic()
        catalogue = await data.load(conn, mods, readmes=False)  # (READMEs play no part here)
        await conn.execute("VACUUM ANALYZE")
        run.say(f"catalogue: {catalogue.mods} mods, {catalogue.versions} versions, {catalogue.files} files "
                f"in {time.monotonic() - started:.0f} s")
        started = time.monotonic()
        asked = await add_dependencies(conn)
        run.say(f"dependencies added in {time.monotonic() - started:.0f} s")
        return asked
    finally:
        await conn.close()


async def main(args) -> None:
    import data  # noqa: PLC0415
    import run  # noqa: PLC0415 - say()

    from indexium_db import migrate  # noqa: PLC0415

    from indexium_devstack.embedded import EmbeddedPostgres, free_port  # noqa: PLC0415
    from indexium_devstack.procs import BY_NAME, ServiceProcess  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="indexium-bench-players-") as d:
        tmp = Path(d)
        kept = Path(args.data) / f"players-{args.mods}" if args.data else None
        pg = EmbeddedPostgres((kept or tmp) / "pg", durable=False).start()
        proc = None
        try:
            asked_file = kept / "asked.json" if kept else None
            if asked_file is not None and asked_file.exists():
                # Seeded by an earlier run (perhaps of older code): brought to this code's schema.
                conn = await asyncpg.connect(pg.dsn("bench"))
                await migrate.migrate(conn)
                await conn.close()
                asked = json.loads(asked_file.read_text())
                run.say(f"catalogue and dependencies kept under {kept}")
            else:
                asked = await _seed(pg, args.mods, migrate, data, run)
                if asked_file is not None:
                    asked_file.write_text(json.dumps(asked))
            dsn = pg.dsn("bench")
            env = {"DATABASE_URL": dsn, "NATS_URL": f"nats://127.0.0.1:{free_port()}",
                   "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0", "INDEXIUM_LOG_LEVEL": "warning",
                   # (off: what the routes cost without a replica's search index in the same process)
                   "INDEXIUM_API_SEARCH_INDEX": "false" if args.no_search_index else "true"}
            proc = ServiceProcess(BY_NAME["api"], port=free_port(), env=env, log_path=tmp / "api.log").start()
            await asyncio.to_thread(proc.wait_ready, 120)
            async with aiohttp.ClientSession() as http:
                run.say("\nplayers' tools (uncached, sequential, bench/api/playersrows.py):")
                for line in await rows(http, proc.url, asked, requests=args.requests, pid=proc.proc.pid):
                    run.say(line)
        finally:
            if proc is not None:
                proc.stop(30)
            pg.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--data", help="keep the seeded catalogue under DATA/players-MODS and reuse it "
                                       "(a second run starts at once; delete the folder to seed again)")
    parser.add_argument("--no-search-index", action="store_true", help="the API without its search index")
    asyncio.run(main(parser.parse_args()))
