"""Bench row "webhook 202 -> invisible on every replica" (target p95 <= 2 s, as release freshness).

Ingest, the release indexer and the GitHub role run as processes against FakeGitHub, beside
two API replicas (the bench's own and a second one started here). One installation holds
``rounds`` mod repositories, registered and backfilled first. Each round caches the mod's
search answer and page on both replicas, sends ``installation_repositories.removed`` for its
repository, and times the 202 until neither replica shows it in search nor serves its page.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp

from indexium_devstack import jars
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, ServiceProcess

SECRET = "bench-visibility-secret"
ID_BASE = 900_000_000
KEEP_LOGS_OVER_MS = 200  # a round this slow keeps the row's process logs (the median is ~20 ms)


async def _wait(check, what: str, timeout: float, logs: Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} after {timeout:.0f} s\n{logs()}")
        await asyncio.sleep(0.05)


async def subscribed(http: aiohttp.ClientSession, url: str, logs: Callable[[], str], timeout: float = 10) -> None:
    """Until the API at ``url`` is connected to NATS (its search index is used only while it
    follows the catalogue's events; before that a replica's search is the SQL path's)."""

    async def connected() -> bool:
        async with http.get(f"{url}/metrics") as resp:
            return "indexium_api_nats_connected 1.0" in await resp.text()

    await _wait(connected, f"API at {url} not subscribed", timeout, logs)


async def webhook_to_invisible(env: dict, tmp: Path, api: str, http: aiohttp.ClientSession, rounds: int,
                               summary: Callable[[list[float]], str]) -> str:
    async with FakeGitHub() as gh:
        _, private_key = gh.generate_app_key()
        service_env = {**env, "INDEXIUM_WEBHOOK_SECRET": SECRET, "INDEXIUM_PUBLISH_BEFORE_SCAN": "true",
                       "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
                       "INDEXIUM_GITHUB_APP_ID": str(gh.app_id), "INDEXIUM_GITHUB_APP_PRIVATE_KEY": private_key,
                       "INDEXIUM_GITHUB_API_URL": gh.api_url, "INDEXIUM_GITHUB_RECONCILE_INTERVAL_SECONDS": "0",
                       "INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND": "1000",
                       "INDEXIUM_GITHUB_BACKFILL_POLL_SECONDS": "0.2"}
        procs = [ServiceProcess(BY_NAME[name], port=free_port(), env=service_env,
                                log_path=tmp / f"visibility-{name}.log")
                 for name in ("ingest", "indexer", "github", "api")]
        for p in procs:
            p.start()

        def logs() -> str:
            return "\n".join(f"--- {p.spec.name} ---\n{p.log_path.read_text()[-2000:]}" for p in procs)

        try:
            for p in procs:
                await asyncio.to_thread(p.wait_ready, 60)
            ingest = next(p for p in procs if p.spec.name == "ingest")
            replicas = [api, next(p for p in procs if p.spec.name == "api").url]
            webhook = f"{ingest.url}/webhooks/github"
            gh.configure_webhook(webhook, SECRET)

            for url in replicas:
                await subscribed(http, url, logs)
            repos = []
            for i in range(rounds):
                mod_id = f"vanish{i}"
                # Ids apart from the other rows' FakeGitHub (its counters start at the same values).
                repo = gh.add_repo("vanisher", f"vanish-{i}", repo_id=ID_BASE + i, owner_id=ID_BASE)
                gh.set_file(repo, "src/main/resources/fabric.mod.json", json.dumps(
                    {"schemaVersion": 1, "id": mod_id, "version": "${version}", "name": f"Vanishing {i}"}))
                gh.add_release(repo, "v1.0.0", [(f"{mod_id}.jar", jars.fabric_jar(
                    mod_id, "1.0.0", f"Quokkavanish {i}", "Soon gone.", minecraft="~1.20.1"))])
                repos.append((repo, mod_id, f"Quokkavanish {i}"))
            inst = gh.add_installation([r for r, _, _ in repos])
            assert await gh.send_webhook(webhook, "installation", gh.installation_payload(inst, "created"),
                                         SECRET) == 202

            async def shown(url: str, mod_id: str, term: str) -> tuple[bool, bool]:
                async with http.get(f"{url}/api/v1/mods", params={"q": term}) as resp:
                    in_search = any(h["slug"] == mod_id for h in (await resp.json())["hits"])
                async with http.get(f"{url}/api/v1/mods/{mod_id}") as resp:
                    await resp.read()
                    return in_search, resp.status == 200

            for _, mod_id, term in repos:
                await _wait(lambda m=mod_id, t=term: _all(shown, replicas, m, t, (True, True)),
                            f"{mod_id} never searchable", 120, logs)
            # Every process of the row, for the collector pauses each spent during a round.
            watched = {"api (bench's)": api, "api (2nd)": replicas[1],
                       **{p.spec.name: p.url for p in procs if p.spec.name != "api"}}
            ms, rounds_seen = [], []
            for repo, mod_id, term in repos:
                for url in replicas:  # both answers cached on both replicas
                    assert await shown(url, mod_id, term) == (True, True)
                inst.repos.remove(repo)
                paused_before = {name: await gc_paused(http, url) for name, url in watched.items()}
                started = time.perf_counter()
                status = await gh.send_webhook(webhook, "installation_repositories",
                                               gh.installation_repositories_payload(inst, removed=[repo]), SECRET)
                assert status == 202, status
                pending, gone_at = list(replicas), []
                while pending:
                    if await shown(pending[0], mod_id, term) == (False, False):
                        pending.pop(0)
                        gone_at.append((time.perf_counter() - started) * 1000)
                        continue
                    if time.perf_counter() - started > 30:
                        raise RuntimeError(f"{mod_id} still shown 30 s after the removal\n{logs()}")
                    await asyncio.sleep(0.005)
                ms.append(gone_at[-1])
                paused = {name: (await gc_paused(http, url) - paused_before[name]) * 1000
                          for name, url in watched.items()}
                rounds_seen.append((gone_at[-1], mod_id, gone_at, paused))
            worst, mod_id, gone_at, paused = max(rounds_seen)
            lines = [f"\nwebhook 202 -> invisible on every replica ({rounds} repositories removed from the App's"
                     f" installation; ingest, indexer, GitHub role and 2 API replicas as processes):",
                     f"  {'webhook 202 -> invisible on every replica':42} {summary(ms)}",
                     f"  slowest round ({mod_id}): the bench's replica at {gone_at[0]:.1f} ms, the 2nd at "
                     f"{gone_at[1]:.1f} ms; collector pauses meanwhile (ms): "
                     + ", ".join(f"{name} {v:.1f}" for name, v in paused.items())]
            if worst > KEEP_LOGS_OVER_MS:  # an outlier: the processes' logs kept for a look
                kept = Path(tempfile.mkdtemp(prefix="indexium-bench-invisible-"))
                for log in tmp.glob("*.log"):
                    shutil.copy(log, kept)
                lines.append(f"  over {KEEP_LOGS_OVER_MS} ms: the row's process logs kept in {kept}")
            return "\n".join(lines)
        finally:
            for p in procs:
                await asyncio.to_thread(p.stop, 30)


async def gc_paused(http: aiohttp.ClientSession, url: str) -> float:
    """Seconds the process at ``url`` has spent in cyclic-collector passes (heap.watch)."""
    async with http.get(f"{url}/metrics") as resp:
        text = await resp.text()
    return sum(float(line.split()[-1]) for line in text.splitlines()
               if line.startswith("indexium_") and "_gc_pause_seconds_sum{" in line)


async def _all(shown, replicas, mod_id, term, expected) -> bool:
    for url in replicas:
        if await shown(url, mod_id, term) != expected:
            return False
    return True
