"""Soak and chaos (issue 38): the whole ``make run`` stack under load for ``--minutes``, a role's
process killed with ``kill -9`` every ``--kill-every`` minutes, and what it all cost.

    make bench BENCH=soak BENCH_ARGS="--minutes 3 --webhooks 3 --api 60 --pings 30"
    python bench/soak/run.py [--minutes 30] [--webhooks 20] [--api 1000] [--pings 500] [--mods 100000]
    python bench/soak/run.py --mods 100000 --data /var/tmp/indexium-soak ...   (seeded once, reused)

The stack is the one ``make run`` starts (``indexium_devstack.stack.LocalStack``: embedded NATS
and PostgreSQL, the setup step, every role as its own process) in a temporary directory on
free ports, and its own supervisor (``LocalStack.supervise``, in a thread) restarts a killed
role exactly as ``make run`` does. The devstack's GitHub-shaped server runs in a child process
(``fakegh.py``) and serves a new small Fabric jar for every release. Before the roles start,
the API bench's seeder (``bench/api/data.py``) puts ``--mods`` mods in the catalogue; with
``--data DIR`` the seeded PostgreSQL cluster is kept in DIR (keyed by what the seeding depends
on: ``seeded_key``) and later runs start from a copy of it instead of seeding again.

Load (``load.py``), from this one process at fixed rates with at most ``--concurrency``
requests in flight: signed ``release`` webhooks for new releases (new mods and new versions
of them), 5 % sent again later with the same delivery id on purpose, failed ones sent again
after 3 s (as a GitHub redelivery); the API's mix (cache hits, uncached searches, hash
look-ups, update checks over the seeded catalogue); telemetry pings in the documented format
(docs/telemetry.md), 2 % of them a second ping from a server already heard, answered 429 on
purpose. The rates of issue 38 (20 webhooks/s, 1,000 API requests/s, 500 pings/s) are the
defaults; a 2-core machine shared with other work cannot send or serve them, and the achieved
rates are printed beside the asked ones.

At the end: RSS of every process (the whole-stack figure), a drain, then a quiet phase of
``--cpu-releases`` releases alone for the CPU per indexed release by role, then PostgreSQL is
checked release by release. What each printed line means: bench/README.md, "Soak".
Everything started is stopped and the temporary directory removed, on Ctrl-C or an error too.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent / "api"))  # data.py: the API bench's catalogue seeder

import aiohttp  # noqa: E402
import asyncpg  # noqa: E402
import nats  # noqa: E402

import data as catalogue_data  # noqa: E402
import fakegh  # noqa: E402
import report  # noqa: E402
from load import Load, Recorder, ReleaseRef  # noqa: E402
from procs import CpuMeter, Roles  # noqa: E402

from indexium_devstack.embedded import _pg_bin  # noqa: E402
from indexium_devstack.procs import SERVICES, free_port_env  # noqa: E402
from indexium_devstack.stack import LocalStack, _interrupt  # noqa: E402

ROLES = [s.name for s in SERVICES]


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=30.0, help="how long the load runs (default 30)")
    p.add_argument("--webhooks", type=float, default=20.0, help="signed release webhooks per second (20)")
    p.add_argument("--api", type=float, default=1000.0, help="API requests per second (1000)")
    p.add_argument("--pings", type=float, default=500.0, help="telemetry pings per second (500)")
    p.add_argument("--concurrency", type=int, default=256, help="requests in flight at most (256)")
    p.add_argument("--clients", type=int, default=2000,
                   help="launcher/server addresses the API and telemetry requests come from (2000)")
    p.add_argument("--kill-every", type=float, default=None,
                   help="minutes between two kill -9 (default: --minutes / 6, i.e. 5 of 30); 0: none")
    p.add_argument("--kill-roles", default=",".join(ROLES), help="roles a kill picks from (all of make run's)")
    p.add_argument("--mods", type=int, default=100_000, help="mods seeded in the catalogue before the run")
    p.add_argument("--per-repo", type=int, default=3, help="versions per new mod in the webhook stream (3)")
    p.add_argument("--drain-seconds", type=float, default=300.0, help="how long to wait for indexing at the end")
    p.add_argument("--cpu-releases", type=int, default=100, help="releases of the quiet CPU phase (100)")
    p.add_argument("--seed", type=int, default=38)
    p.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, data)")
    p.add_argument("--data", type=Path, default=None,
                   help="a directory keeping the seeded PostgreSQL cluster between runs: the first run "
                        "with a given --mods (and seeder, schema, PostgreSQL) seeds and keeps it, "
                        "later ones start from a copy (the kept cluster is never written to)")
    args = p.parse_args(argv)
    if args.kill_every is None:
        args.kill_every = args.minutes / 6
    return args


def say(text: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", flush=True)


# ---- the catalogue ---------------------------------------------------------------------------
async def seed(dsn: str, mods: int) -> dict:
    """The catalogue seeded; what the load needs of it (names, hashes; the slugs: ``slugs``)."""
    conn = await asyncpg.connect(dsn)
    try:
        started = time.monotonic()
        cat = await catalogue_data.load(conn, mods)
        await conn.execute("VACUUM (FULL, ANALYZE) mods")
        await conn.execute("VACUUM ANALYZE")
        await conn.execute("CHECKPOINT")
        say(f"catalogue: {cat.mods} mods, {cat.versions} versions, {cat.files} files seeded in "
            f"{time.monotonic() - started:.0f} s")
        hashes = [(h, cat.newest_gv[h]) for h in cat.sha1] or [("0" * 40, "1.20.1")]
        return {"names": cat.names, "hashes": hashes}
    finally:
        await conn.close()


async def slugs(dsn: str) -> list[str]:
    """2,000 slugs of the catalogue drawn at random (each run draws its own)."""
    conn = await asyncpg.connect(dsn)
    try:
        return [r["slug"] for r in await conn.fetch("SELECT slug FROM mods ORDER BY random() LIMIT 2000")]
    finally:
        await conn.close()


def seeded_key(mods: int) -> str:
    """What a kept catalogue depends on: the number of mods, the seeder's code (bench/api/data.py:
    deterministic, seed 7), every migration's text (a schema change seeds again rather than
    migrating an old catalogue) and PostgreSQL's version (its data directory's format)."""
    h = hashlib.sha256(f"mods={mods}\n".encode())
    h.update(Path(catalogue_data.__file__).read_bytes())
    migrations = Path(importlib.util.find_spec("indexium_db").submodule_search_locations[0]) / "migrations"
    for path in sorted(migrations.glob("*.sql")):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    version = subprocess.run([str(_pg_bin() / "postgres"), "--version"], capture_output=True, text=True).stdout
    h.update(version.encode())
    return h.hexdigest()[:16]


class KeptCatalogue:
    """``--data DIR``: ``DIR/mods-<N>-<key>/`` holds a stopped PostgreSQL cluster with the seeded
    catalogue (``postgres/``) and what the load needs of it (``seeded.json``). A run copies the
    cluster into its own directory before PostgreSQL starts (``cp -a``: the copy keeps the
    postgres user's ownership), so the kept one is never written to and any number of runs can
    start from it. Made by the first run: after seeding, PostgreSQL is stopped (a clean shutdown,
    the catalogue checkpointed), the cluster copied to a temporary name beside, renamed when
    complete, and PostgreSQL started again on its port."""

    def __init__(self, data: Path, mods: int):
        self.dir = Path(data) / f"mods-{mods}-{seeded_key(mods)}"

    def present(self) -> bool:
        return (self.dir / "seeded.json").exists() and (self.dir / "postgres" / "PG_VERSION").exists()

    def restore(self, pg_dir: Path) -> dict:
        started = time.monotonic()
        pg_dir.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-a", str(self.dir / "postgres"), str(pg_dir)], check=True)
        say(f"catalogue: copied from {self.dir} in {time.monotonic() - started:.0f} s (not seeded again)")
        return json.loads((self.dir / "seeded.json").read_text())

    def keep(self, stack: LocalStack, seeded: dict) -> None:
        started = time.monotonic()
        tmp = self.dir.with_name(self.dir.name + f".tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        stack.pg.stop()
        try:
            subprocess.run(["cp", "-a", str(stack.pg.data_dir), str(tmp / "postgres")], check=True)
            (tmp / "postgres" / "postmaster.pid").unlink(missing_ok=True)
            (tmp / "seeded.json").write_text(json.dumps(seeded))
            tmp.rename(self.dir)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        finally:
            stack.pg.start()
        say(f"catalogue: kept in {self.dir} ({time.monotonic() - started:.0f} s)")


# ---- the fake GitHub's releases ----------------------------------------------------------------
class Releases:
    """New releases from the fake GitHub's process, fetched ahead in batches."""

    def __init__(self, pipe, lock: threading.Lock):
        self.pipe, self.lock = pipe, lock
        self.ready: list[ReleaseRef] = []

    def _make(self, n: int) -> list[ReleaseRef]:
        with self.lock:
            self.pipe.send(("make", n))
            return [ReleaseRef(*row) for row in self.pipe.recv()]

    async def make(self, n: int) -> list[ReleaseRef]:
        return await asyncio.to_thread(self._make, n)

    async def feed(self, rate: float, stop: asyncio.Event) -> None:
        ahead = max(20, int(rate * 3))
        while not stop.is_set():
            if len(self.ready) < ahead:
                self.ready.extend(await self.make(min(50, ahead)))
            else:
                await asyncio.sleep(0.2)

    async def next(self) -> ReleaseRef | None:
        return self.ready.pop(0) if self.ready else None


# ---- watching the stack ------------------------------------------------------------------------
async def ready(http: aiohttp.ClientSession, url: str) -> bool:
    try:
        async with http.get(url + "/readyz", timeout=aiohttp.ClientTimeout(total=1)) as r:
            return r.status == 200
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
        return False


async def kill_one(stack: LocalStack, role: str, http: aiohttp.ClientSession, t0: float) -> tuple:
    """``kill -9`` the role's process; wait until the supervisor's new one answers /readyz."""
    loop = asyncio.get_running_loop()
    proc = next(p for p in stack.services if p.spec.name == role)
    old = proc.proc.pid
    killed_at = loop.time()
    os.kill(old, signal.SIGKILL)
    deadline = killed_at + 180
    while loop.time() < deadline:
        if proc.proc.pid != old and proc.alive() and await ready(http, proc.url):
            break
        await asyncio.sleep(0.1)
    back = loop.time()
    say(f"t={killed_at - t0:5.0f} s  kill -9 {role} (pid {old}); restarted by the supervisor as pid "
        f"{proc.proc.pid}, ready {back - killed_at:.1f} s later")
    return role, killed_at, back


async def consumers_idle(js) -> bool:
    for stream, durable in (("INGEST", "indexer"), ("VERSIONS", "scan"), ("VERSIONS", "notify")):
        try:
            info = await js.consumer_info(stream, durable)
        except Exception:
            return False
        if info.num_pending or info.num_ack_pending:
            return False
    return True


async def indexed_releases(dsn: str, release_ids: list[int]) -> set[int]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT DISTINCT github_release_id FROM mod_versions WHERE github_release_id = ANY($1)",
                                release_ids)
        return {r["github_release_id"] for r in rows}
    finally:
        await conn.close()


async def drain(dsn: str, js, release_ids: list[int], timeout: float) -> tuple[set[int], float]:
    """Wait until every release is a versions row and the consumers have nothing left."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    done: set[int] = set()
    while loop.time() - started < timeout:
        try:
            done = await indexed_releases(dsn, release_ids)
            if len(done) == len(set(release_ids)) and await consumers_idle(js):
                break
        except (OSError, asyncpg.PostgresError):
            pass
        await asyncio.sleep(1.0)
    return done, loop.time() - started


# ---- the run -----------------------------------------------------------------------------------
async def soak(args, stack: LocalStack, releases: Releases, seeded: dict) -> None:
    loop = asyncio.get_running_loop()
    urls = {p.spec.name: p.url for p in stack.services}
    dsn = stack.env["DATABASE_URL"]
    run_s = args.minutes * 60
    window_s = run_s / 6
    roles = Roles(stack)
    cpu = CpuMeter(roles)
    rng = random.Random(args.seed)
    kill_roles = [r for r in args.kill_roles.split(",") if r]
    nc = await nats.connect(stack.env["NATS_URL"])
    js = nc.jetstream()
    t0 = loop.time()
    rec = Recorder(started=t0, window_s=window_s)
    load = Load(urls=urls, secret=stack.env["INDEXIUM_WEBHOOK_SECRET"].split(",")[0],
                rates={"webhook": args.webhooks, "api": args.api, "telemetry": args.pings},
                concurrency=args.concurrency, names=seeded["names"], hashes=seeded["hashes"],
                slugs=seeded["slugs"], releases=releases.next, recorder=rec, seed=args.seed,
                clients=args.clients)
    outages: list[tuple] = []
    rss_first: dict = {}
    first_taken = asyncio.Event()
    pids_first: dict = {}
    # The whole stack's RSS at its highest sample, when (s into the run), and each role's RSS then.
    peak: list = [0.0, 0.0, {}]

    async def sample_cpu() -> None:
        while True:
            await asyncio.to_thread(cpu.sample)
            await asyncio.sleep(1.0)

    async def sample_memory() -> None:
        """The whole stack's RSS every 10 s from the 1/6 sample on: its peak (a role restarted
        late, an API still loading its index, is smaller at the end than it was)."""
        await first_taken.wait()
        while True:
            sample = await asyncio.to_thread(roles.memory)
            total = sum(m[0] for m in sample.values())
            if total > peak[0]:
                peak[:] = [total, loop.time() - t0, {role: m[0] for role, m in sample.items()}]
            await asyncio.sleep(10.0)

    async def first_rss() -> None:
        await asyncio.sleep(window_s)
        rss_first.update(await asyncio.to_thread(roles.memory))
        pids_first.update(roles.pids())
        say(f"t={loop.time() - t0:5.0f} s  RSS sampled (1/6 of the run): "
            f"{sum(m[0] for m in rss_first.values()):.0f} MB in all")
        first_taken.set()

    async def killer(http) -> None:
        if args.kill_every <= 0 or not kill_roles:
            return
        k, order = 1, []
        while k * args.kill_every * 60 < run_s - 1:
            await asyncio.sleep(max(0.0, t0 + k * args.kill_every * 60 - loop.time()))
            if k * args.kill_every * 60 >= window_s:
                await first_taken.wait()  # the minute-5 sample before a kill at the same moment
            if not order:  # every role once, in a random order, before any role twice
                order.extend(rng.sample(kill_roles, len(kill_roles)))
            outages.append(await kill_one(stack, order.pop(), http, t0))
            k += 1

    cpu.start()
    connector = aiohttp.TCPConnector(limit=args.concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as http:
        feeder = asyncio.create_task(releases.feed(args.webhooks, load.stop))
        side = [asyncio.create_task(c) for c in (sample_cpu(), sample_memory(), first_rss(), killer(http))]
        say(f"load for {args.minutes:g} min: {args.webhooks:g} webhooks/s, {args.api:g} API requests/s, "
            f"{args.pings:g} pings/s; " + (f"kill -9 every {args.kill_every:g} min among {', '.join(kill_roles)}"
                                          if args.kill_every > 0 and kill_roles else "no kill -9")
            + f" (load average {os.getloadavg()[0]:.2f})")
        load_avg_start = os.getloadavg()
        await load.run(run_s, http)
        load_avg_end = os.getloadavg()
        kills = side.pop()  # a kill under way finishes (its outage is recorded); no new one starts
        for task in (feeder, *side):
            task.cancel()
        await asyncio.gather(feeder, *side, return_exceptions=True)
        await kills
        if not first_taken.is_set():  # a run shorter than its own first window cannot happen, but
            rss_first.update(roles.memory())
        rss_end = await asyncio.to_thread(roles.memory)
        if sum(m[0] for m in rss_end.values()) > peak[0]:
            peak[:] = [sum(m[0] for m in rss_end.values()), loop.time() - t0, {r: m[0] for r, m in rss_end.items()}]
        pids_end = roles.pids()
        cpu.sample()
        cpu_run = cpu.totals()
        say(f"load done; RSS after the mixed load {sum(m[0] for m in rss_end.values()):.0f} MB in all "
            f"(load average {load_avg_end[0]:.2f})")

        accepted = [r for r in load.sent.values() if r.accepted]
        done, waited = await drain(dsn, js, [r.release_id for r in accepted], args.drain_seconds)
        say(f"drain: {len(done)} of {len(accepted)} accepted releases indexed after {waited:.0f} s")
        indexed_in_run = len(done)

        # Quiet phase: releases alone, every process's CPU over it (less its idle CPU).
        quiet = await releases.make(args.cpu_releases)
        settled = await settle(cpu, args.drain_seconds)
        say(f"quiet phase: every process below {SETTLED_MS_PER_S:g} ms of CPU a second after {settled[0]:.0f} s"
            if settled[1] else f"quiet phase: still busy after {settled[0]:.0f} s ({settled[2]}); measured anyway")
        cpu.start()
        await asyncio.sleep(5)
        cpu.sample()
        idle_rate = {k: v / 5 for k, v in cpu.totals().items()}
        cpu.start()
        phase_started = loop.time()
        slots = asyncio.Semaphore(16)

        async def send(rel: ReleaseRef) -> None:
            async with slots:
                rel.delivery_id = f"cpu-{rel.release_id}"
                load.sent[rel.delivery_id] = rel
                await load._deliver(rel, "webhook")

        sends = []
        for rel in quiet:
            sends.append(asyncio.create_task(send(rel)))
            await asyncio.sleep(1 / max(args.webhooks, 0.1))
        await asyncio.gather(*sends)
        quiet_done, _ = await drain(dsn, js, [r.release_id for r in quiet], args.drain_seconds)
        phase_s = loop.time() - phase_started
        cpu.sample()
        cpu_quiet = {k: max(0.0, v - idle_rate.get(k, 0.0) * phase_s) for k, v in cpu.totals().items()}
        cpu_quiet_raw = cpu.totals()

        accepted = [r for r in load.sent.values() if r.accepted]
        checks = await check_database(dsn, js, accepted)
        mods_now = checks["mods"]
    await nc.close()

    report.print_all(
        args=args, rec=rec, load=load, outages=outages, rss_first=rss_first, rss_end=rss_end,
        pids_first=pids_first, pids_end=pids_end, checks=checks, cpu_run=cpu_run,
        indexed_in_run=indexed_in_run, cpu_quiet=cpu_quiet, cpu_quiet_raw=cpu_quiet_raw,
        idle_rate=idle_rate, quiet_indexed=len(quiet_done), quiet_sent=len(quiet), phase_s=phase_s,
        mods_now=mods_now, load_avg=(load_avg_start, load_avg_end), run_s=run_s, peak=peak)


SETTLED_MS_PER_S = 50.0  # a process using less CPU than this is idle enough for the quiet phase


async def settle(cpu: CpuMeter, timeout: float) -> tuple[float, bool, str]:
    """Wait until every process is (nearly) idle: an API still loading its search index after a
    restart, or an autovacuum, would otherwise be counted as the releases' CPU. Returns
    (seconds waited, settled, the busiest role and its rate)."""
    loop = asyncio.get_running_loop()
    started, calm, busiest = loop.time(), 0, ""
    while loop.time() - started < timeout:
        cpu.start()
        await asyncio.sleep(2.0)
        cpu.sample()
        rates = {k: v / 2 * 1000 for k, v in cpu.totals().items()}
        name = max(rates, key=rates.get) if rates else ""
        busiest = f"{name} {rates.get(name, 0):.0f} ms/s"
        calm = calm + 1 if rates and rates[name] < SETTLED_MS_PER_S else 0
        if calm >= 2:
            return loop.time() - started, True, busiest
    return loop.time() - started, False, busiest


async def check_database(dsn: str, js, accepted: list[ReleaseRef]) -> dict:
    """Release by release: indexed once, lost, or stored more than once."""
    release_ids = [r.release_id for r in accepted]
    asset_ids = [r.asset_id for r in accepted]
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("""SELECT github_release_id, count(*) AS n, min(status) AS status
            FROM mod_versions WHERE github_release_id = ANY($1) GROUP BY 1""", release_ids)
        files = await conn.fetch("""SELECT github_asset_id, count(*) AS n FROM version_files
            WHERE github_asset_id = ANY($1) GROUP BY 1""", asset_ids)
        outcomes = await conn.fetch("""SELECT outcome, count(*) AS n FROM webhook_deliveries
            WHERE delivery_id = ANY($1) GROUP BY 1""", [r.delivery_id for r in accepted])
        dead = await conn.fetchval("SELECT count(*) FROM dead_letters")
        mods = await conn.fetchval("SELECT count(*) FROM mods")
    finally:
        await conn.close()
    stored = (await js.stream_info("INGEST", subjects_filter="indexium.ingest.release")).state.subjects or {}
    events = (await js.stream_info("VERSIONS", subjects_filter="indexium.version.indexed")).state.subjects or {}
    by_release = {r["github_release_id"]: r for r in rows}
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    return {
        "accepted": len(accepted),
        "lost": [r for r in accepted if r.release_id not in by_release],
        "versions_twice": sum(1 for r in rows if r["n"] > 1),
        "files_twice": sum(1 for r in files if r["n"] > 1),
        "files": len(files),
        "queued": stored.get("indexium.ingest.release", 0),
        "indexed_events": events.get("indexium.version.indexed", 0),
        "versions": len(rows),
        "statuses": statuses,
        "outcomes": {r["outcome"]: r["n"] for r in outcomes},
        "dead_letters": dead,
        "mods": mods,
    }


def main(argv=None) -> None:
    args = parse(argv)
    root = Path(tempfile.mkdtemp(prefix="indexium-soak-"))
    # The roles' settings, as make run passes them (its environment reaches every service):
    # free ports; the fake GitHub's hosts allowed; this client trusted as the load balancer that
    # names each launcher's address (X-Forwarded-For: the API's limits stay the shipped ones,
    # per launcher). The telemetry's new-servers-per-network cap is raised: its addresses are
    # drawn at random, and a real population's networks are not.
    os.environ.update(free_port_env())
    os.environ.update({
        "INDEXIUM_API_TRUSTED_PROXIES": "127.0.0.1/32",
        "INDEXIUM_TELEMETRY_TRUSTED_PROXIES": "127.0.0.1/32",
        "INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR": "100000000",
        # The API's search-snapshot file in this run's directory, not the machine-wide default
        # another stack on the machine may be using.
        "INDEXIUM_API_SEARCH_SNAPSHOT_DIR": str(root / "search-snapshot"),
    })
    for name in ("NATS_URL", "DATABASE_URL"):  # its own servers, always
        os.environ.pop(name, None)
    stack = LocalStack(root)
    signal.signal(signal.SIGTERM, _interrupt)
    # Ctrl-C stops it even when started from a shell that had SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    ctx = multiprocessing.get_context("spawn")
    pipe, child = ctx.Pipe()
    gh = ctx.Process(target=fakegh.serve, args=(child, args.per_repo), daemon=True)
    supervisor = None
    try:
        say(f"temporary directory {root} (load average {os.getloadavg()[0]:.2f})")
        gh.start()
        hosts = pipe.recv()["hosts"]
        os.environ["INDEXIUM_DOWNLOAD_HOSTS"] = ",".join(hosts)
        kept = KeptCatalogue(args.data, args.mods) if args.data else None
        seeded = kept.restore(root / "postgres") if kept and kept.present() else None
        stack.start_infrastructure()
        stack.run_setup()
        if seeded is None:
            seeded = asyncio.run(seed(stack.env["DATABASE_URL"], args.mods))
            if kept is not None:
                kept.keep(stack, seeded)
        seeded["slugs"] = asyncio.run(slugs(stack.env["DATABASE_URL"]))
        stack.start_services()
        supervisor = threading.Thread(target=stack.supervise, name="supervisor", daemon=True)
        supervisor.start()
        asyncio.run(soak(args, stack, Releases(pipe, threading.Lock()), seeded))
    except KeyboardInterrupt:
        say("interrupted; stopping")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
        if supervisor is not None:
            supervisor.join(5)
        if gh.is_alive():
            try:
                pipe.send(("stop",))
            except OSError:
                pass
            gh.join(5)
            if gh.is_alive():
                gh.kill()
                gh.join(5)
        if args.keep:
            say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
