"""Backfill: send the existing releases of newly registered repositories, oldest first.

The queue is ``github_repositories.backfill_state`` in PostgreSQL: a replica claims one
pending repository under a lease (at most one running per installation across all
replicas, so the per-installation pace holds globally), extends the lease while it
works, and marks it done. A replica that dies loses its lease and another one resumes;
releases already sent are not sent again (``sync.to_send``), so each is indexed once.
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

import asyncpg

from indexium_db.queries import github as github_q
from indexium_github import GitHubError, InstallationUnavailable, NotFound, RateLimited
from indexium_platform import logs

from indexium_platform.jobs import is_outage
from .metrics import GithubMetrics
from .readme import Readmes
from .settings import Settings
from .sync import LostClaim, ReleaseSync

log = logs.get(__name__)


class Backfiller:
    def __init__(self, pool: asyncpg.Pool, sync: ReleaseSync, settings: Settings, metrics: GithubMetrics,
                 wake: asyncio.Event, readmes: Readmes | None = None):
        self._pool, self._sync, self._settings, self._metrics = pool, sync, settings, metrics
        self._wake, self._readmes = wake, readmes

    async def run(self, stop: asyncio.Event) -> None:
        workers = [asyncio.create_task(self._worker(stop)) for _ in range(self._settings.backfill_workers)]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()

    async def _worker(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                if await self.run_once():
                    continue
            except Exception as exc:  # PostgreSQL away: try again after the poll interval
                log.warning("backfill_claim_failed", error=str(exc) or type(exc).__name__)
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(first_set(stop, self._wake), timeout=self._settings.backfill_poll_s)

    async def run_once(self) -> bool:
        """Claim one pending backfill and run it; False when there was none."""
        lease = self._settings.backfill_lease_s
        async with self._pool.acquire() as conn, conn.transaction():
            row = await github_q.claim_backfill(conn, lease)
        if row is None:
            return False
        repo_id = row["github_repo_id"]
        state = {"published": 0, "total": None, "lost": False}

        async def progress(published: int, total: int) -> bool:
            state["published"], state["total"] = published, total
            return not state["lost"]

        async def heartbeat() -> None:
            while True:
                await asyncio.sleep(lease / 3)
                with contextlib.suppress(Exception):
                    async with self._pool.acquire() as conn:
                        if not await github_q.backfill_progress(conn, repo_id, lease_s=lease, total=state["total"],
                                                             published=state["published"]):
                            state["lost"] = True

        beat = asyncio.create_task(heartbeat())
        try:
            outcome = await self._run(row, progress, state)
        finally:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
        self._metrics.backfills.labels(outcome).inc()
        return True

    async def _run(self, row, progress, state) -> str:
        repo_id, name = row["github_repo_id"], row["full_name"]
        error, retry_at = None, None
        try:
            result = await self._sync.run(row, source="backfill", progress=progress)
        except LostClaim:
            log.warning("backfill_lost_claim", repo=name)
            return "deferred"
        except RateLimited as exc:
            error, retry_at = str(exc), exc.retry_at
        except (InstallationUnavailable, NotFound) as exc:
            error = str(exc)
        except GitHubError as exc:
            error = str(exc)
            if exc.retryable:
                retry_at = datetime.now(UTC).timestamp() + 60
        except Exception as exc:
            if not is_outage(exc):
                log.exception("backfill_crashed", repo=name)
            error = f"{type(exc).__name__}: {exc}"
            retry_at = datetime.now(UTC).timestamp() + self._settings.outage_retry_s
        async with self._pool.acquire() as conn, conn.transaction():
            if error is None:
                await github_q.backfill_progress(conn, repo_id, lease_s=0, total=result.published,
                                              published=result.published)
                await github_q.finish_backfill(conn, repo_id, state="done")
            else:
                await github_q.backfill_progress(conn, repo_id, lease_s=0, total=state["total"],
                                              published=state["published"])
                not_before = datetime.fromtimestamp(retry_at, UTC) if retry_at else None
                await github_q.finish_backfill(conn, repo_id, state="pending" if retry_at else "failed",
                                            error=error[:1000], not_before=not_before)
        if error is None:
            log.info("backfill_done", repo=name, releases=result.total, sent=result.published)
            if self._readmes is not None and not row["private"]:
                await self._readmes.quietly(repo_id, name, row["installation_id"], row["default_branch"],
                                            cause="backfill")
            return "done"
        log.warning("backfill_stopped", repo=name, error=error[:300], retry_at=retry_at)
        return "deferred" if retry_at else "failed"


async def first_set(stop: asyncio.Event, wake: asyncio.Event) -> None:
    """Wait until either event is set (an idle loop: told to stop, or woken by new work)."""
    waits = [asyncio.create_task(stop.wait()), asyncio.create_task(wake.wait())]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
