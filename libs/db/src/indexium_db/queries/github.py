"""GitHub App state: installations, their repositories (registered or skipped), mod visibility
derived from that state, release backfill/reconciliation bookkeeping, reconcile runs, and the
re-reads of releases published before their jars.

Visibility is *derived*, never toggled: :func:`sync_visibility` recomputes a mod's
``hidden`` from the installation and repository flags, so events applied in any order
end in the same state. Our reasons start with ``github:``; a mod hidden for any other
reason (an operator's decision) is never shown again by this module.
"""

from __future__ import annotations

import uuid
from datetime import datetime

import asyncpg

from . import mods as mods_q

HIDDEN_PREFIX = "github:"
_BACKFILL_CLAIM_LOCK = 0x1D3E_6B01  # serializes claims so one installation runs one backfill


# ---- installations ------------------------------------------------------------------------------
async def upsert_installation(
    conn: asyncpg.Connection, installation_id: int, *, state: str | None = None,
    account_id: int | None = None, account_login: str | None = None, account_type: str | None = None,
    event_at: datetime | None = None,
) -> bool:
    """Record an installation; change its ``state`` only if ``event_at`` is not older than the
    last event applied. Returns whether the state change (if any) was applied."""
    row = await conn.fetchrow(
        """INSERT INTO github_installations AS i (id, account_id, account_login, account_type, state, last_event_at)
           VALUES ($1, $2, $3, $4, COALESCE($5, 'active'), $6)
           ON CONFLICT (id) DO UPDATE SET
               account_id = COALESCE(EXCLUDED.account_id, i.account_id),
               account_login = COALESCE(EXCLUDED.account_login, i.account_login),
               account_type = COALESCE(EXCLUDED.account_type, i.account_type),
               state = CASE WHEN $5::text IS NOT NULL
                             AND ($6::timestamptz IS NULL OR i.last_event_at IS NULL OR $6 >= i.last_event_at)
                            THEN $5 ELSE i.state END,
               last_event_at = GREATEST(i.last_event_at, EXCLUDED.last_event_at),
               updated_at = now()
           RETURNING state""",
        installation_id, account_id, account_login, account_type, state, event_at,
    )
    return state is None or row["state"] == state


async def get_installation(conn: asyncpg.Connection, installation_id: int) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT * FROM github_installations WHERE id = $1", installation_id)


# ---- repositories --------------------------------------------------------------------------------
async def upsert_repository(
    conn: asyncpg.Connection, *, github_repo_id: int, installation_id: int, full_name: str,
    default_branch: str | None, description: str | None, homepage: str | None, topics: list[str],
    private: bool, archived: bool,
) -> asyncpg.Record:
    """Record what GitHub says about a repository now (metadata only, never its state)."""
    return await conn.fetchrow(
        """INSERT INTO github_repositories AS r (github_repo_id, installation_id, full_name, default_branch,
               description, homepage, topics, private, archived)
           VALUES ($1, $2, $3, COALESCE($4, 'main'), $5, $6, $7, $8, $9)
           ON CONFLICT (github_repo_id) DO UPDATE SET
               installation_id = EXCLUDED.installation_id, full_name = EXCLUDED.full_name,
               default_branch = EXCLUDED.default_branch, description = EXCLUDED.description,
               homepage = EXCLUDED.homepage, topics = EXCLUDED.topics, private = EXCLUDED.private,
               archived = EXCLUDED.archived, updated_at = now()
           RETURNING *""",
        github_repo_id, installation_id, full_name, default_branch, description, homepage, topics,
        private, archived,
    )


async def get_repository(conn: asyncpg.Connection, github_repo_id: int) -> asyncpg.Record | None:
    """The repository's row, with its installation's account (``account_id``, ``account_login``,
    ``account_type``: the repository's owner, when an event has named it)."""
    return await conn.fetchrow(
        """SELECT r.*, i.account_id, i.account_login, i.account_type
           FROM github_repositories r LEFT JOIN github_installations i ON i.id = r.installation_id
           WHERE r.github_repo_id = $1""",
        github_repo_id,
    )


async def repositories_of(conn: asyncpg.Connection, installation_id: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT * FROM github_repositories WHERE installation_id = $1 ORDER BY github_repo_id", installation_id
    )


async def set_evaluation(
    conn: asyncpg.Connection, github_repo_id: int, *, state: str, skip_reason: str | None,
    manifest_source: str | None,
) -> asyncpg.Record:
    """Registered or skipped (with the reason). A new registration queues its backfill."""
    return await conn.fetchrow(
        """UPDATE github_repositories SET state = $2, skip_reason = $3, manifest_source = $4,
               evaluated_at = now(),
               registered_at = CASE WHEN $2 = 'registered' THEN COALESCE(registered_at, now()) END,
               backfill_state = CASE WHEN $2 = 'registered' AND backfill_state = 'none'
                                     THEN 'pending' ELSE backfill_state END,
               updated_at = now()
           WHERE github_repo_id = $1 RETURNING *""",
        github_repo_id, state, skip_reason, manifest_source,
    )


async def set_flags(
    conn: asyncpg.Connection, github_repo_id: int, *, removed: bool | None = None,
    deleted: bool | None = None, private: bool | None = None, archived: bool | None = None,
    event_at: datetime | None = None,
) -> bool:
    """Set the flags given; skipped (False) when ``event_at`` is older than the last applied."""
    status = await conn.execute(
        """UPDATE github_repositories SET removed = COALESCE($2, removed), deleted = COALESCE($3, deleted),
               private = COALESCE($4, private), archived = COALESCE($5, archived),
               last_event_at = GREATEST(last_event_at, $6), updated_at = now()
           WHERE github_repo_id = $1
             AND ($6::timestamptz IS NULL OR last_event_at IS NULL OR $6 >= last_event_at)""",
        github_repo_id, removed, deleted, private, archived, event_at,
    )
    return status.endswith(" 1")


async def request_catch_up(conn: asyncpg.Connection, github_repo_id: int) -> None:
    """Queue a (re)sync of a registered repository's releases, e.g. after a reinstall. Also
    while a pass runs: that pass listed the releases before this request, so it ends when it
    next reports progress (its claim is gone) and the repository is passed over again."""
    await conn.execute(
        """UPDATE github_repositories SET backfill_state = 'pending', backfill_not_before = NULL,
               updated_at = now()
           WHERE github_repo_id = $1 AND state = 'registered'""",
        github_repo_id,
    )


# ---- the mod a repository is, and its visibility ---------------------------------------------------
async def mod_for_repo(conn: asyncpg.Connection, github_repo_id: int) -> asyncpg.Record | None:
    """A project of the repository (the first made), or None when it has none."""
    return await conn.fetchrow(
        """SELECT id, slug, name, summary, links, categories, hidden, hidden_reason, listed, identity
           FROM mods WHERE github_repo_id = $1 ORDER BY created_at, id LIMIT 1""",
        github_repo_id,
    )


async def projects_for_repo(conn: asyncpg.Connection, github_repo_id: int) -> list[asyncpg.Record]:
    """Every project of the repository (a repository may publish several: 0025), first made first."""
    return await conn.fetch(
        """SELECT id, slug, name, summary, links, categories, hidden, hidden_reason, listed, identity
           FROM mods WHERE github_repo_id = $1 ORDER BY created_at, id""",
        github_repo_id,
    )


async def mods_for_repos(conn: asyncpg.Connection, github_repo_ids: list[int]) -> list[asyncpg.Record]:
    """The mods of these repositories as public endpoints see them now (for ``ModChanged``)."""
    return await conn.fetch(
        """SELECT id, slug, hidden, hidden_reason FROM mods WHERE github_repo_id = ANY($1::bigint[])
           ORDER BY slug""",
        list(github_repo_ids),
    )


async def sync_visibility(conn: asyncpg.Connection, github_repo_id: int) -> list[uuid.UUID]:
    """Hide or show every project of the repository from the GitHub state; refresh their roll-ups
    (``listed``)."""
    changed = await conn.fetch(
        f"""WITH g AS (
                SELECT r.github_repo_id,
                       CASE WHEN i.state = 'deleted' THEN '{HIDDEN_PREFIX} app uninstalled'
                            WHEN i.state = 'suspended' THEN '{HIDDEN_PREFIX} installation suspended'
                            WHEN r.deleted THEN '{HIDDEN_PREFIX} repository deleted'
                            WHEN r.removed THEN '{HIDDEN_PREFIX} repository removed from the installation'
                            WHEN r.private THEN '{HIDDEN_PREFIX} repository is private'
                       END AS reason
                FROM github_repositories r JOIN github_installations i ON i.id = r.installation_id
                WHERE r.github_repo_id = $1)
            UPDATE mods m SET hidden = g.reason IS NOT NULL, hidden_reason = g.reason, updated_at = now()
            FROM g
            WHERE m.github_repo_id = g.github_repo_id
              AND (NOT m.hidden OR m.hidden_reason LIKE '{HIDDEN_PREFIX}%')
              AND (m.hidden, m.hidden_reason) IS DISTINCT FROM (g.reason IS NOT NULL, g.reason)
            RETURNING m.id""",
        github_repo_id,
    )
    for row in changed:
        await mods_q.refresh_rollup(conn, row["id"])
    return [row["id"] for row in changed]


async def rename_repository(conn: asyncpg.Connection, github_repo_id: int, full_name: str) -> None:
    """The App's record of the repository's name (its mod: :func:`mods.update_repository`)."""
    await conn.execute(
        "UPDATE github_repositories SET full_name = $2, updated_at = now() WHERE github_repo_id = $1",
        github_repo_id, full_name,
    )


# ---- releases: what we already sent, what is indexed, what is gone --------------------------------
async def sent_releases(conn: asyncpg.Connection, github_repo_id: int) -> dict[int, str]:
    rows = await conn.fetch(
        "SELECT github_release_id, fingerprint FROM github_release_sync WHERE github_repo_id = $1",
        github_repo_id,
    )
    return {r["github_release_id"]: r["fingerprint"] for r in rows}


async def indexed_releases(conn: asyncpg.Connection, github_repo_id: int) -> dict[int, frozenset[int]]:
    """Release id -> the asset ids of its indexed files, for the repository's visible versions."""
    rows = await conn.fetch(
        """SELECT v.github_release_id, array_remove(array_agg(f.github_asset_id), NULL) AS assets
           FROM mods m JOIN mod_versions v ON v.mod_id = m.id
           LEFT JOIN version_files f ON f.version_id = v.id
           WHERE m.github_repo_id = $1 AND NOT v.hidden
           GROUP BY v.github_release_id""",
        github_repo_id,
    )
    return {r["github_release_id"]: frozenset(r["assets"]) for r in rows}


async def record_sent(
    conn: asyncpg.Connection, github_repo_id: int, github_release_id: int, fingerprint: str, delivery_id: str
) -> None:
    await conn.execute(
        """INSERT INTO github_release_sync (github_repo_id, github_release_id, fingerprint, delivery_id)
           VALUES ($1, $2, $3, $4)
           ON CONFLICT (github_repo_id, github_release_id) DO UPDATE SET
               fingerprint = EXCLUDED.fingerprint, delivery_id = EXCLUDED.delivery_id, published_at = now()""",
        github_repo_id, github_release_id, fingerprint, delivery_id,
    )


async def hide_gone_releases(
    conn: asyncpg.Connection, github_repo_id: int, present_release_ids: list[int], reason: str
) -> list[asyncpg.Record]:
    """Hide (never delete) the repository's versions whose release no longer exists on GitHub."""
    hidden = await conn.fetch(
        """UPDATE mod_versions v SET hidden = true, hidden_reason = $3, updated_at = now()
           FROM mods m
           WHERE v.mod_id = m.id AND m.github_repo_id = $1 AND NOT v.hidden
             AND NOT (v.github_release_id = ANY($2::bigint[]))
           RETURNING v.id, v.mod_id, v.version_number, m.slug""",
        github_repo_id, present_release_ids, reason,
    )
    for mod_id in {r["mod_id"] for r in hidden}:
        await mods_q.refresh_rollup(conn, mod_id)
    return hidden


async def update_download_counts(
    conn: asyncpg.Connection, github_repo_id: int, counts: dict[int, int]
) -> int:
    """Set ``version_files.download_count`` from GitHub's asset counts; re-roll ``mods.downloads``."""
    if not counts:
        return 0
    rows = await conn.fetch(
        """UPDATE version_files f SET download_count = x.n, updated_at = now()
           FROM unnest($2::bigint[], $3::bigint[]) AS x(asset_id, n), mod_versions v, mods m
           WHERE f.github_asset_id = x.asset_id AND f.version_id = v.id AND v.mod_id = m.id
             AND m.github_repo_id = $1 AND f.download_count IS DISTINCT FROM x.n
           RETURNING v.mod_id""",
        github_repo_id, list(counts), list(counts.values()),
    )
    for mod_id in {r["mod_id"] for r in rows}:
        await mods_q.refresh_rollup(conn, mod_id)
    return len(rows)


# ---- backfill queue ---------------------------------------------------------------------------------
async def claim_backfill(conn: asyncpg.Connection, lease_s: float) -> asyncpg.Record | None:
    """Take the next pending backfill (or one whose holder died), at most one running per
    installation across every replica. Call inside a transaction."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", _BACKFILL_CLAIM_LOCK)
    return await conn.fetchrow(
        """UPDATE github_repositories r SET backfill_state = 'running',
               backfill_lease_until = now() + make_interval(secs => $1),
               backfill_started_at = COALESCE(r.backfill_started_at, now()), backfill_error = NULL,
               updated_at = now()
           WHERE r.github_repo_id = (
               SELECT c.github_repo_id FROM github_repositories c
               JOIN github_installations i ON i.id = c.installation_id
               WHERE i.state = 'active' AND c.state = 'registered' AND NOT c.removed AND NOT c.deleted
                 AND (c.backfill_state = 'pending'
                      OR (c.backfill_state = 'running' AND c.backfill_lease_until < now()))
                 AND (c.backfill_not_before IS NULL OR c.backfill_not_before <= now())
                 AND NOT EXISTS (
                     SELECT 1 FROM github_repositories o
                     WHERE o.installation_id = c.installation_id AND o.github_repo_id <> c.github_repo_id
                       AND o.backfill_state = 'running' AND o.backfill_lease_until >= now())
               ORDER BY c.backfill_not_before NULLS FIRST, c.registered_at, c.github_repo_id
               LIMIT 1)
           RETURNING r.*""",
        lease_s,
    )


async def backfill_progress(
    conn: asyncpg.Connection, github_repo_id: int, *, lease_s: float, total: int | None, published: int
) -> bool:
    """Extend the lease and record progress; False if the claim was lost (lease expired, taken)."""
    status = await conn.execute(
        """UPDATE github_repositories SET backfill_lease_until = now() + make_interval(secs => $2),
               backfill_total = COALESCE($3, backfill_total), backfill_published = $4, updated_at = now()
           WHERE github_repo_id = $1 AND backfill_state = 'running'""",
        github_repo_id, lease_s, total, published,
    )
    return status.endswith(" 1")


async def finish_backfill(
    conn: asyncpg.Connection, github_repo_id: int, *, state: str, error: str | None = None,
    not_before: datetime | None = None,
) -> None:
    """``done``, ``failed``, or back to ``pending`` (rate-limited: after ``not_before``). Only
    from ``running``: a catch-up queued during the pass (``pending``) is not overwritten."""
    await conn.execute(
        """UPDATE github_repositories SET backfill_state = $2, backfill_error = $3,
               backfill_not_before = $4, backfill_lease_until = NULL,
               backfill_finished_at = CASE WHEN $2 IN ('done', 'failed') THEN now() END,
               updated_at = now()
           WHERE github_repo_id = $1 AND backfill_state = 'running'""",
        github_repo_id, state, error, not_before,
    )


# ---- reconciliation ------------------------------------------------------------------------------------
async def active_installations(conn: asyncpg.Connection) -> list[int]:
    return [r["id"] for r in await conn.fetch("SELECT id FROM github_installations WHERE state = 'active' ORDER BY id")]


async def repositories_to_reconcile(conn: asyncpg.Connection) -> list[asyncpg.Record]:
    """Registered repositories of active installations whose backfill is not in flight, least
    recently reconciled first (private ones too: a missed ``publicized`` is noticed)."""
    return await conn.fetch(
        """SELECT r.* FROM github_repositories r JOIN github_installations i ON i.id = r.installation_id
           WHERE r.state = 'registered' AND i.state = 'active' AND NOT r.removed AND NOT r.deleted
             AND r.backfill_state NOT IN ('pending', 'running')
           ORDER BY r.reconciled_at NULLS FIRST, r.github_repo_id"""
    )


async def mark_reconciled(conn: asyncpg.Connection, github_repo_id: int, error: str | None) -> None:
    await conn.execute(
        """UPDATE github_repositories SET reconciled_at = now(), reconcile_error = $2, updated_at = now()
           WHERE github_repo_id = $1""",
        github_repo_id, error,
    )


async def last_run_started(conn: asyncpg.Connection) -> datetime | None:
    return await conn.fetchval("SELECT max(started_at) FROM github_reconcile_runs WHERE status <> 'failed'")


async def start_run(conn: asyncpg.Connection, holder: str, repos_total: int) -> int:
    # A run left 'running' by a replica that died can never finish: close it as failed.
    await conn.execute(
        """UPDATE github_reconcile_runs SET status = 'failed', finished_at = now(),
               last_error = COALESCE(last_error, 'abandoned (the replica running it stopped)')
           WHERE status = 'running'"""
    )
    return await conn.fetchval(
        "INSERT INTO github_reconcile_runs (holder, repos_total) VALUES ($1, $2) RETURNING id",
        holder, repos_total,
    )


RUN_COUNTERS = ("repos_done", "repos_unchanged", "releases_published", "versions_hidden",
                "files_updated", "api_requests", "not_modified", "errors", "repos_added", "repos_removed")


async def set_run_total(conn: asyncpg.Connection, run_id: int, repos_total: int) -> None:
    await conn.execute("UPDATE github_reconcile_runs SET repos_total = $2 WHERE id = $1", run_id, repos_total)


async def update_run(conn: asyncpg.Connection, run_id: int, counts: dict[str, int],
                     last_error: str | None = None, status: str | None = None) -> None:
    values = [counts.get(c, 0) for c in RUN_COUNTERS]
    sets = ", ".join(f"{c} = ${i + 2}" for i, c in enumerate(RUN_COUNTERS))
    n = len(RUN_COUNTERS) + 2
    await conn.execute(
        f"""UPDATE github_reconcile_runs SET {sets},
                last_error = COALESCE(${n}, last_error),
                status = COALESCE(${n + 1}, status),
                finished_at = CASE WHEN ${n + 1}::text IS NOT NULL THEN now() ELSE finished_at END
            WHERE id = $1""",
        run_id, *values, last_error, status,
    )


async def recent_runs(conn: asyncpg.Connection, limit: int = 5) -> list[asyncpg.Record]:
    return await conn.fetch("SELECT * FROM github_reconcile_runs ORDER BY id DESC LIMIT $1", limit)


# ---- operators -----------------------------------------------------------------------------------------
async def status_counts(conn: asyncpg.Connection) -> dict[str, list[asyncpg.Record]]:
    return {
        "installations": await conn.fetch(
            "SELECT state, count(*) AS n FROM github_installations GROUP BY state ORDER BY state"),
        "repositories": await conn.fetch(
            """SELECT state, count(*) FILTER (WHERE NOT removed AND NOT deleted) AS n,
                      count(*) FILTER (WHERE removed OR deleted) AS gone
               FROM github_repositories GROUP BY state ORDER BY state"""),
        "skip_reasons": await conn.fetch(
            """SELECT skip_reason, count(*) AS n FROM github_repositories WHERE state = 'skipped'
               GROUP BY skip_reason ORDER BY n DESC LIMIT 10"""),
        "backfills": await conn.fetch(
            """SELECT backfill_state AS state, count(*) AS n, sum(backfill_published) AS published,
                      sum(backfill_total) AS total
               FROM github_repositories GROUP BY backfill_state ORDER BY backfill_state"""),
    }


async def list_repositories(conn: asyncpg.Connection, state: str | None, limit: int = 100) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT github_repo_id, full_name, installation_id, state, skip_reason, manifest_source,
                  removed, deleted, private, backfill_state, backfill_published, backfill_total,
                  backfill_error, reconciled_at, reconcile_error
           FROM github_repositories WHERE ($1::text IS NULL OR state = $1)
           ORDER BY full_name LIMIT $2""",
        state, limit,
    )


# ---- re-reads of releases published before their jars (0017_release_rereads) ----------------

async def recent_jar_counts(conn: asyncpg.Connection, github_repo_id: int, other_than_release: int,
                            n: int = 3) -> list[int]:
    """Files of the repository's newest ``n`` releases with a visible version, other than this
    release's (a release's files counted over every project it went to: 0025)."""
    return [r["jars"] for r in await conn.fetch(
        """SELECT count(f.id) AS jars
           FROM mods m JOIN mod_versions v ON v.mod_id = m.id
           LEFT JOIN version_files f ON f.version_id = v.id
           WHERE m.github_repo_id = $1 AND NOT v.hidden AND v.github_release_id <> $2
           GROUP BY v.github_release_id
           ORDER BY max(v.published_at) DESC NULLS LAST, v.github_release_id DESC LIMIT $3""",
        github_repo_id, other_than_release, n)]


async def schedule_reread(conn: asyncpg.Connection, *, github_release_id: int, github_repo_id: int,
                          tag_name: str, base_at: datetime, due_at: datetime, expected_jars: int,
                          seen_assets: list[int], max_rows: int) -> str:
    """``scheduled``; ``exists`` (a redelivery, or another action of the same release); or
    ``full`` when ``max_rows`` re-reads are pending already (the table stays bounded)."""
    row = await conn.fetchrow(
        """WITH pending AS (SELECT count(*) AS n FROM github_release_rereads),
                ins AS (
               INSERT INTO github_release_rereads (github_release_id, github_repo_id, tag_name, base_at, due_at,
                                                   expected_jars, seen_assets)
               SELECT $1, $2, left($3, 255), $4, $5, $6, $7 FROM pending WHERE n < $8
               ON CONFLICT (github_release_id) DO NOTHING
               RETURNING 1)
           SELECT (SELECT count(*) FROM ins) AS inserted, (SELECT n FROM pending) AS pending""",
        github_release_id, github_repo_id, tag_name, base_at, due_at, expected_jars, seen_assets, max_rows)
    if row["inserted"]:
        return "scheduled"
    return "full" if row["pending"] >= max_rows else "exists"


async def claim_rereads(conn: asyncpg.Connection, *, lease_s: float, holder: str,
                        limit: int) -> list[asyncpg.Record]:
    """Due re-reads not held by a live replica, leased to ``holder``, with their repository's
    name, installation and flags (a replica that dies lets its lease run out)."""
    return await conn.fetch(
        """WITH due AS (
               SELECT github_release_id FROM github_release_rereads
               WHERE due_at <= now() AND (lease_until IS NULL OR lease_until < now())
               ORDER BY due_at LIMIT $3 FOR UPDATE SKIP LOCKED)
           UPDATE github_release_rereads r
           SET lease_until = now() + make_interval(secs => $1), holder = $2, updated_at = now()
           FROM due, github_repositories g
           WHERE r.github_release_id = due.github_release_id AND g.github_repo_id = r.github_repo_id
           RETURNING r.*, g.full_name, g.installation_id, g.private, g.archived, g.removed, g.deleted""",
        lease_s, holder, limit)


async def next_reread_at(conn: asyncpg.Connection) -> datetime | None:
    """When the next re-read falls due (a leased one: when its lease runs out)."""
    return await conn.fetchval(
        "SELECT min(GREATEST(due_at, COALESCE(lease_until, due_at))) FROM github_release_rereads")


async def advance_reread(conn: asyncpg.Connection, github_release_id: int, holder: str, *, step: int,
                         due_at: datetime, seen_assets: list[int], error: str | None) -> None:
    await conn.execute(
        """UPDATE github_release_rereads SET step = $3, due_at = $4, seen_assets = $5, last_error = $6,
               lease_until = NULL, holder = NULL, updated_at = now()
           WHERE github_release_id = $1 AND holder = $2""",
        github_release_id, holder, step, due_at, seen_assets, error)


async def finish_reread(conn: asyncpg.Connection, github_release_id: int, holder: str) -> None:
    await conn.execute("DELETE FROM github_release_rereads WHERE github_release_id = $1 AND holder = $2",
                       github_release_id, holder)
