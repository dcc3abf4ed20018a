"""Send a repository's releases through the normal indexing path: backfill, reconciliation,
and the re-reads of releases published before their jars (``reread.py``).

A release is published to ``indexium.ingest.release`` as a ``ReleaseReceived`` built from
the REST API's JSON, with the synthetic delivery id ``backfill:<release id>:<fingerprint>``
as ``Nats-Msg-Id``; the indexer cannot tell it from a webhook. It is sent only when it is
new to us: neither sent before with the same fingerprint (``github_release_sync``) nor
already indexed from a webhook with the same jars. Oldest first, paced per installation.
Reconciliation also hides versions whose release is gone and refreshes download counts.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import asyncpg
import msgspec
from nats.js import JetStreamContext

from indexium_contracts import github, ingest, versions as version_events
from indexium_db.queries import github as github_q
from indexium_db.queries import mods as mods_q
from indexium_github import GitHubClient, NotFound, assets

from .announce import Announcer

GONE_REASON = "github: release gone (reconciliation)"
_releases = msgspec.json.Decoder(list[github.Release])
_fp = msgspec.msgpack.Encoder()
Progress = Callable[[int, int], Awaitable[bool]]  # (published, to publish) -> keep going?


class LostClaim(Exception):
    """Another replica took the backfill over (our lease expired): stop without finishing it."""


def fingerprint(release: github.Release) -> str:
    """What the indexer reads from a release — not its download counts, which change hourly."""
    parts = (release.tag_name, release.name, release.body, release.draft, release.prerelease,
             sorted((a.id, a.name, a.size, a.state, a.updated_at, a.digest) for a in release.assets))
    return hashlib.sha256(_fp.encode(parts)).hexdigest()[:16]


def oldest_first(releases: list[github.Release]) -> list[github.Release]:
    return sorted(releases, key=lambda r: (r.published_at or r.created_at or "", r.id))


def delivery_id(release: github.Release) -> str:
    return f"backfill:{release.id}:{fingerprint(release)}"


def to_send(releases: list[github.Release], sent: dict[int, str],
            indexed: dict[int, frozenset[int]]) -> list[github.Release]:
    out = []
    for rel in oldest_first(releases):
        if rel.draft or sent.get(rel.id) == fingerprint(rel):
            continue
        if rel.id not in sent and indexed.get(rel.id) == frozenset(a.id for a in assets.mod_jars(rel.assets)):
            continue  # a webhook indexed it already, with these very jars
        out.append(rel)
    return out


class Pacer:
    """At most ``rate`` sends per second per key (installation), in this process."""

    def __init__(self, rate: float, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self._interval, self._clock, self._sleep = 1.0 / rate, clock, sleep
        self._next: dict[int, float] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    async def wait(self, key: int) -> None:
        async with self._locks.setdefault(key, asyncio.Lock()):
            now = self._clock()
            due = self._next.get(key, now)
            if due > now:
                await self._sleep(due - now)
            self._next[key] = max(due, now) + self._interval


@dataclass
class SyncResult:
    total: int = 0  # releases on GitHub (drafts excluded)
    published: int = 0
    hidden: int = 0
    files_updated: int = 0
    unchanged: bool = False  # every page answered 304


class ReleaseSync:
    def __init__(self, pool: asyncpg.Pool, client: GitHubClient, js: JetStreamContext, pacer: Pacer,
                 on_sent: Callable[[str], None] | None = None):
        self._pool, self._client, self._js, self._pacer = pool, client, js, pacer
        self._on_sent = on_sent
        self._announcer = Announcer(pool, js)

    async def fetch_repo(self, row, *, reserve: int = 0) -> github.Repository:
        resp = await self._client.get(f"/repos/{row['full_name']}", installation_id=row["installation_id"],
                                      op="get_repository", reserve=reserve)
        repo = resp.decode(github.Repository)
        if repo.id != row["github_repo_id"]:  # the name now belongs to another repository
            raise NotFound(404, f"{row['full_name']} is another repository now", op="get_repository")
        # A missed (or late, out-of-order) repository event — renamed, transferred, privatized,
        # publicized: catch up. Also on a 304: the answer (from the ETag cache) is still what
        # GitHub says now, and our row may have been changed since by a stale event.
        renamed = repo.full_name != row["full_name"]
        flags = (repo.private, repo.archived) != (row["private"], row["archived"])
        if not (renamed or flags):
            return repo
        async with self._pool.acquire() as conn, conn.transaction():
            if renamed:
                await mods_q.update_repository(conn, repo.id, full_name=repo.full_name,
                                               default_branch=repo.default_branch,
                                               owner_id=repo.owner.id, owner_login=repo.owner.login,
                                               repo_url=repo.page_url, fork=repo.fork)
                await github_q.rename_repository(conn, repo.id, repo.full_name)
            if flags:
                await github_q.set_flags(conn, repo.id, private=repo.private, archived=repo.archived)
                await github_q.sync_visibility(conn, repo.id)
        await self._announcer.mods_changed([repo.id], "reconcile.repository")
        return repo

    async def list_releases(self, repo: github.Repository, installation_id: int,
                            *, reserve: int = 0) -> tuple[list[github.Release], bool]:
        releases: list[github.Release] = []
        unchanged = True
        async for page in self._client.paginate(f"/repos/{repo.full_name}/releases",
                                                installation_id=installation_id, op="list_releases",
                                                reserve=reserve):
            releases += _releases.decode(page.body)
            unchanged &= page.not_modified
        return releases, unchanged

    async def run(self, row, *, source: str, reserve: int = 0, progress: Progress | None = None) -> SyncResult:
        """``source``: ``backfill`` (send what is new) or ``reconcile`` (also hide gone
        releases and refresh download counts)."""
        inst = row["installation_id"]
        repo = await self.fetch_repo(row, reserve=reserve)
        if repo.private:  # hidden; launchers could not download its files anyway
            if source == "reconcile":
                async with self._pool.acquire() as conn:
                    await github_q.mark_reconciled(conn, repo.id, None)
            return SyncResult()
        releases, unchanged = await self.list_releases(repo, inst, reserve=reserve)
        result = SyncResult(total=sum(1 for r in releases if not r.draft), unchanged=unchanged)
        async with self._pool.acquire() as conn:
            sent = await github_q.sent_releases(conn, repo.id)
            indexed = await github_q.indexed_releases(conn, repo.id)
        pending = to_send(releases, sent, indexed)
        for rel in pending:
            await self._pacer.wait(inst)
            await self.publish(repo, inst, rel, source=source)
            result.published += 1
            if progress is not None and not await progress(result.published, len(pending)):
                raise LostClaim(repo.full_name)
        if source == "reconcile":
            await self._reconcile_db(repo, releases, result)
        return result

    async def publish(self, repo: github.Repository, installation_id: int, rel: github.Release,
                      *, source: str) -> None:
        """Send one release to the indexer and record it as sent (``source``: backfill,
        reconcile, reread)."""
        did = delivery_id(rel)
        event = ingest.ReleaseReceived(
            delivery_id=did, received_at=datetime.now(UTC).isoformat(),
            webhook=github.ReleaseWebhook(action="published", release=rel, repository=repo,
                                          installation=github.Installation(id=installation_id)),
        )
        await self._js.publish(ingest.RELEASE, ingest.encoder.encode(event), headers={"Nats-Msg-Id": did})
        async with self._pool.acquire() as conn:  # after the PubAck: a crash in between resends once
            await github_q.record_sent(conn, repo.id, rel.id, fingerprint(rel), did)
        if self._on_sent:
            self._on_sent(source)

    async def _reconcile_db(self, repo: github.Repository, releases: list[github.Release],
                            result: SyncResult) -> None:
        present = [r.id for r in releases if not r.draft]
        counts = {a.id: a.download_count for r in releases if not r.draft for a in r.assets}
        async with self._pool.acquire() as conn, conn.transaction():
            hidden = await github_q.hide_gone_releases(conn, repo.id, present, GONE_REASON)
            result.files_updated = await github_q.update_download_counts(conn, repo.id, counts)
            await github_q.mark_reconciled(conn, repo.id, None)
        result.hidden = len(hidden)
        for r in hidden:  # publish after commit, as the indexer does
            ev = version_events.VersionHidden(mod_id=str(r["mod_id"]), slug=r["slug"], version_id=str(r["id"]),
                                              version_number=r["version_number"], reason=GONE_REASON)
            await self._js.publish(version_events.HIDDEN, version_events.encoder.encode(ev),
                                   headers={"Nats-Msg-Id": f"VersionHidden:{r['id']}:reconcile"})
