"""A whole Indexium on loopback for fault tests and benchmarks: real processes, real servers.

FakeGitHub runs in the caller's event loop; NATS and PostgreSQL are embedded servers
this harness can stop, kill and restart; each service is its own OS process (several
indexers if asked). Nothing is mocked: faults are real kills, restarts and HTTP errors.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import nats

from indexium_db import migrate
from indexium_platform import natsutil

from . import jars
from .embedded import EmbeddedNats, EmbeddedPostgres, free_port
from .fakegithub import FakeGitHub
from .procs import BY_NAME, ServiceProcess

SECRET = "harness-secret"
_ids = itertools.count(1)


@dataclass
class Sent:
    delivery_id: str
    status: int
    release_tag: str
    repo: str


@dataclass
class Harness:
    root: Path
    services: dict[str, int] = field(default_factory=lambda: {"ingest": 1, "indexer": 1})
    env_extra: dict[str, str] = field(default_factory=dict)
    nats_url_override: str | None = None
    stream_replicas: int = 1
    # PostgreSQL servers the caller runs (a primary + standby pair, a multi-host DSN): no embedded one.
    database_url_override: str | None = None

    def __post_init__(self):
        self.gh = FakeGitHub()
        self.nats: EmbeddedNats | None = None
        self.pg: EmbeddedPostgres | None = None
        if self.database_url_override is None:
            self.pg = EmbeddedPostgres(self.root / "pg", durable=False, log_file=self.root / "pg.log")
        self.procs: dict[str, list[ServiceProcess]] = {}
        self._http = None

    # ---- lifecycle ---------------------------------------------------------------------
    async def start(self) -> "Harness":
        self.root.mkdir(parents=True, exist_ok=True)
        await self.gh.start()
        if self.nats_url_override is None:
            self.nats = await asyncio.to_thread(
                EmbeddedNats(self.root / "nats", log_file=self.root / "nats.log").start)
        if self.pg is not None:
            await asyncio.to_thread(self.pg.start)
            await asyncio.to_thread(self.pg.create_database, "indexium")
        conn = await asyncpg.connect(self.database_url)
        try:
            await migrate.migrate(conn)
        finally:
            await conn.close()
        nc = await nats.connect(self.nats_url.split(","))
        await natsutil.ensure_all(nc.jetstream(), replicas=self.stream_replicas)
        await nc.drain()
        for name, count in self.services.items():
            for i in range(count):
                self.procs.setdefault(name, []).append(self._new_proc(name, i))
        for p in self.all_procs():
            p.start()
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in self.all_procs()))
        return self

    def _new_proc(self, name: str, i: int, env: dict[str, str] | None = None) -> ServiceProcess:
        return ServiceProcess(BY_NAME[name], port=free_port(), env={**self.env, **(env or {})},
                              log_path=self.root / f"{name}-{i}.log")

    async def add_proc(self, name: str, env: dict[str, str] | None = None) -> int:
        """One more service process (its own variables over the harness's), started and ready;
        returns its index for ``url``/``send``. Stopped with the rest by ``stop``."""
        procs = self.procs.setdefault(name, [])
        proc = self._new_proc(name, len(procs), env)
        procs.append(proc)
        proc.start()
        await asyncio.to_thread(proc.wait_ready, 60)
        return len(procs) - 1

    async def stop(self) -> dict[str, list[int | None]]:
        codes = {}
        for name, procs in self.procs.items():
            codes[name] = [await asyncio.to_thread(p.stop, 30) for p in procs]
        await self.gh.close()
        if self.nats:
            await asyncio.to_thread(self.nats.stop)
        if self.pg is not None:
            await asyncio.to_thread(self.pg.stop)
        return codes

    def all_procs(self) -> list[ServiceProcess]:
        return [p for procs in self.procs.values() for p in procs]

    @property
    def nats_url(self) -> str:
        return self.nats_url_override or self.nats.url

    @property
    def database_url(self) -> str:
        return self.database_url_override or self.pg.dsn("indexium")

    @property
    def env(self) -> dict[str, str]:
        return {
            "NATS_URL": self.nats_url,
            "DATABASE_URL": self.database_url,
            "INDEXIUM_WEBHOOK_SECRET": SECRET,
            "INDEXIUM_DOWNLOAD_HOSTS": f"{self.gh.github_host},{self.gh.cdn_host}",
            "INDEXIUM_LOG_FORMAT": "json",
            "INDEXIUM_PUBLISH_BEFORE_SCAN": "true",
            "INDEXIUM_INDEXER_RETRY_BASE_SECONDS": "0.5",
            "INDEXIUM_INDEXER_OUTAGE_RETRY_SECONDS": "1",
            **self.env_extra,
        }

    def url(self, name: str, i: int = 0) -> str:
        return self.procs[name][i].url

    def logs(self, name: str, i: int = 0, tail: int = 4000) -> str:
        path = self.procs[name][i].log_path
        return path.read_text(errors="replace")[-tail:] if path.exists() else ""

    # ---- releases and webhooks ---------------------------------------------------------
    def make_releases(self, count: int, *, per_repo: int = 10, prefix: str = "mod"):
        """``count`` releases with a small Fabric jar each, ``per_repo`` tags per repository."""
        out = []
        n = next(_ids)
        for i in range(count):
            r, t = divmod(i, per_repo)
            mod_id = f"{prefix}{n}_{r}"
            repo = self.gh.repo(f"author{n}/{mod_id}") if t else self.gh.add_repo(f"author{n}", mod_id)
            jar = jars.fabric_jar(mod_id, f"1.{t}.0", f"Mod {n} {r}", f"Test mod {r}", minecraft="~1.20.1")
            out.append(self.gh.add_release(repo, f"v1.{t}.0", [(f"{mod_id}-1.{t}.0.jar", jar)]))
        return out

    async def send(self, release, *, delivery_id: str | None = None, ingest: int = 0) -> Sent:
        delivery_id = delivery_id or f"d-{release.id}"
        payload = self.gh.release_payload(release, action="published")
        status = await self.gh.send_webhook(f"{self.url('ingest', ingest)}/webhooks/github", "release",
                                            payload, SECRET, delivery_id=delivery_id)
        return Sent(delivery_id, status, release.tag_name, release.repo.full_name)

    async def burst(self, releases, *, concurrency: int = 20, ingest: int = 0) -> list[Sent]:
        slots = asyncio.Semaphore(concurrency)

        async def one(rel):
            async with slots:
                return await self.send(rel, ingest=ingest)

        return await asyncio.gather(*(one(r) for r in releases))

    # ---- observing -----------------------------------------------------------------------
    async def query(self, sql: str, *args):
        conn = await asyncpg.connect(self.database_url)
        try:
            return await conn.fetch(sql, *args)
        finally:
            await conn.close()

    async def indexed_deliveries(self) -> set[str]:
        rows = await self.query("SELECT delivery_id FROM webhook_deliveries WHERE outcome = 'indexed'")
        return {r["delivery_id"] for r in rows}

    async def unindexed_after_waiting(self, delivery_ids: set[str], timeout: float) -> set[str]:
        """Wait until every id is indexed (or time runs out); return those still missing."""
        deadline = asyncio.get_running_loop().time() + timeout
        missing = set(delivery_ids)
        while missing and asyncio.get_running_loop().time() < deadline:
            try:
                missing -= await self.indexed_deliveries()
            except (OSError, asyncpg.PostgresError, asyncpg.exceptions.TargetServerAttributeNotMatched):
                pass  # PostgreSQL away or failing over: ask again
            if missing:
                await asyncio.sleep(0.25)
        return missing

    async def duplicated_versions(self) -> int:
        rows = await self.query(
            "SELECT count(*) AS n FROM (SELECT mod_id, version_number FROM mod_versions"
            " GROUP BY 1, 2 HAVING count(*) > 1) d")
        return rows[0]["n"]

    async def dead_letters(self) -> list:
        return await self.query("SELECT category, error FROM dead_letters")

    def kill9(self, name: str, i: int = 0) -> None:
        self.procs[name][i].signal(signal.SIGKILL)
        self.procs[name][i].proc.wait()
