"""Watch published releases for jars still to come (the consumer ``INGEST/github-releases``).

Release tools (softprops/action-gh-release, release-it, semantic-release, Travis and
AppVeyor deploys) publish a release first and upload its files afterwards. GitHub sends no
webhook for an upload: the ``published`` event arrives with ``"assets": []`` and the release
indexer ignores it. The GitHub role reads the same release events as the indexer, on its own
durable consumer, and when a published release carries no mod jar — or fewer than each of
the repository's last three versions has — it schedules re-reads of that release
(``github_release_rereads``, done by ``reread.py``) after each step of
``INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS``, counted from the event's arrival.

Why a consumer of its own and a table, not an event from the release job: the release job
stays the indexer of what a release carries, and the decision sits with the role that holds
the App's credentials and the repositories' state; the events wait in the stream while no
GitHub role runs (it catches up when one starts); and the schedule, in PostgreSQL under a
lease, survives restarts and is shared by every replica, as backfills are.

Nothing is re-read for: a release GitHub marks ``immutable`` (its assets are final at
publish), a draft or any action but ``published``/``released``/``prereleased``, a release
the role sent itself (``backfill:`` ids: read from the API just now), a repository the App
does not give us (no installation: nothing could read it) or that is hidden, and an event
older than the whole schedule (a backlog after a long outage: reconciliation catches those).
A failure other than an outage is logged and the event acked: the release still reaches the
indexer through its own consumer; only the early re-read is lost.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
from nats.aio.msg import Msg

from indexium_contracts import github, ingest, onboarding
from indexium_db.queries import github as github_q
from indexium_github import assets
from indexium_github.times import parse_time
from indexium_platform import logs
from indexium_platform.jobs import is_outage

from .metrics import GithubMetrics

log = logs.get(__name__)
CONSUMER = onboarding.GITHUB_RELEASES
WATCHED_ACTIONS = {"published", "released", "prereleased"}
MAX_PENDING = 10_000  # re-reads pending at once: the table stays bounded whatever is published
RECENT = 3  # versions whose jar counts a new release is compared with


def jars_short(release: github.Release, recent: list[int]) -> bool:
    """No mod jar yet, or fewer than each of the repository's recent versions carried."""
    jars = len(assets.mod_jars(release.assets))
    return jars == 0 or (bool(recent) and jars < min(recent))


class ReleaseWatch:
    def __init__(self, pool: asyncpg.Pool, schedule: tuple[float, ...], metrics: GithubMetrics,
                 *, outage_retry_s: float, on_scheduled=None):
        self._pool, self._schedule, self._metrics = pool, schedule, metrics
        self._outage_retry_s = outage_retry_s
        self._on_scheduled = on_scheduled or (lambda: None)

    async def handle(self, msg: Msg) -> None:
        """The consumer's handler: one short transaction, then ack (an outage: nak, later)."""
        try:
            event = ingest.decoder.decode(msg.data)
        except Exception:  # the indexer's consumer reads the same message and dead-letters it
            await msg.term()
            return
        if not isinstance(event, ingest.ReleaseReceived):
            await msg.term()  # the consumer's filter is set up wrong
            return
        try:
            outcome = await self.notice(event)
        except Exception as exc:
            if is_outage(exc):
                self._metrics.release_watch.labels("outage").inc()
                await msg.nak(delay=self._outage_retry_s)
                return
            log.exception("release_watch_failed", repo=event.webhook.repository.full_name)
            outcome = "failed"
        await msg.ack()
        self._metrics.release_watch.labels(outcome).inc()

    async def notice(self, event: ingest.ReleaseReceived) -> str:
        hook, rel = event.webhook, event.webhook.release
        if event.delivery_id.startswith("backfill:"):
            return "own"
        if hook.action not in WATCHED_ACTIONS or rel.draft:
            return "not_published"
        if rel.immutable:
            return "immutable"
        if not self._schedule:
            return "off"
        received = parse_time(event.received_at) or datetime.now(UTC)
        if received + timedelta(seconds=self._schedule[-1]) < datetime.now(UTC):
            return "too_old"
        async with self._pool.acquire() as conn, conn.transaction():
            row = await github_q.get_repository(conn, hook.repository.id)
            if row is None:
                if not jars_short(rel, []):
                    # Its jars are here: nothing to read again, whether or not the App's
                    # installation event (another consumer's) has been applied yet.
                    return "complete"
                outcome = "no_installation"
            elif row["removed"] or row["deleted"] or row["private"]:
                outcome = "hidden"
            else:
                recent = await github_q.recent_jar_counts(conn, hook.repository.id, rel.id, RECENT)
                if not jars_short(rel, recent):
                    return "complete"
                outcome = await github_q.schedule_reread(
                    conn, github_release_id=rel.id, github_repo_id=hook.repository.id, tag_name=rel.tag_name,
                    base_at=received, due_at=received + timedelta(seconds=self._schedule[0]),
                    expected_jars=min(recent) if recent else 0,
                    seen_assets=[a.id for a in assets.mod_jars(rel.assets)], max_rows=MAX_PENDING)
        if outcome == "no_installation":
            # Not through the App (a repository webhook), or its installation event is not
            # applied yet: nothing can read this repository as the App.
            log.info("release_reread_impossible", repo=hook.repository.full_name, tag=rel.tag_name,
                     reason="the repository is not one the GitHub App was given")
        elif outcome in ("scheduled", "full"):
            log.info("release_reread_scheduled" if outcome == "scheduled" else "release_reread_table_full",
                     repo=hook.repository.full_name, tag=rel.tag_name, jars=len(assets.mod_jars(rel.assets)),
                     first_in_s=self._schedule[0])
            if outcome == "scheduled":
                self._on_scheduled()
        return outcome
