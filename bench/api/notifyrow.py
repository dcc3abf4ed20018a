"""Bench row "webhook 202 -> subscriber's POST" (target p95 <= 2 s, issue 36).

Ingest, the release indexer (publishing before the scan, as the other webhook rows: no scan
process here) and the notify role run as processes against FakeGitHub; a subscriber is an
aiohttp receiver on loopback, subscribed to a saved search with no words (every new project
matches it, through the catalogue's own conditions). Each round sends a signed release
webhook for a new mod and times ingest's 202 until the receiver has the POST for it.

    python bench/api/notifyrow.py [--rounds 20]     (this row alone: no catalogue to load)

``run.py`` runs it with the other webhook rows.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import asyncpg

from indexium_db.queries import notify as notify_q
from indexium_devstack import jars
from indexium_devstack import notifykit as kit
from indexium_devstack.embedded import free_port, throwaway
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, ServiceProcess
from timing import summary  # (bench/api/timing.py: the script's folder is on sys.path)

SECRET = "bench-notify-secret"
KEY = "bench-notify-key-of-at-least-32-bytes"
# Repository ids of this row's own: run.py's other rows start their fake GitHubs at the same
# first id on the same database, and a release of a known repository id is that project's.
REPO_IDS = 700_000_000


async def webhook_to_subscriber(env: dict, tmp: Path, rounds: int, summary: Callable[[list[float]], str]) -> str:
    receiver = await kit.Receiver().start()
    async with FakeGitHub() as gh:
        service_env = {**env, "INDEXIUM_WEBHOOK_SECRET": SECRET, "INDEXIUM_PUBLISH_BEFORE_SCAN": "true",
                       "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}",
                       "INDEXIUM_NOTIFY_SECRET_KEY": KEY, "INDEXIUM_NOTIFY_ALLOW_HTTP": "true",
                       "INDEXIUM_NOTIFY_ALLOWED_TARGETS": "127.0.0.1"}
        procs = [ServiceProcess(BY_NAME[name], port=free_port(), env=service_env,
                                log_path=tmp / f"notifyrow-{name}.log") for name in ("ingest", "indexer", "notify")]
        conn = await asyncpg.connect(env["DATABASE_URL"])
        for p in procs:
            p.start()
        try:
            for p in procs:
                await asyncio.to_thread(p.wait_ready, 60)
            await notify_q.create_subscription(conn, limit=10, github_user_id=1, owner_login="bench", kind="search",
                                               format="indexium", target_url=receiver.url("/bench"),
                                               secret_salt=b"b" * 16)
            ingest = next(p for p in procs if p.spec.name == "ingest")
            ms = []
            for i in range(rounds):
                mod_id = f"notifybench{i}"
                jar = jars.fabric_jar(mod_id, "1.0.0", f"Notified {i}", "A mod someone waits for.",
                                      minecraft="~1.20.1")
                release = gh.add_release(gh.add_repo("notifyowner", f"notified-{i}", repo_id=REPO_IDS + i), "v1.0.0",
                                         [(f"{mod_id}.jar", jar)])
                seen = len(receiver.received)
                status = await gh.send_webhook(f"{ingest.url}/webhooks/github", "release",
                                               gh.release_payload(release, action="published"), SECRET)
                accepted = time.time()
                assert status == 202, status
                deadline = time.monotonic() + 30
                while not any(json.loads(r.body)["mod"]["slug"] == mod_id for r in receiver.received[seen:]):
                    if time.monotonic() > deadline:
                        logs = "\n".join(f"--- {p.spec.name} ---\n{p.log_path.read_text()[-3000:]}" for p in procs)
                        raise RuntimeError(f"round {i}: no POST within 30 s\n{logs}")
                    await asyncio.sleep(0.002)
                got = next(r for r in receiver.received[seen:] if json.loads(r.body)["mod"]["slug"] == mod_id)
                ms.append((got.at - accepted) * 1000)
            return f"  {'webhook -> subscriber':24} {summary(ms)}  (target p95 <= 2 s)"
        finally:
            await conn.close()
            for p in procs:
                await asyncio.to_thread(p.stop, 30)
            await receiver.close()


async def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="indexium-bench-notify-") as d:
        tmp = Path(d)
        async with throwaway(tmp, migrate=True) as servers:
            env = {"DATABASE_URL": servers.dsn, "NATS_URL": servers.nats_url, "INDEXIUM_LOG_FORMAT": "json"}
            print(f"webhook 202 -> subscriber's POST ({rounds} releases; ingest, indexer and notify as processes):",
                  flush=True)
            print(await webhook_to_subscriber(env, tmp, rounds, summary), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20)
    sys.exit(asyncio.run(main(parser.parse_args().rounds)))
