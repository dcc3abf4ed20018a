"""Reconciliation: a periodic pass over every active installation and registered repository.

Catches what webhooks missed: each active installation's repositories are listed again
(``installation_repositories`` events never delivered: new ones registered, ones no longer
listed marked removed and their mods hidden), releases never delivered are sent to the indexer,
versions whose release is gone are hidden, and every file's ``download_count`` is
refreshed from GitHub (``sort=downloads``). Conditional requests make an unchanged
repository cost nothing but the 304s. One pass at a time across replicas: the pass
holds a PostgreSQL session advisory lock (released by PostgreSQL if the replica dies),
and a replica that gets the lock skips the pass if another ran one within the interval.
Progress and the last result are rows of ``github_reconcile_runs``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import time

import asyncpg

from indexium_db.queries import github as github_q
from indexium_github import GitHubClient, GitHubError, RateLimited
from indexium_platform import logs

from indexium_platform.jobs import is_outage
from .metrics import GithubMetrics
from .onboarding import Onboarding
from .settings import Settings
from .sync import ReleaseSync

log = logs.get(__name__)
LOCK_KEY = 0x1D3E_6B02
CHECK_EVERY_S = 60.0


class Reconciler:
    def __init__(self, pool: asyncpg.Pool, sync: ReleaseSync, client: GitHubClient, settings: Settings,
                 metrics: GithubMetrics, onboarding: Onboarding):
        self._pool, self._sync, self._client, self._onboarding = pool, sync, client, onboarding
        self._settings, self._metrics = settings, metrics
        self.holder = f"{socket.gethostname()}:{os.getpid()}"
        self._stop: asyncio.Event | None = None

    async def run(self, stop: asyncio.Event) -> None:
        interval = self._settings.reconcile_interval_s
        if interval <= 0:
            return
        self._stop = stop
        while not stop.is_set():
            try:
                await self.maybe_run()
            except Exception as exc:
                log.warning("reconcile_failed", error=str(exc) or type(exc).__name__)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=min(interval, CHECK_EVERY_S))

    async def maybe_run(self, *, force: bool = False) -> int | None:
        """Run a pass if none ran within the interval and no replica is running one; its id."""
        async with self._pool.acquire() as lock_conn:
            if not await lock_conn.fetchval("SELECT pg_try_advisory_lock($1)", LOCK_KEY):
                return None
            try:
                last = await github_q.last_run_started(lock_conn)
                if not force and last is not None and time.time() - last.timestamp() < self._settings.reconcile_interval_s:
                    return None
                return await self._pass()
            finally:
                with contextlib.suppress(Exception):
                    await lock_conn.execute("SELECT pg_advisory_unlock($1)", LOCK_KEY)

    async def _pass(self) -> int:
        async with self._pool.acquire() as conn:
            installations = await github_q.active_installations(conn)
            run_id = await github_q.start_run(conn, self.holder, 0)
        counts = {c: 0 for c in github_q.RUN_COUNTERS}
        start_requests, start_304 = self._client.counters.requests, self._client.counters.not_modified
        blocked: set[int] = set()  # installations out of quota for this pass
        last_error = None
        try:
            for installation_id in installations:
                if self._stop is not None and self._stop.is_set():
                    break
                try:
                    added, removed = await self._onboarding.reconcile_membership(
                        installation_id, reserve=self._settings.reconcile_reserve)
                except RateLimited as exc:
                    blocked.add(installation_id)
                    counts["errors"] += 1
                    last_error = f"installation {installation_id}: {exc}"[:1000]
                except GitHubError as exc:
                    counts["errors"] += 1
                    last_error = f"installation {installation_id}: {exc}"[:1000]
                else:
                    counts["repos_added"] += added
                    counts["repos_removed"] += removed
            async with self._pool.acquire() as conn:
                repos = await github_q.repositories_to_reconcile(conn)
                await github_q.set_run_total(conn, run_id, len(repos))
                await github_q.update_run(conn, run_id, counts, last_error)
        except Exception as exc:
            await self._failed(run_id, counts, exc)
            raise
        log.info("reconcile_started", run=run_id, repos=len(repos), installations=len(installations),
                 repos_added=counts["repos_added"], repos_removed=counts["repos_removed"])
        try:
            for row in repos:
                if self._stop is not None and self._stop.is_set():
                    last_error = "stopped: the replica is shutting down"
                    counts["errors"] += 1
                    break
                error = None
                if row["installation_id"] in blocked:
                    error = "skipped: installation out of quota"
                else:
                    try:
                        result = await self._sync.run(row, source="reconcile",
                                                      reserve=self._settings.reconcile_reserve)
                    except RateLimited as exc:
                        blocked.add(row["installation_id"])
                        error = str(exc)
                    except GitHubError as exc:
                        error = str(exc)
                    else:
                        counts["releases_published"] += result.published
                        counts["versions_hidden"] += result.hidden
                        counts["files_updated"] += result.files_updated
                        counts["repos_unchanged"] += int(result.unchanged)
                        self._metrics.versions_hidden.inc(result.hidden)
                        self._metrics.download_counts.inc(result.files_updated)
                if error is not None:
                    counts["errors"] += 1
                    last_error = f"{row['full_name']}: {error}"[:1000]
                    async with self._pool.acquire() as conn:
                        await github_q.mark_reconciled(conn, row["github_repo_id"], error[:1000])
                counts["repos_done"] += 1
                counts["api_requests"] = self._client.counters.requests - start_requests
                counts["not_modified"] = self._client.counters.not_modified - start_304
                async with self._pool.acquire() as conn:
                    await github_q.update_run(conn, run_id, counts, last_error)
        except Exception as exc:
            await self._failed(run_id, counts, exc)
            raise
        status = "ok" if counts["errors"] == 0 else "partial"
        async with self._pool.acquire() as conn:
            await github_q.update_run(conn, run_id, counts, last_error, status)
        self._metrics.reconcile_runs.labels(status).inc()
        if status == "ok":
            self._metrics.last_reconcile.set_to_current_time()
        log.info("reconcile_finished", run=run_id, status=status, **counts)
        return run_id

    async def _failed(self, run_id: int, counts: dict[str, int], exc: Exception) -> None:
        if not is_outage(exc):
            log.exception("reconcile_crashed", run=run_id)
        with contextlib.suppress(Exception):
            async with self._pool.acquire() as conn:
                await github_q.update_run(conn, run_id, counts, f"{type(exc).__name__}: {exc}"[:1000], "failed")
        self._metrics.reconcile_runs.labels("failed").inc()
