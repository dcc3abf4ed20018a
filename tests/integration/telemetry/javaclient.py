"""Builds the Java telemetry client and its test harness (the same `make` as `make telemetry-client`)
and runs the harness: the client's real entry points on stub loader classes."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CLIENT = ROOT / "services" / "telemetry" / "client-java"
BUILD = CLIENT / "build"
JAR = BUILD / "indexium-telemetry.jar"
ENTRY = {"fabric": "fabric", "quilt": "fabric", "forge": "forge", "neoforge": "neoforge"}


def build() -> Path:
    """The jar and the harness; skips (saying why) only when this machine has no JDK."""
    if shutil.which("javac") is None or shutil.which("java") is None:
        pytest.skip("no javac/java on this machine: the telemetry client mod cannot be built here")
    done = subprocess.run(["make", "-s", "-C", str(CLIENT), "harness"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return JAR


@dataclass
class Run:
    stdout: str
    returncode: int

    def lines(self, prefix: str) -> list[str]:
        return [line[len(prefix):].strip() for line in self.stdout.splitlines() if line.startswith(prefix)]

    @property
    def logs(self) -> list[str]:
        return self.lines("LOG ")

    def assert_harmless(self) -> None:
        """Nothing escaped into the server, its thread returned at once, the client runs on a daemon."""
        assert self.returncode == 0, self.stdout
        assert "HARNESS_DONE" in self.stdout, self.stdout
        assert self.lines("UNCAUGHT") == [], self.stdout
        assert int(self.lines("ENTRY_RETURNED_MS")[0]) < 500, self.stdout
        assert all(t.endswith("daemon=true") for t in self.lines("THREAD ")), self.stdout


def write_config(server_dir: Path, *, endpoint: str, enabled: bool = True,
                 server_uuid: uuid.UUID | None = None) -> uuid.UUID:
    server_uuid = server_uuid or uuid.uuid4()
    (server_dir / "config").mkdir(parents=True, exist_ok=True)
    (server_dir / "config" / "indexium-telemetry.properties").write_text(
        f"enabled={'true' if enabled else 'false'}\nserver-uuid={server_uuid}\nendpoint={endpoint}\n")
    return server_uuid


def run_harness(server_dir: Path, loader: str, mods: list[str], *, run_ms: int,
                interval_ms: int | None, dist: str = "DEDICATED_SERVER", players: int = 4,
                timeout: float = 60.0) -> Run:
    """One 'server' in ``server_dir`` (its working directory) running the client for ``run_ms``."""
    classpath = [JAR, BUILD / "stubs", BUILD / "harness" / "common", BUILD / "harness" / loader]
    props = [f"-Dharness.mods={','.join(mods)}", f"-Dharness.dist={dist}", f"-Dharness.players={players}"]
    if interval_ms is not None:
        props.append(f"-Dindexium.telemetry.test.intervalMillis={interval_ms}")
    done = subprocess.run(
        ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", *props, "-cp", ":".join(map(str, classpath)),
         "dev.indexium.telemetry.harness.Harness", ENTRY[loader], str(run_ms)],
        cwd=server_dir, capture_output=True, text=True, timeout=timeout)
    return Run(done.stdout + done.stderr, done.returncode)
