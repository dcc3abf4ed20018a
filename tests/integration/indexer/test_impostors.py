"""Impostor repositories against the whole stack: ingest, the release indexer, the scan stage, the
GitHub role and the API, each its own process, on real NATS JetStream and PostgreSQL, with
webhooks signed and sent the way GitHub sends them (FakeGitHub).

One stack for the module; its cases build on each other in order: the original mod, the exact
bytes republished by another owner (the hostile probe), the same mod id in another owner's jar, a
fork, then the original transferred and renamed, which must stay the same project throughout.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import time

import aiohttp
import asyncpg
import nats
import pytest

from indexium_devstack import jars
from indexium_devstack.embedded import EmbeddedNats, free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_ops import cli
from indexium_platform import natsutil
from indexium_platform.settings import load

SECRET = "impostor-secret"
ALMANAC = jars.fabric_jar("harvestalmanac", "1.0.0", "Harvest Almanac", "Seasons and crops.")
SHA1 = hashlib.sha1(ALMANAC).hexdigest()
WAIT_S = 60.0  # generous: the machine's two cores are shared


class Stack:
    def __init__(self, gh: FakeGitHub, database_url: str, nats_url: str, procs: dict[str, ServiceProcess],
                 http: aiohttp.ClientSession):
        self.gh, self.database_url, self.nats_url, self.procs, self.http = gh, database_url, nats_url, procs, http
        self._deliveries = 0

    @property
    def api(self) -> str:
        return self.procs["api"].url

    async def send(self, event: str, payload: dict) -> None:
        self._deliveries += 1
        status = await self.gh.send_webhook(f"{self.procs['ingest'].url}/webhooks/github", event, payload, SECRET,
                                            delivery_id=f"impostor-{self._deliveries}")
        assert status == 202

    async def release(self, repo, tag: str, name: str, content: bytes) -> None:
        await self.send("release", self.gh.release_payload(self.gh.add_release(repo, tag, [(name, content)])))

    async def fetchval(self, sql: str, *args):
        conn = await asyncpg.connect(self.database_url)
        try:
            return await conn.fetchval(sql, *args)
        finally:
            await conn.close()

    async def version(self, full_name: str, tag: str):
        """(status, last decision's reason) of a version, once its scan (or a hold) settled it."""
        deadline = time.monotonic() + WAIT_S
        while True:
            conn = await asyncpg.connect(self.database_url)
            try:
                row = await conn.fetchrow(
                    """SELECT v.status, (SELECT d.reason FROM quarantine_decisions d WHERE d.version_id = v.id
                                         ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS reason
                       FROM mod_versions v JOIN mods m ON m.id = v.mod_id
                       WHERE m.repo_full_name = $1 AND v.version_number = $2""", full_name, tag)
            finally:
                await conn.close()
            if row is not None and row["status"] != "pending_scan":
                return tuple(row)
            assert time.monotonic() < deadline, f"{full_name} {tag} never settled: {row and tuple(row)}"
            await asyncio.sleep(0.2)

    async def get(self, path: str, **params):
        async with self.http.get(self.api + path, params=params) as resp:
            return resp.status, (await resp.json()) if resp.content_type == "application/json" else None

    async def post(self, path: str, body: dict):
        async with self.http.post(self.api + path, json=body) as resp:
            return resp.status, await resp.json()

    async def eventually(self, probe, expected):
        deadline = time.monotonic() + WAIT_S
        while (got := await probe()) != expected:
            assert time.monotonic() < deadline, f"{got!r} never became {expected!r}"
            await asyncio.sleep(0.2)


@pytest.fixture(scope="module")
async def nats_for_module(tmp_path_factory):
    external = os.environ.get("NATS_URL")
    if external:
        yield external
        return
    server = EmbeddedNats(tmp_path_factory.mktemp("nats")).start()
    yield server.url
    server.stop()


@pytest.fixture(scope="module")
async def stack(cloned_database, nats_for_module, tmp_path_factory):
    logs = tmp_path_factory.mktemp("impostors")
    nc = await nats.connect(nats_for_module)
    js = nc.jetstream()
    for name in ("INGEST", "VERSIONS", "DEADLETTER", "TELEMETRY"):  # an external server: a fresh start
        try:
            await js.delete_stream(name)
        except Exception:
            pass
    await natsutil.ensure_all(js)
    await nc.drain()
    async with cloned_database(f"indexium_impostors_{os.getpid()}", replace=True) as dsn, FakeGitHub() as gh:
        _, key = gh.generate_app_key()
        env = {"NATS_URL": nats_for_module, "DATABASE_URL": dsn, "INDEXIUM_WEBHOOK_SECRET": SECRET,
               "INDEXIUM_DOWNLOAD_HOSTS": f"{gh.github_host},{gh.cdn_host}", "INDEXIUM_LOG_FORMAT": "json",
               "INDEXIUM_API_CACHE_TTL_SECONDS": "0", "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0",
               "INDEXIUM_GITHUB_APP_ID": str(gh.app_id), "INDEXIUM_GITHUB_APP_PRIVATE_KEY": key,
               "INDEXIUM_GITHUB_API_URL": gh.api_url, "INDEXIUM_GITHUB_RECONCILE_INTERVAL_SECONDS": "0",
               "INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND": "1000",
               "INDEXIUM_GITHUB_BACKFILL_POLL_SECONDS": "0.2", "INDEXIUM_GITHUB_MUTATION_INTERVAL_SECONDS": "0",
               "INDEXIUM_REDELIVER_INTERVAL_SECONDS": "0"}
        procs = {name: ServiceProcess(BY_NAME[name], port=free_port(), env=env, log_path=logs / f"{name}.log")
                 for name in ("ingest", "indexer", "scan", "api", "github")}
        for p in procs.values():
            p.start()
        try:
            await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 90) for p in procs.values()))
            gh.configure_webhook(f"{procs['ingest'].url}/webhooks/github", SECRET)
            async with aiohttp.ClientSession() as http:
                yield Stack(gh, dsn, nats_for_module, procs, http)
        finally:
            codes = {name: await asyncio.to_thread(p.stop, 30) for name, p in procs.items()}
            for name, p in procs.items():
                if codes[name] != 0 or "unhandled_error" in p.log_path.read_text(errors="replace"):
                    print(f"--- {name} ---\n{p.log_path.read_text(errors='replace')[-3000:]}")
        assert codes == dict.fromkeys(procs, 0), codes


def lookups_answer(stack: Stack, sha1: str):
    """Which project the hash lookup and the update check answer with."""
    async def probe():
        status, found = await stack.get(f"/v2/version_file/{sha1}")
        ustatus, update = await stack.post(f"/v2/version_file/{sha1}/update", {"loaders": ["fabric"]})
        return (found["project_id"] if status == 200 else None,
                (update["project_id"], update["version_number"]) if ustatus == 200 else None)
    return probe


async def test_the_original_is_installed_and_indexed(stack):
    repo = stack.gh.add_repo("fieldnotes", "harvest-almanac")
    stack.gh.add_release(repo, "1.0.0", [("harvest-almanac-1.0.0.jar", ALMANAC)])
    stack.original = repo
    stack.installation = stack.gh.add_installation([repo])
    await stack.send("installation", stack.gh.installation_payload(stack.installation, "created"))  # backfilled
    assert await stack.version("fieldnotes/harvest-almanac", "1.0.0") == ("public", None)
    stack.project = await stack.fetchval("SELECT public_id FROM mods WHERE slug = 'harvestalmanac'")
    await stack.eventually(lookups_answer(stack, SHA1), (stack.project, (stack.project, "1.0.0")))


async def operator(stack: Stack, action: str, version_id: str, reason: str = "") -> int:
    settings = load(cli.Settings, {"NATS_URL": stack.nats_url, "DATABASE_URL": stack.database_url})
    return await cli.quarantine(settings, argparse.Namespace(action=action, id=version_id, by="operator",
                                                             reason=reason, limit=100, all=False))


async def test_the_same_bytes_from_another_owner_never_answer_a_lookup(stack, capsys):
    # The hostile probe: mallory republishes the exact jar, under a tag that sorts after the original's.
    await stack.release(stack.gh.add_repo("mallory", "almanac-plus"), "9.9.9", "almanac-plus.jar", ALMANAC)
    status, reason = await stack.version("mallory/almanac-plus", "9.9.9")
    assert status == "quarantined"
    assert "re-upload: almanac-plus.jar has the bytes first published by fieldnotes/harvest-almanac" in reason
    # Operators see it (indexium_ops quarantine show) and cannot approve it.
    copy = await stack.fetchval("SELECT v.id::text FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                                " WHERE m.repo_full_name = 'mallory/almanac-plus'")
    capsys.readouterr()
    assert await operator(stack, "show", copy) == 0
    assert "held: re-upload: almanac-plus.jar has the bytes first published by fieldnotes/harvest-almanac" \
        in capsys.readouterr().out
    assert await operator(stack, "approve", copy) == 1
    assert "can only be rejected" in capsys.readouterr().err
    assert await lookups_answer(stack, SHA1)() == (stack.project, (stack.project, "1.0.0"))
    _, v1 = await stack.get(f"/api/v1/versions/by-hash/{SHA1}")
    assert v1["mod"] == "harvestalmanac"
    _, hits = await stack.get("/v2/search", query="almanac")
    assert [h["project_id"] for h in hits["hits"]] == [stack.project]


async def test_the_same_mod_id_from_another_owner_is_held_for_review(stack):
    reborn = jars.fabric_jar("harvestalmanac", "2.0.0", "Harvest Almanac", "Seasons, crops and secrets.")
    await stack.release(stack.gh.add_repo("mallory", "almanac-reborn"), "2.0.0", "reborn.jar", reborn)
    assert await stack.version("mallory/almanac-reborn", "2.0.0") == (
        "quarantined", "claims the mod id harvestalmanac of fieldnotes/harvest-almanac")
    assert (await stack.get("/api/v1/mods/harvestalmanac-mallory"))[0] == 404
    assert await lookups_answer(stack, hashlib.sha1(reborn).hexdigest())() == (None, None)  # nothing public


async def test_a_fork_is_held_then_approved_as_a_separate_project_that_says_it_is_a_fork(stack, monkeypatch):
    fork = stack.gh.add_repo("bob", "harvest-almanac", fork=True)
    continued = jars.fabric_jar("harvestalmanac", "3.0.0", "Harvest Almanac", "Maintained again.")
    await stack.release(fork, "3.0.0", "continued.jar", continued)
    status, reason = await stack.version("bob/harvest-almanac", "3.0.0")
    assert (status, reason) == ("quarantined", "claims the mod id harvestalmanac of fieldnotes/harvest-almanac")
    assert await stack.fetchval("SELECT fork FROM mods WHERE repo_full_name = 'bob/harvest-almanac'") is True
    version_id = await stack.fetchval("SELECT v.id::text FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                                      " WHERE m.repo_full_name = 'bob/harvest-almanac'")
    assert await operator(stack, "approve", version_id, "a maintained continuation") == 0

    async def card():
        status, body = await stack.get("/api/v1/mods/harvestalmanac-bob")
        return (status, body and body["fork"], body and body["name"])
    # A separate project: its own slug, and never the original's name.
    await stack.eventually(card, (200, True, "Harvest Almanac (bob)"))
    original = (await stack.get("/api/v1/mods/harvestalmanac"))[1]
    assert (original["fork"], original["name"]) == (False, "Harvest Almanac")
    fork_project = await stack.fetchval("SELECT public_id FROM mods WHERE repo_full_name = 'bob/harvest-almanac'")
    await stack.eventually(lookups_answer(stack, hashlib.sha1(continued).hexdigest()),
                           (fork_project, (fork_project, "3.0.0")))
    # The original's bytes and update check stay the original's: no crossing to the fork's 3.0.0.
    assert await lookups_answer(stack, SHA1)() == (stack.project, (stack.project, "1.0.0"))


async def test_a_transferred_then_renamed_original_keeps_its_project(stack):
    repo, gh = stack.original, stack.gh

    async def moved(owner: str | None, name: str | None, action: str) -> None:
        del gh.state.repos[repo.full_name.lower()]
        if owner:
            repo.owner = gh.state.user(owner, type="Organization")
        if name:
            repo.name = name
        gh.state.repos[repo.full_name.lower()] = repo
        await stack.send("repository", {"action": action, "repository": gh.repo_json(repo),
                                        "installation": {"id": stack.installation.id},
                                        "sender": {"login": "fieldnotes", "id": 1}})
        await stack.eventually(lambda: stack.fetchval("SELECT repo_full_name FROM mods WHERE slug = 'harvestalmanac'"),
                               repo.full_name)

    await moved("almanac-org", None, "transferred")
    newer = jars.fabric_jar("harvestalmanac", "1.1.0", "Harvest Almanac", "Seasons and crops.")
    await stack.release(repo, "1.1.0", "harvest-almanac-1.1.0.jar", newer)
    assert await stack.version("almanac-org/harvest-almanac", "1.1.0") == ("public", None)
    await stack.eventually(lookups_answer(stack, SHA1), (stack.project, (stack.project, "1.1.0")))

    await moved(None, "almanac", "renamed")
    newest = jars.fabric_jar("harvestalmanac", "1.2.0", "Harvest Almanac", "Seasons and crops.")
    await stack.release(repo, "1.2.0", "almanac-1.2.0.jar", newest)
    assert await stack.version("almanac-org/almanac", "1.2.0") == ("public", None)
    await stack.eventually(lookups_answer(stack, SHA1), (stack.project, (stack.project, "1.2.0")))
    assert await stack.fetchval("SELECT count(*) FROM mods WHERE slug = 'harvestalmanac'") == 1
    assert await stack.fetchval("SELECT state FROM mod_id_claims c JOIN mods m ON m.id = c.mod_id"
                                " WHERE m.slug = 'harvestalmanac'") == "holder"
