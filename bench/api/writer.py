"""The search snapshot's writer at catalogue scale (issue 38): a full load against a write from the
previous snapshot, its peak RSS and seconds.

    python bench/api/writer.py [--mods 100000] [--data /tmp/searchprofile] [--changes 0,1000,5000]
                               [--max-changes 20000]

searchprofile.py's seeded catalogue (kept under ``--data``), embedded NATS set up as the setup step
does, and the writer as deployed: each write a process of its own (``python -m indexium_ops
search-snapshot --directory <tmp>``), its wall time, CPU and peak RSS (``wait4``'s ``ru_maxrss``:
the process's VmHWM, file-backed pages it mapped included). First ``--full``; then, per
``--changes`` count, that many more mods changed in PostgreSQL (a tenth hidden, a tenth renamed,
a tenth with a README rewritten, the rest with downloads moved; each count a new set) and a write
from the previous snapshot, which re-reads them. The changed rows are put back as they were at
the end and the table vacuumed (the catalogue is shared with other benches; their ``updated_at``
stays moved).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import asyncpg

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def write(env: dict, directory: Path, *flags: str) -> dict:
    """One write as a process: its wall and CPU seconds, peak RSS (MB) and last line."""
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "indexium_ops", "search-snapshot", "--directory", str(directory),
                             *flags], env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"the writer failed ({proc.returncode}):\n{out[-3000:]}")
    line = [x for x in out.splitlines() if x.startswith("search snapshot put")][-1]
    return {"wall": took, "cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "line": line}


async def change(conn: asyncpg.Connection, n: int, done: set) -> list:
    """``n`` listed mods not changed before, changed (see the module doc); their rows as they were."""
    rows = await conn.fetch("SELECT id, name, readme_text, listed, downloads FROM mods WHERE listed"
                            " AND NOT (id = ANY($1::uuid[])) ORDER BY md5(id::text) LIMIT $2", list(done), n)
    ids = [r["id"] for r in rows]
    done.update(ids)
    kinds = {k: ids[k::10] for k in range(3)}
    await conn.execute("UPDATE mods SET listed = false, updated_at = now() WHERE id = ANY($1)", kinds[0])
    await conn.execute("UPDATE mods SET name = name || ' Reforged', updated_at = now() WHERE id = ANY($1)", kinds[1])
    await conn.execute("UPDATE mods SET readme_text = 'Rewritten: wombats, quokkas and numbats in the furnace room.',"
                       " updated_at = now() WHERE id = ANY($1)", kinds[2])
    rest = [i for k, i in enumerate(ids) if k % 10 > 2]
    await conn.execute("UPDATE mods SET downloads = downloads + 1000 + (random() * 50000)::int, updated_at = now()"
                       " WHERE id = ANY($1)", rest)
    return list(rows)


async def restore(conn: asyncpg.Connection, rows: list) -> None:
    await conn.execute(
        """UPDATE mods m SET name = r.name, readme_text = r.readme_text, listed = r.listed, downloads = r.downloads,
               updated_at = now()
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bool[], $5::bigint[]) AS r(id, name, readme_text, listed, downloads)
           WHERE m.id = r.id""",
        [r["id"] for r in rows], [r["name"] for r in rows], [r["readme_text"] for r in rows],
        [r["listed"] for r in rows], [r["downloads"] for r in rows])


def report(label: str, r: dict, load: float) -> None:
    print(f"  {label}: {r['wall']:.1f} s ({r['cpu']:.1f} s CPU), peak RSS {r['peak_mb']:.0f} MB "
          f"(load average before {load:.2f})\n    {r['line']}", flush=True)


async def main(args) -> None:
    from searchprofile import seeded_with_nats

    async with seeded_with_nats(Path(args.data), args.mods, "indexium-writer-") as (pg, _, tmp, nats_url):
        dsn = pg.dsn("bench")
        env = {"DATABASE_URL": dsn, "NATS_URL": nats_url, "INDEXIUM_LOG_FORMAT": "json", "INDEXIUM_LOG_LEVEL": "info"}
        directory = tmp / "writer"
        print(f"search snapshot writer, {args.mods} mods ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})",
              flush=True)
        load = os.getloadavg()[0]
        report("full load (--full)", await asyncio.to_thread(write, env, directory, "--full"), load)
        conn = await asyncpg.connect(dsn)
        changed: list = []
        try:
            done: set = set()
            for n in [int(x) for x in args.changes.split(",")]:
                if n:
                    changed += await change(conn, n, done)
                load = os.getloadavg()[0]
                report(f"from the previous snapshot, {n} mods changed",
                       await asyncio.to_thread(write, env, directory, "--max-changes", str(args.max_changes)), load)
        finally:
            if changed:
                await restore(conn, changed)
                # (their dead rows vacuumed: left, they slowed the next bench's searches on this catalogue)
                await conn.execute("VACUUM (ANALYZE) mods")
            await conn.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=100_000)
    parser.add_argument("--data", default="/tmp/searchprofile")
    parser.add_argument("--changes", default="0,1000,5000")
    parser.add_argument("--max-changes", type=int, default=20_000, help="the writer's --max-changes (what it "
                        "would re-read before a full load instead)")
    asyncio.run(main(parser.parse_args()))
