"""API component fixtures: an app on a fresh migrated database, and a seeder that writes
mods and versions through the indexer's own query functions (so roll-ups and triggers run)."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit, urlunsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_platform.settings import load

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def dead_nats_url() -> str:
    return f"nats://127.0.0.1:{free_port()}"  # nothing listens: the cache expires by TTL only


_SCANNED = 0xF0000000  # hashes the seeder makes up: far from the small n tests pass to Seeder.hashes


class Seeder:
    """Writes the way the indexer and the scan stage do: upsert, files, roll-up."""

    T0 = T0

    @staticmethod
    def hashes(n: int) -> dict:
        """Distinct, well-formed hashes for file n."""
        return {"sha1": f"{n:040x}", "sha256": f"{n:064x}", "sha512": f"{n:0128x}"}

    @staticmethod
    def days(n: float) -> timedelta:
        return timedelta(days=n)

    def __init__(self, db):
        self.db = db
        self._repo = itertools.count(1)
        self._asset = itertools.count(1)
        self._release = itertools.count(1)
        self._scanned = itertools.count(1)

    async def mod(self, manifest_id: str, *, name: str | None = None, summary: str = "", authors=("Someone",),
                  owner: str = "owner", categories=(), environment: str = "both", description: str = ""):
        repo = next(self._repo)
        await mods_q.upsert_author(self.db, 1000 + repo, owner)
        card = mods_q.Card(name=name or manifest_id.title(), summary=summary, description=description,
                         authors=list(authors), licenses=["MIT"], links={"sources": "https://example.org"},
                         environment=environment)
        return await mods_q.create(self.db, github_repo_id=repo, repo_full_name=f"{owner}/{manifest_id}",
                                 owner_id=1000 + repo, owner_login=owner, manifest_id=manifest_id,
                                 default_branch="main", categories=list(categories), card=card)

    async def version(self, mod, number: str, files, *, status: str = "public", published: datetime | None = None,
                      version_type: str = "release", downloads: int = 5, manifests: list | None = None,
                      changelog: str = "changes", scanned: bool = True):
        """files: [(loaders, game_versions)] or [(loaders, game_versions, {"sha1": ..., ...})];
        manifests: per file, its normalized manifest records (none by default). ``scanned``: a
        file given no hashes gets distinct ones, as the scan stage writes them before a version
        is public; False leaves them null (INDEXIUM_PUBLISH_BEFORE_SCAN=true, before the scan)."""
        files = [f if len(f) == 3 else (*f, self.hashes(_SCANNED + next(self._scanned)) if scanned else {})
                 for f in files]
        vid = await versions_q.upsert_version(
            self.db, mod_id=mod["id"], version_number=number, github_release_id=next(self._release),
            tag_name=number, name=f"Release {number}", changelog=changelog, version_type=version_type,
            published_at=published or T0, status=status,
            game_versions=sorted({g for f in files for g in f[1]}), loaders=sorted({lo for f in files for lo in f[0]}))
        rows = [versions_q.FileRow(github_asset_id=next(self._asset), filename=f"{mod['slug']}-{number}-{i}.jar",
                                 url=f"https://github.com/o/r/releases/download/{number}/f{i}.jar", size=1000,
                                 content_type="application/java-archive", github_digest=None, sidecar_url=None,
                                 loaders=list(f[0]), game_versions=list(f[1]),
                                 manifests=manifests[i] if manifests else [], is_primary=i == 0,
                                 download_count=downloads)
                for i, f in enumerate(files)]
        ids = await versions_q.replace_files(self.db, vid, rows)
        for fid, f in zip(ids, files):
            if f[2]:
                await self.db.execute(
                    "UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                    fid, f[2].get("sha1"), f[2].get("sha256"), f[2].get("sha512"))
        await mods_q.refresh_rollup(self.db, mod["id"])
        return vid

    async def set_status(self, mod, version_id, status: str) -> None:
        await self.db.execute("UPDATE mod_versions SET status = $2 WHERE id = $1", version_id, status)
        await mods_q.refresh_rollup(self.db, mod["id"])

    async def icon(self, mod, data: bytes = b"\x89PNG\r\n\x1a\nfake") -> None:
        await mods_q.upsert_icon(self.db, mod["id"], "image/png", data, '"icon-etag"')


@pytest.fixture
def seed(db) -> Seeder:
    return Seeder(db)


@pytest.fixture
async def make_client(database_url):
    clients: list[TestClient] = []

    async def make(**env) -> TestClient:
        values = {"DATABASE_URL": database_url, "NATS_URL": dead_nats_url(), **env}  # None: a default left out
        client = TestClient(TestServer(create_app(load(Settings, {k: v for k, v in values.items() if v is not None}))))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
async def client(make_client) -> TestClient:
    return await make_client()


class TcpProxy:
    """PostgreSQL behind a plug we can pull: stop() refuses new connections and cuts live ones."""

    def __init__(self, dsn: str):
        parts = urlsplit(dsn)
        self.dsn, self.host, self.target_port = dsn, parts.hostname, parts.port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        parts = urlsplit(self.dsn)
        return urlunsplit(parts._replace(netloc=f"{parts.username}@127.0.0.1:{self.port}"))

    async def start(self) -> "TcpProxy":
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port, reuse_address=True)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(src, dst):
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except Exception:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def stop(self) -> None:
        self._server.close()
        for w in self._writers:
            w.transport.abort()
        self._writers.clear()
        await asyncio.sleep(0.05)


@pytest.fixture
async def pg_proxy(database_url):
    proxy = await TcpProxy(database_url).start()
    yield proxy
    await proxy.stop()
