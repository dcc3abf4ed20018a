"""``make run``: the whole system on one machine, supervised like Kubernetes would.

Embedded NATS and PostgreSQL (data kept under ``.run/``) unless NATS_URL /
DATABASE_URL name servers to use; the setup step; the services as separate
processes, each restarted when it dies; Ctrl-C stops everything cleanly.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from indexium_ops.cli import Settings as OpsSettings, setup
from indexium_platform.settings import load

from .embedded import EmbeddedNats, EmbeddedPostgres, free_port, port_is_free
from .procs import GITHUB_ROLE, SEARCH_SNAPSHOT, SERVICES, ServiceProcess, port_variable

DEV_WEBHOOK_SECRET = "indexium-dev-secret"
# Derives the webhook subscriptions' signing secrets (the API and the notify role share it).
DEV_NOTIFY_KEY = "indexium-dev-notify-key-of-32-bytes-at-least"
# Preferred local ports for the embedded servers (the machine's own NATS/PostgreSQL own the defaults).
NATS_PORT, PG_PORT = 14222, 15432
# The embedded NATS's Go heap, softly bounded (docs/operations.md, "One machine: memory"): above
# what a 30-minute soak keeps live (~80 MB: the telemetry rate-limit bucket's open windows, the
# streams' state), so the collector never runs back to back, while what a burst leaves behind (a
# search snapshot of ~150 MB passing through the object store) is collected and given back
# instead of staying in the process.
NATS_MEMORY_LIMIT = "128MiB"


def _port(preferred: int) -> int:
    return preferred if port_is_free(preferred) else free_port()


def machine_sized(environ, cores: int | None = None) -> dict[str, str]:
    """PostgreSQL connections sized to the one machine the whole stack shares (docs/operations.md,
    "One machine: memory"): the API's pool and the indexer's concurrency (its pool is half of it) at 4 a core,
    at most their defaults (20, 16: sized for a PostgreSQL of its own). On 2 cores, after a kill
    the restarted indexer opened 8 backends and the API 18 of its 20, ~8 MB each of private
    memory, 44 PostgreSQL processes at the soak's highest sample: PostgreSQL runs 2 statements at
    a time here, the others wait in its run queue, not in the pool. An explicit setting wins."""
    cores = cores or os.cpu_count() or 2
    sized = {"INDEXIUM_API_DB_POOL_SIZE": min(20, 4 * cores), "INDEXIUM_INDEXER_CONCURRENCY": min(16, 4 * cores)}
    return {name: environ.get(name, str(value)) for name, value in sized.items()}


class LocalStack:
    def __init__(self, root: Path, *, demo: bool = False):
        self.root = root
        self.demo = demo
        self.nats: EmbeddedNats | None = None
        self.pg: EmbeddedPostgres | None = None
        self.services: list[ServiceProcess] = []
        self.env: dict[str, str] = {}
        self._stop = threading.Event()
        self._demo = None

    def say(self, text: str) -> None:
        print(f"[indexium] {text}", flush=True)

    def start_infrastructure(self) -> None:
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        nats_url = os.environ.get("NATS_URL")
        if not nats_url:
            self.nats = EmbeddedNats(self.root / "nats", _port(NATS_PORT), memory_limit=NATS_MEMORY_LIMIT,
                                     log_file=self.root / "logs" / "nats.log").start()
            nats_url = self.nats.url
            self.say(f"embedded NATS JetStream on {nats_url} (store {self.root / 'nats'})")
        db_url = os.environ.get("DATABASE_URL")
        if not db_url:
            self.pg = EmbeddedPostgres(self.root / "postgres", _port(PG_PORT),
                                       log_file=self.root / "logs" / "postgres.log").start()
            if not self.pg.database_exists("indexium"):
                self.pg.create_database("indexium")
            db_url = self.pg.dsn("indexium")
            self.say(f"embedded PostgreSQL on {db_url} (data {self.root / 'postgres'})")
        self.env = {
            "NATS_URL": nats_url,
            "DATABASE_URL": db_url,
            "INDEXIUM_WEBHOOK_SECRET": os.environ.get("INDEXIUM_WEBHOOK_SECRET", DEV_WEBHOOK_SECRET),
            "INDEXIUM_NOTIFY_SECRET_KEY": os.environ.get("INDEXIUM_NOTIFY_SECRET_KEY", DEV_NOTIFY_KEY),
            # The snapshot writer's previous snapshot in this stack's directory, not the machine-wide
            # default another stack (a soak, a test) may be writing to.
            "INDEXIUM_SEARCH_SNAPSHOT_WRITER_DIR": os.environ.get("INDEXIUM_SEARCH_SNAPSHOT_WRITER_DIR",
                                                                  str(self.root / "search-snapshot-writer")),
            **machine_sized(os.environ),
        }

    def run_setup(self) -> None:
        settings = load(OpsSettings, {**os.environ, **self.env})
        for line in asyncio.run(setup(settings)):
            self.say(f"setup: {line}")

    def start_services(self) -> None:
        specs = list(SERVICES)
        if os.environ.get("INDEXIUM_GITHUB_APP_ID") or self.env.get("INDEXIUM_GITHUB_APP_ID"):
            specs.append(GITHUB_ROLE)  # a registered App, or the demo's stand-in
        self.write_search_snapshot()
        for spec in specs:
            port = int(os.environ.get(port_variable(spec), spec.default_port))
            if not port_is_free(port):
                raise SystemExit(f"port {port} for {spec.name} is taken; set {port_variable(spec)}")
            proc = ServiceProcess(spec, port=port, env=self.env, log_path=self.root / "logs" / f"{spec.name}.log")
            self.services.append(proc.start())
        writer = ServiceProcess(SEARCH_SNAPSHOT, port=0, env=self.env,
                                log_path=self.root / "logs" / f"{SEARCH_SNAPSHOT.name}.log")
        self.services.append(writer.start())
        for proc in self.services:
            if proc.spec.http:
                proc.wait_ready(timeout=60)
                self.say(f"{proc.spec.name:<10} {proc.url}  (log {proc.log_path})")
            else:
                self.say(f"{proc.spec.name:<10} (no port; log {proc.log_path})")
        self.write_state()

    def write_search_snapshot(self) -> None:
        """The search snapshot written once before the API starts, so its replicas start from it
        (then the search-snapshot process keeps it fresh); a failure is said and not fatal: the API
        then builds its index from PostgreSQL, as it says in its log."""
        started = time.monotonic()
        log = self.root / "logs" / f"{SEARCH_SNAPSHOT.name}.log"
        with open(log, "ab") as out:
            done = subprocess.run([sys.executable, "-m", "indexium_ops", "search-snapshot"],
                                  env={**os.environ, **self.env}, stdout=out, stderr=subprocess.STDOUT)
        took = time.monotonic() - started
        self.say(f"search snapshot written in {took:.1f} s" if done.returncode == 0 else
                 f"search snapshot not written (exit {done.returncode}, log {log}): the API builds from PostgreSQL")

    def write_state(self, *, running: bool = True) -> None:
        """``.run/state.json``: where everything listens and each service's pid (for tools and
        tests; the operator CLI reads it: ``indexium_ops.localstack``). The stack's own pid and
        ``running`` (false once stopped) tell a reader whether the URLs still answer."""
        state = {
            "pid": os.getpid(),
            "running": running,
            "nats_url": self.env["NATS_URL"],
            "database_url": self.env["DATABASE_URL"],
            "services": {p.spec.name: {"url": p.url if p.spec.http else None, "pid": p.proc.pid,
                                       "restarts": p.restarts} for p in self.services},
        }
        tmp = self.root / "state.json.tmp"
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.root / "state.json")

    def supervise(self) -> None:
        """Restart a service that died, with a growing pause, until asked to stop."""
        backoff: dict[str, float] = {}
        restarted: dict[str, float] = {}
        while not self._stop.wait(0.5):
            for proc in self.services:
                if proc.alive():
                    continue
                name = proc.spec.name
                if time.monotonic() - restarted.get(name, 0.0) > HEALTHY_RUN_S:
                    backoff.pop(name, None)  # it ran fine for a while: this is a new failure
                delay = min(backoff.get(name, 0.5) * 2, 10.0)
                backoff[name] = delay
                self.say(f"{name} exited with {proc.proc.returncode}; restarting in {delay:.0f}s")
                if self._stop.wait(delay):
                    return
                proc.restarts += 1
                proc.start()
                restarted[name] = time.monotonic()
                self.write_state()

    def stop(self) -> None:
        self._stop.set()
        for proc in reversed(self.services):
            proc.stop()
        if self.services:
            self.write_state(running=False)
        if self._demo is not None:
            self._demo.stop()
        if self.pg:
            self.pg.stop()
        if self.nats:
            self.nats.stop()
        self.say("stopped")


HEALTHY_RUN_S = 60.0  # a service up this long after a restart starts its backoff afresh


def _interrupt(signum, frame) -> None:
    # SIGTERM stops the stack the way Ctrl-C does: by raising in the main thread. (Setting a
    # threading.Event from a signal handler can deadlock: the handler may run while the main
    # thread holds that Event's own lock inside Event.wait.)
    raise KeyboardInterrupt


def run(root: Path, *, demo: bool) -> None:
    stack = LocalStack(root, demo=demo)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        stack.start_infrastructure()
        if demo:
            from .demo import DemoGitHub

            stack._demo = DemoGitHub(stack.env["INDEXIUM_WEBHOOK_SECRET"]).start()
            stack.env["INDEXIUM_DOWNLOAD_HOSTS"] = ",".join(stack._demo.download_hosts)
            api_port = int(os.environ.get("INDEXIUM_API_PORT", 8080))
            site = stack._demo.site_env(os.environ.get("INDEXIUM_PUBLIC_URL", f"http://127.0.0.1:{api_port}"))
            stack.env.update({k: v for k, v in site.items() if k not in os.environ})
            if not os.environ.get("INDEXIUM_GITHUB_APP_ID"):  # else the App given is used
                stack.env.update(stack._demo.app_env())
        stack.run_setup()
        stack.start_services()
        api = next(p for p in stack.services if p.spec.name == "api")
        ingest = next(p for p in stack.services if p.spec.name == "ingest")
        stack.say(f"webhooks: POST {ingest.url}/webhooks/github (secret in INDEXIUM_WEBHOOK_SECRET)")
        stack.say(f"search:   GET  {api.url}/api/v1/mods?q=...")
        stack.say(f"web site: {api.url}/" + ("  (sign in: the dashboard of the demo author)" if demo else ""))
        if stack._demo is not None:
            sent = stack._demo.send_all(f"{ingest.url}/webhooks/github")
            stack.say(f"demo: {sent} signed webhooks sent (the App installed, then its releases); "
                      f"try {api.url}/api/v1/mods")
        stack.say("running; Ctrl-C stops everything")
        stack.supervise()
    except KeyboardInterrupt:
        pass
    finally:
        # A second Ctrl-C or SIGTERM must not cut the shutdown short and orphan the services.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
