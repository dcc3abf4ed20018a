"""Scenario 8: kill -9 of the indexer started by `make run` during a burst of 200 webhooks:
the local stack restarts it and all 200 are indexed; SIGTERM then stops every process."""

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys

import asyncpg
import pytest

from indexium_devstack import jars
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, free_port_env

SECRET = "local-stack-secret"


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


async def wait_for(predicate, timeout):
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.2)
    return None


@contextlib.contextmanager
def default_ports_held():
    """Listen on every service's default port that is free, as a developer's own `make run`
    does: the stack under test must not need any of them."""
    held = []
    try:
        for spec in BY_NAME.values():
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", spec.default_port))
                s.listen()
            except OSError:
                s.close()  # taken already (by a running `make run`, say): just as good
                continue
            held.append(s)
        yield
    finally:
        for s in held:
            s.close()


async def test_local_stack_restarts_a_killed_indexer(gh, tmp_path):
    with default_ports_held():
        await _restarts_a_killed_indexer(gh, tmp_path)


async def _restarts_a_killed_indexer(gh, tmp_path):
    env = {**os.environ, "INDEXIUM_WEBHOOK_SECRET": SECRET,
           "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
           "INDEXIUM_PUBLISH_BEFORE_SCAN": "true", "INDEXIUM_LOG_FORMAT": "json"}
    for key in ("NATS_URL", "DATABASE_URL", "DATABASE_READ_URL"):
        env.pop(key, None)  # the stack starts its own embedded servers, as `make run` does
    env.update(free_port_env())  # every service's port, not only the ones started by default
    root = tmp_path / "run"
    stack = subprocess.Popen([sys.executable, "-m", "indexium_devstack", "run", "--root", str(root)],
                             env=env, stdout=open(tmp_path / "stack.log", "wb"), stderr=subprocess.STDOUT)
    try:
        async def state():
            path = root / "state.json"
            return json.loads(path.read_text()) if path.exists() else None

        first = await wait_for(state, 90)
        assert first, (tmp_path / "stack.log").read_text()
        ingest = first["services"]["ingest"]["url"]
        releases = []
        for i in range(200):
            repo = gh.add_repo("stack", f"mod{i}")
            jar = jars.fabric_jar(f"stackmod{i}", "1.0.0", f"Stack Mod {i}", "x", minecraft="~1.20.1")
            releases.append(gh.add_release(repo, "v1.0.0", [(f"stackmod{i}.jar", jar)]))

        async def send(rel):
            return await gh.send_webhook(f"{ingest}/webhooks/github", "release",
                                         gh.release_payload(rel), SECRET, delivery_id=f"s-{rel.id}")

        burst = asyncio.gather(*(send(r) for r in releases))
        await asyncio.sleep(0.3)
        os.kill(first["services"]["indexer"]["pid"], signal.SIGKILL)
        statuses = await burst
        assert statuses == [202] * 200

        async def restarted():
            s = await state()
            return s if s and s["services"]["indexer"]["restarts"] >= 1 else None

        assert await wait_for(restarted, 60), (tmp_path / "stack.log").read_text()

        async def all_indexed():
            conn = await asyncpg.connect(first["database_url"])
            try:
                n = await conn.fetchval("SELECT count(*) FROM webhook_deliveries WHERE outcome = 'indexed'")
                dup = await conn.fetchval("SELECT count(*) FROM (SELECT mod_id, version_number FROM"
                                          " mod_versions GROUP BY 1, 2 HAVING count(*) > 1) d")
            finally:
                await conn.close()
            assert dup == 0
            return n == 200

        assert await wait_for(all_indexed, 120)
    finally:
        # SIGTERM, as a process supervisor stops it (Ctrl-C takes the same path), twice: the
        # second must not cut the shutdown short.
        stack.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.2)
        stack.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(stack.wait, 60)
    assert code == 0, (tmp_path / "stack.log").read_text()[-3000:]
    final = json.loads((root / "state.json").read_text())
    for name, service in final["services"].items():
        assert not _alive(service["pid"]), f"{name} outlived the stack"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
