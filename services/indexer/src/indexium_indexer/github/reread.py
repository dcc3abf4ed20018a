"""Re-read releases published before their jars (``github_release_rereads``, scheduled by
``watch.py``) and hand new jars to the indexer through the normal release path.

A replica claims the re-reads that fell due under a lease (one replica per re-read; a
replica that dies lets its lease run out and another takes the re-read over), reads the
release (``GET /repos/{repo}/releases/{id}``, a conditional request: an unchanged release is
a 304 that costs no quota), and, when it lists a mod jar the indexer has not had yet, sends
the release like backfill does (``ReleaseSync.publish``: a ``ReleaseReceived`` with the
synthetic delivery id ``backfill:<release id>:<fingerprint>``, recorded in
``github_release_sync`` so reconciliation does not send it again). Then the next step of
the schedule, or the end: after the last step, once the release carries as many jars as the
repository's recent releases did, or when it is immutable, a draft again or gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from datetime import UTC, datetime, timedelta

import asyncpg

from indexium_contracts import github
from indexium_db.queries import github as github_q
from indexium_github import GitHubClient, GitHubError, InstallationUnavailable, NotFound, RateLimited, assets
from indexium_platform import logs

from .backfill import first_set
from .metrics import GithubMetrics
from .settings import Settings
from .sync import ReleaseSync

log = logs.get(__name__)
CLAIM = 20  # re-reads one replica takes at a time


class Rereader:
    def __init__(self, pool: asyncpg.Pool, client: GitHubClient, sync: ReleaseSync, settings: Settings,
                 metrics: GithubMetrics):
        self._pool, self._client, self._sync, self._metrics = pool, client, sync, metrics
        self._schedule = settings.reread_schedule_s
        self._poll_s = settings.reread_poll_s
        # A re-read may wait in place for GitHub's quota up to max_wait_s: the lease outlasts that.
        self._lease_s = settings.max_wait_s + 4 * settings.http_timeout_s
        self.holder = f"{socket.gethostname()}:{os.getpid()}:reread"
        self.wake = asyncio.Event()

    async def run(self, stop: asyncio.Event) -> None:
        if not self._schedule:
            log.info("release_rereads_off", reason="INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS is empty")
            return
        while not stop.is_set():
            wait = self._poll_s
            try:
                if await self.run_once():
                    continue
                async with self._pool.acquire() as conn:
                    due = await github_q.next_reread_at(conn)
                if due is not None:
                    wait = min(wait, max(0.0, (due - datetime.now(UTC)).total_seconds()))
            except Exception as exc:  # PostgreSQL away: try again after the poll interval
                log.warning("release_reread_claim_failed", error=str(exc) or type(exc).__name__)
            self.wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(first_set(stop, self.wake), timeout=wait)

    async def run_once(self) -> int:
        """Claim the re-reads that fell due and do them; how many there were."""
        async with self._pool.acquire() as conn, conn.transaction():
            rows = await github_q.claim_rereads(conn, lease_s=self._lease_s, holder=self.holder, limit=CLAIM)
        for row in rows:
            await self._reread(row)
        return len(rows)

    async def _reread(self, row) -> None:
        step, seen = row["step"], list(row["seen_assets"])
        name, tag = row["full_name"], row["tag_name"]
        if row["removed"] or row["deleted"] or row["private"]:
            await self._end(row, "hidden")
            return
        try:
            resp = await self._client.get(f"/repos/{name}/releases/{row['github_release_id']}",
                                          installation_id=row["installation_id"], op="get_release")
            if resp.not_modified:  # a 304: nothing uploaded since the last read, no quota spent
                await self._next(row, step + 1, seen, None, "not_modified")
                return
            rel = resp.decode(github.Release)
            if rel.draft:
                await self._end(row, "draft")
                return
            jars = assets.mod_jars(rel.assets)
            new = [a.name for a in jars if a.id not in seen]
            if new:
                repo = await self._sync.fetch_repo(row)  # conditional too; follows a rename
                if repo.private:
                    await self._end(row, "hidden")
                    return
                await self._sync.publish(repo, row["installation_id"], rel, source="reread")
                seen = [a.id for a in jars]
                log.info("release_reread_sent", repo=name, tag=tag, step=step + 1, new_jars=new,
                         jars=len(jars), late_s=round(_age(row["base_at"]), 1))
            result = "sent" if new else "unchanged"
            if rel.immutable or (row["expected_jars"] and len(jars) >= row["expected_jars"]):
                await self._end(row, result)  # final, or as many jars as the recent releases had
            else:
                await self._next(row, step + 1, seen, None, result)
        except (NotFound, InstallationUnavailable):
            await self._end(row, "gone")
        except RateLimited as exc:  # the quota is back at a known time: this step then
            await self._next(row, step, seen, str(exc), "rate_limited",
                             due=datetime.fromtimestamp(exc.retry_at, UTC))
        except GitHubError as exc:
            await self._next(row, step + 1, seen, str(exc), "error")

    async def _next(self, row, step: int, seen: list[int], error: str | None, result: str,
                    due: datetime | None = None) -> None:
        self._metrics.release_rereads.labels(result).inc()
        if step >= len(self._schedule):
            await self._end(row, None)
            return
        if due is None:
            due = row["base_at"] + timedelta(seconds=self._schedule[step])
        async with self._pool.acquire() as conn:
            await github_q.advance_reread(conn, row["github_release_id"], self.holder, step=step, due_at=due,
                                          seen_assets=seen, error=error[:1000] if error else None)

    async def _end(self, row, result: str | None) -> None:
        if result is not None:
            self._metrics.release_rereads.labels(result).inc()
        async with self._pool.acquire() as conn:
            await github_q.finish_reread(conn, row["github_release_id"], self.holder)
        log.info("release_reread_done", repo=row["full_name"], tag=row["tag_name"], step=row["step"] + 1,
                 last=result or "schedule_over")


def _age(since: datetime) -> float:
    return (datetime.now(UTC) - since).total_seconds()
