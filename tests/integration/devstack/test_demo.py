"""`make run DEMO=1` as a new user runs it: the GitHub App role runs against the stand-in, so the
dashboard's "Check again" is read and acted on; the mod page shows the repository's README and
its repository link answers; the
operator CLI beside it uses the stack; SIGTERM leaves no process behind."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys

import aiohttp
import asyncpg

from indexium_devstack.procs import free_port_env


async def _until(check, timeout: float):
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if value := await check():
            return value
        await asyncio.sleep(0.25)
    return None


async def test_the_demo_runs_the_github_role_and_check_again_is_acted_on(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NATS_URL", "DATABASE_URL", "DATABASE_READ_URL", "INDEXIUM_GITHUB_APP_ID")}
    env.update(free_port_env())
    root = tmp_path / ".run"  # where `make run` keeps it, beside the checkout the CLI runs in
    log = tmp_path / "stack.log"
    stack = subprocess.Popen([sys.executable, "-m", "indexium_devstack", "run", "--demo", "--root", str(root)],
                             env=env, cwd=tmp_path, stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    try:
        async def state():
            path = root / "state.json"
            return json.loads(path.read_text()) if path.exists() else None

        started = await _until(state, 120)
        assert started and "github" in started["services"], log.read_text()[-3000:]
        api = started["services"]["api"]["url"]

        async def role_registered():  # the demo's installation events, read by the role
            conn = await asyncpg.connect(started["database_url"])
            try:
                return await conn.fetchval(
                    "SELECT count(*) FROM github_repositories WHERE state = 'registered'") == 6
            finally:
                await conn.close()

        assert await _until(role_registered, 90), log.read_text()[-3000:]
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(f"{api}/auth/github/login") as resp:  # the stand-in approves at once
                page = await resp.text()
            assert resp.url.path == "/dashboard", page[:500]
            token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
            repo_id = re.search(r'name="repository_id" value="(\d+)"', page).group(1)
            async with http.post(f"{api}/dashboard/check", data={"csrf_token": token, "repository_id": repo_id},
                                 allow_redirects=False) as resp:
                assert resp.status == 303 and f"checked={repo_id}" in resp.headers["Location"]

            async def acted_on():
                conn = await asyncpg.connect(started["database_url"])
                try:
                    return await conn.fetchval("SELECT outcome FROM webhook_deliveries"
                                               " WHERE delivery_id LIKE $1", f"catch-up:{repo_id}:%")
                finally:
                    await conn.close()

            assert await _until(acted_on, 30) == "applied"
            async def readme_shown():  # the role read the demo repository's README (issue 35)
                async with http.get(f"{api}/mods/lumenlanterns") as resp:
                    return "<h3>Installing</h3>" in await resp.text()

            assert await _until(readme_shown, 30)
            async with http.get(f"{api}/v2/project/lumenlanterns") as resp:
                source = (await resp.json())["source_url"]
            async with http.get(source) as resp:
                assert resp.status == 200 and "lumen-lanterns" in await resp.text()
        ops = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "indexium_ops", "quarantine", "list"],
                                      cwd=tmp_path, env=env, capture_output=True, text=True)
        assert ops.returncode == 0 and "lumenlanterns" in ops.stdout, ops.stderr
    finally:
        stack.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(stack.wait, 60)
    output = log.read_text()
    assert code == 0 and "[warning" not in output, output[-3000:]
    final = json.loads((root / "state.json").read_text())
    assert final["running"] is False
    for name, service in final["services"].items():
        try:
            os.kill(service["pid"], 0)
        except ProcessLookupError:
            continue
        raise AssertionError(f"{name} outlived the stack")
