"""The App's events -> installation and repository state, registrations, visibility, cards.

Network first, then one short transaction: GitHub is read (token, contents, releases)
before a connection is taken, so a slow API never holds PostgreSQL. Every handler is
idempotent and order-tolerant: state changes carry the event's ``received_at`` and an
older event never undoes a newer one; visibility is recomputed from flags, not toggled.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import asyncpg
import msgspec
from nats.js import JetStreamContext

from indexium_contracts import github, ingest
from indexium_db.queries import github as github_q
from indexium_db.queries import mods as mods_q
from indexium_github import GitHubClient, GitHubError, NotFound
from indexium_platform import logs

from . import card
from .announce import Announcer
from .metrics import GithubMetrics
from .probe import Prober, is_manifest_path, source_record
from .readme import Readmes

log = logs.get(__name__)


def manifests_after(commits: list[github.PushCommit]) -> list[str]:
    """Manifest paths that exist after the push (commits are in order; the last word wins)."""
    state: dict[str, bool] = {}
    for commit in commits:
        for path in (*commit.added, *commit.modified):
            state[path] = True
        for path in commit.removed:
            state[path] = False
    return sorted(p for p, present in state.items() if present and is_manifest_path(p))


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


class Onboarding:
    def __init__(self, pool: asyncpg.Pool, client: GitHubClient, prober: Prober, metrics: GithubMetrics,
                 backfill_wake: asyncio.Event | None = None, js: JetStreamContext | None = None):
        self._pool, self._client, self._prober, self._metrics = pool, client, prober, metrics
        self._wake = backfill_wake
        announcer = Announcer(pool, js)
        self._announce = announcer.mods_changed  # after each commit: API caches follow
        self.readmes = Readmes(pool, client, announcer)

    # ---- installation -------------------------------------------------------------------------
    async def installation(self, ev: ingest.InstallationReceived) -> str:
        hook, at = ev.webhook, _time(ev.received_at)
        inst, account = hook.installation, hook.installation.account
        state = {"deleted": "deleted", "suspend": "suspended"}.get(hook.action, "active")
        if hook.action not in ("created", "deleted", "suspend", "unsuspend", "new_permissions_accepted"):
            return "ignored"
        async with self._pool.acquire() as conn, conn.transaction():
            applied = await github_q.upsert_installation(
                conn, inst.id, state=state, account_id=account.id if account else None,
                account_login=account.login if account else None, account_type=account.type if account else None,
                event_at=at,
            )
            if not applied:
                return "stale"
            repo_ids = [row["github_repo_id"] for row in await github_q.repositories_of(conn, inst.id)]
            for repo_id in repo_ids:
                await github_q.sync_visibility(conn, repo_id)
                if hook.action == "unsuspend":
                    await github_q.request_catch_up(conn, repo_id)
        await self._announce(repo_ids, f"installation.{hook.action}")
        if state != "active":
            return "applied"
        # created / unsuspend: the installation's repositories, in full, from the API.
        repos = await self._installation_repositories(inst.id)
        for repo in repos:
            await self.register(repo, inst.id, at, cause=f"installation.{hook.action}")
        self._wake_backfill()
        return "applied"

    async def _installation_repositories(self, installation_id: int, *, reserve: int = 0) -> list[github.Repository]:
        out: list[github.Repository] = []
        async for page in self._client.paginate("/installation/repositories", installation_id=installation_id,
                                                op="installation_repositories", reserve=reserve):
            data = page.json()
            out += [msgspec.convert(r, github.Repository) for r in data.get("repositories", [])]
        return out

    async def reconcile_membership(self, installation_id: int, *, reserve: int = 0) -> tuple[int, int]:
        """Apply ``installation_repositories`` events that never arrived: the installation's
        repositories as GitHub lists them now (conditional pages: unchanged costs 304s) against
        ours. Newly listed ones are registered, ones no longer listed are marked removed (their
        mods hidden, kept). Returns (added, removed). A listing error raises before anything
        changes, so a failed page never removes a repository."""
        listed = {repo.id: repo for repo in await self._installation_repositories(installation_id, reserve=reserve)}
        now = datetime.now(UTC)
        async with self._pool.acquire() as conn:
            known = {r["github_repo_id"]: r for r in await github_q.repositories_of(conn, installation_id)}
        added = [repo for rid, repo in listed.items() if rid not in known or known[rid]["removed"]]
        gone = [rid for rid, row in known.items() if rid not in listed and not row["removed"] and not row["deleted"]]
        for repo in added:
            await self.register(repo, installation_id, now, cause="reconcile.added")
        async with self._pool.acquire() as conn, conn.transaction():
            for rid in gone:
                await github_q.set_flags(conn, rid, removed=True, event_at=now)
                await github_q.sync_visibility(conn, rid)
        await self._announce(gone, "reconcile.removed")
        if added:
            self._wake_backfill()
        return len(added), len(gone)

    async def installation_repositories(self, ev: ingest.InstallationRepositoriesReceived) -> str:
        hook, at = ev.webhook, _time(ev.received_at)
        inst = hook.installation
        async with self._pool.acquire() as conn, conn.transaction():
            await github_q.upsert_installation(conn, inst.id, account_id=inst.account.id if inst.account else None,
                                            account_login=inst.account.login if inst.account else None)
            removed = []
            for gone in hook.repositories_removed:
                row = await github_q.get_repository(conn, gone.id)
                if row is not None and row["installation_id"] != inst.id:
                    continue  # transferred to another installation since: not this one's to remove
                await github_q.set_flags(conn, gone.id, removed=True, event_at=at)
                await github_q.sync_visibility(conn, gone.id)
                removed.append(gone.id)
        await self._announce(removed, "installation_repositories.removed")
        for added in hook.repositories_added:
            try:
                resp = await self._client.get(f"/repos/{added.full_name}", installation_id=inst.id,
                                              op="get_repository")
            except NotFound:
                continue  # removed again (or deleted) before we got here
            await self.register(resp.decode(github.Repository), inst.id, at,
                                cause="installation_repositories.added")
        self._wake_backfill()
        return "applied"

    # ---- registration ----------------------------------------------------------------------------
    async def register(self, repo: github.Repository, installation_id: int, at: datetime | None,
                       *, cause: str = "registered") -> None:
        """Record the repository, and decide (once) whether it is a mod (a mod it was is shown
        again: ``cause`` says why, in the ``ModChanged`` announcing it)."""
        async with self._pool.acquire() as conn:
            row = await github_q.get_repository(conn, repo.id)
        registered = row is not None and row["state"] == "registered"  # a mod stays a mod
        evaluation, reason = None, None
        if repo.private:
            reason = "private repository"
        elif not registered:
            try:
                evaluation = await self._prober.evaluate(repo, installation_id)
            except GitHubError as exc:
                if exc.retryable:
                    raise
                reason = f"could not read the repository (HTTP {exc.status})"
        async with self._pool.acquire() as conn, conn.transaction():
            await github_q.upsert_repository(
                conn, github_repo_id=repo.id, installation_id=installation_id, full_name=repo.full_name,
                default_branch=repo.default_branch, description=repo.description, homepage=repo.homepage,
                topics=list(repo.topics), private=repo.private, archived=repo.archived,
            )
            await github_q.set_flags(conn, repo.id, removed=False, deleted=False, event_at=at)
            if evaluation is not None:
                await github_q.set_evaluation(
                    conn, repo.id, state="registered" if evaluation.registered else "skipped",
                    skip_reason=evaluation.reason, manifest_source=evaluation.source,
                )
                self._metrics.evaluations.labels("registered" if evaluation.registered else "skipped").inc()
            elif not registered:
                await github_q.set_evaluation(conn, repo.id, state="skipped", skip_reason=reason, manifest_source=None)
            else:
                await github_q.request_catch_up(conn, repo.id)  # back again: catch up on what we missed
            await github_q.sync_visibility(conn, repo.id)
        await self._announce([repo.id], cause)
        is_mod = registered or bool(evaluation and evaluation.registered)
        log.info("repository_evaluated", repo=repo.full_name, registered=is_mod,
                 reason=evaluation.reason if evaluation else reason)
        if is_mod and not repo.private:
            await self.readmes.quietly(repo.id, repo.full_name, installation_id, repo.default_branch)

    async def catch_up(self, ev: ingest.CatchUpRequested) -> str:
        """An author's "Check again": a mod's releases are read again (the backfill queue); a
        repository that is not a mod yet is evaluated again, if the installation still lists it."""
        async with self._pool.acquire() as conn:
            row = await github_q.get_repository(conn, ev.github_repo_id)
            registered = row is not None and row["state"] == "registered"
            if registered:
                await github_q.request_catch_up(conn, ev.github_repo_id)
        if registered:
            self._wake_backfill()
            if not row["private"]:
                await self.readmes.quietly(ev.github_repo_id, row["full_name"], row["installation_id"],
                                           row["default_branch"], cause="catch_up")
            return "applied"
        await self._ensure_installation(ev.installation_id)
        repos = await self._installation_repositories(ev.installation_id)
        repo = next((r for r in repos if r.id == ev.github_repo_id), None)
        if repo is None:
            return "ignored"  # not (or no longer) in that installation
        await self.register(repo, ev.installation_id, _time(ev.received_at))
        self._wake_backfill()
        return "applied"

    def _wake_backfill(self) -> None:
        if self._wake is not None:
            self._wake.set()

    # ---- repository --------------------------------------------------------------------------------
    async def repository(self, ev: ingest.RepositoryReceived) -> str:
        hook, at = ev.webhook, _time(ev.received_at)
        repo = hook.repository
        async with self._pool.acquire() as conn:
            row = await github_q.get_repository(conn, repo.id)
            has_mod = await github_q.mod_for_repo(conn, repo.id) is not None
        inst_id = hook.installation.id if hook.installation else (row["installation_id"] if row else None)
        if row is None:
            if hook.action in ("created", "publicized", "transferred") and inst_id is not None:
                await self._ensure_installation(inst_id)
                await self.register(repo, inst_id, at, cause=f"repository.{hook.action}")
                self._wake_backfill()
                return "applied"
            if not has_mod or hook.action not in ("renamed", "transferred"):
                return "ignored"
        flags = {"deleted": {"deleted": True}, "privatized": {"private": True},
                 "publicized": {"private": False}, "archived": {"archived": True},
                 "unarchived": {"archived": False}}.get(hook.action)
        async with self._pool.acquire() as conn, conn.transaction():
            if hook.action in ("renamed", "transferred", "edited"):
                await mods_q.update_repository(conn, repo.id, full_name=repo.full_name,
                                               default_branch=repo.default_branch,
                                               owner_id=repo.owner.id, owner_login=repo.owner.login,
                                               repo_url=repo.page_url, fork=repo.fork)
                await github_q.rename_repository(conn, repo.id, repo.full_name)
            if row is not None and flags is not None:
                if not await github_q.set_flags(conn, repo.id, event_at=at, **flags):
                    return "stale"
                await github_q.sync_visibility(conn, repo.id)
        if row is None:
            await self._announce([repo.id], f"repository.{hook.action}")  # a mod whose row was lost
            return "applied"
        if hook.action == "publicized" and row["state"] != "registered":
            # Skipped as private before; register announces the mod itself, with this cause.
            await self.register(repo, row["installation_id"], at, cause=f"repository.{hook.action}")
            self._wake_backfill()
            return "applied"
        if hook.action in ("renamed", "transferred", "edited") and inst_id is not None:
            await self._store_metadata(repo, inst_id)
            await self.refresh_card(repo, inst_id, row)
        await self._announce([repo.id], f"repository.{hook.action}")  # card, links, owner, visibility
        return "applied"

    async def _ensure_installation(self, installation_id: int) -> None:
        async with self._pool.acquire() as conn:
            await github_q.upsert_installation(conn, installation_id)

    async def _store_metadata(self, repo: github.Repository, installation_id: int) -> None:
        """What the event says about the repository now (a transfer may bring another installation,
        whose state then decides whether the mod is shown)."""
        async with self._pool.acquire() as conn, conn.transaction():
            await github_q.upsert_installation(conn, installation_id)
            await github_q.upsert_repository(
                conn, github_repo_id=repo.id, installation_id=installation_id, full_name=repo.full_name,
                default_branch=repo.default_branch, description=repo.description, homepage=repo.homepage,
                topics=list(repo.topics), private=repo.private, archived=repo.archived,
            )
            await github_q.sync_visibility(conn, repo.id)

    # ---- push ----------------------------------------------------------------------------------------
    async def push(self, ev: ingest.PushReceived) -> str:
        hook = ev.webhook
        repo = hook.repository
        branch = repo.default_branch or "main"
        if hook.ref != f"refs/heads/{branch}":
            return "ignored"
        async with self._pool.acquire() as conn:
            row = await github_q.get_repository(conn, repo.id)
        if row is None:
            return "ignored"
        inst_id = hook.installation.id if hook.installation else row["installation_id"]
        touched = {p for c in hook.commits for p in (*c.added, *c.modified, *c.removed)}
        manifest_touched = any(is_manifest_path(p) for p in touched)
        meta_changed = (repo.description != row["description"] or list(repo.topics) != list(row["topics"])
                        or (repo.homepage or None) != row["homepage"])
        if row["state"] != "registered":
            if manifest_touched and not row["removed"] and not row["deleted"]:
                await self.register(repo, inst_id, None)  # a manifest appeared: perhaps a mod now
                self._wake_backfill()
                return "applied"
            return "ignored"
        # Every push to the default branch asks for the README: a 304 (no quota) when unchanged.
        readme = "skipped" if repo.private else await self.readmes.quietly(
            repo.id, repo.full_name, inst_id, branch, cause="push")
        if not (manifest_touched or meta_changed):
            return "applied" if readme == "fetched" else "ignored"
        await self._store_metadata(repo, inst_id)
        await self.refresh_card(repo, inst_id, row, touched=manifests_after(hook.commits))
        await self._announce([repo.id], "push")  # the card (name, summary, links, topics)
        return "applied"

    async def refresh_card(self, repo: github.Repository, installation_id: int, row,
                           touched: list[str] = ()) -> bool:
        """Re-read the branch manifest (the pushed one, else where it was found) and write the card."""
        source = row["manifest_source"] or ""
        stored = source.removeprefix("branch:") if source.startswith("branch:") else None
        found = None
        for path in [*touched, *([stored] if stored and stored not in touched else [])]:
            data = await self._prober.read_file(repo, installation_id, path)
            if data is not None:
                found = (path, data)
                break
        if found is None and stored is not None:  # moved: look where manifests usually are
            found = await self._prober.branch_manifest(repo, installation_id)
        record = source_record(*found) if found else None
        async with self._pool.acquire() as conn, conn.transaction():
            changed = await card.refresh(conn, repo, record)
        if changed:
            self._metrics.cards.inc()
        return changed
