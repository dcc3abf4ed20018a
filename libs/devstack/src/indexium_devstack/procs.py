"""Service processes: start one as its own OS process, wait until it is ready, stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from .embedded import free_port


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    module: str
    default_port: int
    args: tuple[str, ...] = ()
    http: bool = True  # False: no port, no /readyz (a worker: the search snapshot's scheduler)


SERVICES = (
    ServiceSpec("ingest", "indexium_ingest", 8081),
    ServiceSpec("indexer", "indexium_indexer", 8083),
    ServiceSpec("scan", "indexium_indexer.scan", 8084),  # the indexer's second role
    ServiceSpec("notify", "indexium_indexer.notify", 8086),  # webhook subscriptions (docs/notifications.md)
    ServiceSpec("api", "indexium_api", 8080),
    ServiceSpec("telemetry", "indexium_telemetry", 8082),
)
# The search snapshot's writer on a schedule and after catalogue changes (docs/api.md, "Replica
# start: the snapshot"): make run writes one before the API starts, then this keeps it fresh.
SEARCH_SNAPSHOT = ServiceSpec("search-snapshot", "indexium_ops", 0, args=(
    "search-snapshot", "--every", "600", "--after-changes", "1000", "--min-interval", "300", "--wait-first",
    "--nice", "10"), http=False)
# Runs only when a GitHub App is configured (INDEXIUM_GITHUB_APP_ID).
GITHUB_ROLE = ServiceSpec("github", "indexium_indexer.github", 8085)
BY_NAME = {s.name: s for s in (*SERVICES, GITHUB_ROLE)}


def port_variable(spec: ServiceSpec) -> str:
    """The variable ``make run`` reads for the service's port (its default otherwise)."""
    return f"INDEXIUM_{spec.name.upper()}_PORT"


def free_port_env() -> dict[str, str]:
    """A free loopback port for every service the local stack may start, the GitHub role
    included: a stack started by a test must not reach for a default port a developer's
    own ``make run`` already holds."""
    return {port_variable(spec): str(free_port()) for spec in BY_NAME.values()}


class ServiceProcess:
    def __init__(self, spec: ServiceSpec, *, port: int, env: dict[str, str], log_path: Path | None = None):
        self.spec, self.port, self.env, self.log_path = spec, port, env, log_path
        self.proc: subprocess.Popen | None = None
        self.restarts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "ServiceProcess":
        env = {**os.environ, **self.env, "PORT": str(self.port), "HOST": "127.0.0.1"}
        out = open(self.log_path, "ab") if self.log_path else None
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.spec.module, *self.spec.args], env=env, stdout=out, stderr=subprocess.STDOUT
            if out else None, start_new_session=True,
        )
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_ready(self, timeout: float = 30.0, path: str = "/readyz") -> None:
        deadline = time.monotonic() + timeout
        last = "no answer"
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"{self.spec.name} exited with {self.proc.returncode} while starting"
                                   + (f" (log: {self.log_path})" if self.log_path else ""))
            try:
                with urllib.request.urlopen(self.url + path, timeout=1) as r:
                    if r.status == 200:
                        return
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except OSError as exc:
                last = str(exc)
            time.sleep(0.05)
        raise TimeoutError(f"{self.spec.name} not ready within {timeout}s ({last})")

    def signal(self, sig: int) -> None:
        if self.alive():
            self.proc.send_signal(sig)

    def stop(self, timeout: float = 30.0) -> int | None:
        if self.proc is None:
            return None
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def kill(self) -> None:
        if self.alive():
            self.proc.kill()
            self.proc.wait()
