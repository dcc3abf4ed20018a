"""Every change that hides or shows a mod outside the release indexer reaches every API replica
at once: after the webhook's 202 (or the operator's decision, or a reconciliation pass) the mod
is gone from search, the listing, its page and its versions on both of two API processes within
2 s, although each replica had those answers cached (cache entries live 60 s)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import aiohttp
import pytest

from indexium_devstack import jars
from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess

HIDE_WITHIN_S = 2.0
SHOW_WITHIN_S = 10.0  # showing again may register the repository first (GitHub API reads)


@pytest.fixture
async def replicas(nats_url, database_url, tmp_path):
    env = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_LOG_FORMAT": "json",
           "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0"}
    procs = [ServiceProcess(BY_NAME["api"], port=free_port(), env=env, log_path=tmp_path / f"api{i}.log")
             for i in range(2)]
    for p in procs:
        p.start()
    try:
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in procs))
        async with aiohttp.ClientSession() as http:
            yield Replicas(http, [p.url for p in procs])
    finally:
        for p in procs:
            await asyncio.to_thread(p.stop, 30)


class Replicas:
    def __init__(self, http: aiohttp.ClientSession, urls: list[str]):
        self.http, self.urls = http, urls
        self.timings: dict[str, float] = {}

    async def _get(self, url: str, path: str, **params):
        async with self.http.get(url + path, params=params) as resp:
            body = await resp.json()
            return resp.status, resp.headers.get("X-Cache"), body

    async def seen(self, url: str, slug: str, term: str) -> dict[str, bool]:
        """Where this replica shows the mod: search, the plain listing, its page, its versions."""
        _, _, found = await self._get(url, "/api/v1/mods", q=term)
        _, _, listing = await self._get(url, "/api/v1/mods", limit="100")
        page, _, _ = await self._get(url, f"/api/v1/mods/{slug}")
        vstatus, _, versions = await self._get(url, f"/api/v1/mods/{slug}/versions")
        return {"search": slug in [h["slug"] for h in found["hits"]],
                "listing": slug in [h["slug"] for h in listing["hits"]],
                "page": page == 200,
                "versions": vstatus == 200 and bool(versions)}

    async def cached_everywhere(self, slug: str, term: str, visible: bool) -> None:
        """Each replica answers as expected and now holds those answers in its cache."""
        for url in self.urls:
            for _ in range(2):
                where = await self.seen(url, slug, term)
            assert where == dict.fromkeys(where, visible), (url, where)
            assert (await self._get(url, "/api/v1/mods", q=term))[1] == "HIT"
            if visible:
                assert (await self._get(url, f"/api/v1/mods/{slug}"))[1] == "HIT"

    async def becomes(self, slug: str, term: str, visible: bool, started: float, label: str,
                      within: float) -> float:
        """Poll both replicas until each shows (or hides) the mod everywhere; the elapsed time."""
        pending = list(self.urls)
        while pending:
            where = await self.seen(pending[0], slug, term)
            if where == dict.fromkeys(where, visible):
                pending.pop(0)
                continue
            elapsed = time.monotonic() - started
            assert elapsed < within, f"{label}: {pending[0]} still shows {where} after {elapsed:.2f}s"
            await asyncio.sleep(0.02)
        self.timings[label] = elapsed = time.monotonic() - started
        return elapsed


def lumen_repo(gh, name="alice/lumen", mod_id="lumen"):
    repo = gh.add_repo(name, description="Lights for Minecraft", topics=["lighting"])
    gh.set_file(repo, "src/main/resources/fabric.mod.json",
                '{"schemaVersion": 1, "id": "%s", "version": "${version}", "name": "Lumen"}' % mod_id)
    gh.add_release(repo, "v1.0.0", [(f"{mod_id}-1.0.0.jar", jars.fabric_jar(mod_id, "1.0.0", "Lumen",
                                                                            "Dynamic glowing lights."))])
    return repo


def repository_payload(gh, repo, inst, action) -> dict:
    return {"action": action, "repository": gh.repo_json(repo), "installation": {"id": inst.id},
            "sender": {"login": repo.owner.login, "id": repo.owner.id}}


async def registered(gh, stack, db, eventually, repo):
    inst = gh.add_installation([repo])
    assert await stack.send("installation", gh.installation_payload(inst, "created")) == 202
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id),
                            timeout=30)
    return inst


async def test_every_github_path_hides_and_shows_on_both_replicas(gh, stack, db, eventually, replicas):
    repo = lumen_repo(gh)
    inst = await registered(gh, stack, db, eventually, repo)
    slug, term = "lumen", "lumen"

    async def step(label, visible, event, payload, before=None):
        await replicas.cached_everywhere(slug, term, not visible)
        if before is not None:
            before()
        started = time.monotonic()
        assert await stack.send(event, payload) == 202
        await replicas.becomes(slug, term, visible, started, label, HIDE_WITHIN_S if not visible else SHOW_WITHIN_S)

    def drop():
        inst.repos.remove(repo)

    def add_back():
        inst.repos.append(repo)

    await step("installation_repositories.removed", False, "installation_repositories",
               gh.installation_repositories_payload(inst, removed=[repo]), before=drop)
    await step("installation_repositories.added", True, "installation_repositories",
               gh.installation_repositories_payload(inst, added=[repo]), before=add_back)

    def suspend():
        inst.suspended_at = gh.now()

    def unsuspend():
        inst.suspended_at = None

    await step("installation.suspend", False, "installation", gh.installation_payload(inst, "suspend"),
               before=suspend)
    await step("installation.unsuspend", True, "installation", gh.installation_payload(inst, "unsuspend"),
               before=unsuspend)
    await step("installation.deleted", False, "installation", gh.installation_payload(inst, "deleted"))
    await step("installation.created", True, "installation", gh.installation_payload(inst, "created"))

    def privatize():
        repo.private = True

    def publicize():
        repo.private = False

    await step("repository.privatized", False, "repository", repository_payload(gh, repo, inst, "privatized"),
               before=privatize)
    await step("repository.publicized", True, "repository", repository_payload(gh, repo, inst, "publicized"),
               before=publicize)

    # Archived: read-only on GitHub, its releases still download, so the mod stays shown; the
    # event is applied (and announced) without hiding anything.
    repo.archived = True
    await replicas.cached_everywhere(slug, term, True)
    assert await stack.send("repository", repository_payload(gh, repo, inst, "archived"),
                            delivery_id="d-archived") == 202
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'applied' FROM webhook_deliveries WHERE delivery_id = 'd-archived'"))
    for url in replicas.urls:
        assert await replicas.seen(url, slug, term) == dict.fromkeys(("search", "listing", "page", "versions"),
                                                                      True)

    # Transferred to another owner: the page follows on both replicas (links, owner) at once.
    for url in replicas.urls:
        _, _, card = await replicas._get(url, f"/api/v1/mods/{slug}")
        assert card["links"]["sources"].endswith("/alice/lumen")
    del gh.state.repos[repo.full_name.lower()]
    repo.owner = gh.state.user("lightworks")
    gh.state.repos[repo.full_name.lower()] = repo
    started = time.monotonic()
    assert await stack.send("repository", repository_payload(gh, repo, inst, "transferred")) == 202
    for url in replicas.urls:
        while not (await replicas._get(url, f"/api/v1/mods/{slug}"))[2]["links"]["sources"].endswith(
                "/lightworks/lumen"):
            assert time.monotonic() - started < HIDE_WITHIN_S, f"{url} still shows the old owner"
            await asyncio.sleep(0.02)

    # A push with a new description: the card's summary follows on both replicas at once.
    repo.description = "Coloured lights that follow the player."
    started = time.monotonic()
    assert await stack.send("push", {"ref": "refs/heads/main", "before": "a" * 40, "after": "b" * 40,
                                     "repository": gh.repo_json(repo), "installation": {"id": inst.id},
                                     "commits": [{"id": "b" * 40, "added": [], "modified": ["README.md"],
                                                  "removed": []}]}) == 202
    for url in replicas.urls:
        while (await replicas._get(url, f"/api/v1/mods/{slug}"))[2]["summary"] != repo.description:
            assert time.monotonic() - started < HIDE_WITHIN_S, f"{url} still shows the old summary"
            await asyncio.sleep(0.02)

    await step("repository.deleted", False, "repository", repository_payload(gh, repo, inst, "deleted"))
    print("webhook 202 -> visible/invisible on both replicas:",
          {k: round(v, 3) for k, v in replicas.timings.items()})


async def test_operator_decision_and_reconciliation_reach_both_replicas(
        gh, stack, db, eventually, replicas, nats_url, database_url):
    repo = lumen_repo(gh)
    inst = await registered(gh, stack, db, eventually, repo)
    slug, term = "lumen", "lumen"
    from indexium_indexer.github.app import RECONCILER

    # Reconciliation: the repository went private and the event never arrived.
    await replicas.cached_everywhere(slug, term, True)
    repo.private = True
    started = time.monotonic()
    assert await stack.role[RECONCILER].maybe_run(force=True) is not None
    await replicas.becomes(slug, term, False, started, "reconcile.repository", HIDE_WITHIN_S)
    repo.private = False
    await stack.role[RECONCILER].maybe_run(force=True)
    await replicas.becomes(slug, term, True, time.monotonic(), "reconcile.repository shown", SHOW_WITHIN_S)

    # Reconciliation: removed from the installation, and that event never arrived.
    await replicas.cached_everywhere(slug, term, True)
    inst.repos.remove(repo)
    started = time.monotonic()
    await stack.role[RECONCILER].maybe_run(force=True)
    await replicas.becomes(slug, term, False, started, "reconcile.removed", HIDE_WITHIN_S)
    inst.repos.append(repo)
    await stack.role[RECONCILER].maybe_run(force=True)
    await replicas.becomes(slug, term, True, time.monotonic(), "reconcile.added", SHOW_WITHIN_S)

    # An operator rejects the only version: gone from both replicas (VersionReviewed).
    await replicas.cached_everywhere(slug, term, True)
    version_id = await db.fetchval("SELECT v.id FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                                   " WHERE m.slug = $1", slug)
    env = {**os.environ, "NATS_URL": nats_url, "DATABASE_URL": database_url}
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "indexium_ops", "quarantine", "reject",
                                                    str(version_id), "--by", "operator"],
                                   env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # Measured from the command's exit (it commits, then publishes): its own start-up is not the API's.
    await replicas.becomes(slug, term, False, time.monotonic(), "quarantine.reject", HIDE_WITHIN_S)
    await replicas.cached_everywhere(slug, term, False)
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "indexium_ops", "quarantine", "approve",
                                                    str(version_id), "--by", "operator"],
                                   env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    await replicas.becomes(slug, term, True, time.monotonic(), "quarantine.approve", HIDE_WITHIN_S)
    print("reconciliation / operator -> both replicas:", {k: round(v, 3) for k, v in replicas.timings.items()})
