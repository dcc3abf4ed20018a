"""Webhook subscriptions, their outbox (``notify_deliveries``), the delivery log
(``notify_attempts``), the hourly per-user count and personal API tokens (migration 0021,
docs/schema.md "Notifications", docs/notifications.md).

Times that decide a delivery's fate (due, deadline, failing since) are the notify role's
clock, passed in as ``now``: a test runs that clock fast (INDEXIUM_NOTIFY_CLOCK_SPEED) to
live through 24 hours of retries in seconds.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import asyncpg

from .catalog import PUBLIC_VERSION

# The id a receiver sees for (subscription, version): the same whenever that pair is
# written, so even a row pruned and written again later carries the id the receiver knows.
_DELIVERY_NS = uuid.UUID("6f1d3c1e-2b8e-4e55-9a51-0c6c4f3d9a21")

SUBSCRIPTION_COLUMNS = """s.id, s.github_user_id, s.owner_login, s.kind, s.mod_id,
       (SELECT slug FROM mods x WHERE x.id = s.mod_id) AS mod_slug, s.author_github_id, s.author_login,
       s.search_q, s.search_categories, s.loaders, s.game_versions, s.game_version_min, s.version_types,
       s.format, s.target_url, s.state, s.paused_at, s.paused_reason, s.failing_since,
       s.consecutive_failures, s.created_at, s.updated_at"""


def delivery_id(subscription_id, version_id) -> uuid.UUID:
    return uuid.uuid5(_DELIVERY_NS, f"{subscription_id}:{version_id}")


# ---- subscriptions (the API) ---------------------------------------------------------------------

async def create_subscription(conn: asyncpg.Connection, *, limit: int, github_user_id: int, owner_login: str,
                              kind: str, mod_id=None, author_github_id: int | None = None,
                              author_login: str | None = None, search_q: str | None = None,
                              search_categories: list[str] = (), loaders: list[str] = (),
                              game_versions: list[str] = (), game_version_min: str | None = None,
                              version_types: list[str] = (), format: str, target_url: str,
                              secret_salt: bytes) -> asyncpg.Record | None:
    """The new subscription, or None when the user already has ``limit`` of them."""
    async with conn.transaction():
        # One user's concurrent creations queue here, so two cannot both see room for one more.
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('notify_subscriptions', $1))",
                           github_user_id)
        n = await conn.fetchval("SELECT count(*) FROM notify_subscriptions WHERE github_user_id = $1",
                                github_user_id)
        if n >= limit:
            return None
        new_id = await conn.fetchval(
            """INSERT INTO notify_subscriptions (github_user_id, owner_login, kind, mod_id, author_github_id,
                   author_login, search_q, search_categories, loaders, game_versions, game_version_min,
                   version_types, format, target_url, secret_salt)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id""",
            github_user_id, owner_login, kind, mod_id, author_github_id, author_login, search_q,
            list(search_categories), list(loaders), list(game_versions), game_version_min, list(version_types),
            format, target_url, secret_salt)
        return await get_subscription(conn, github_user_id, new_id)


async def count_subscriptions(conn: asyncpg.Connection, github_user_id: int) -> int:
    return await conn.fetchval("SELECT count(*) FROM notify_subscriptions WHERE github_user_id = $1",
                               github_user_id)


async def subscriptions_of(conn: asyncpg.Connection, github_user_id: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM notify_subscriptions s WHERE s.github_user_id = $1 "
        "ORDER BY s.created_at, s.id", github_user_id)


async def get_subscription(conn: asyncpg.Connection, github_user_id: int, subscription_id) -> asyncpg.Record | None:
    """One of this user's subscriptions (another user's is None, as a missing one is)."""
    return await conn.fetchrow(
        f"SELECT {SUBSCRIPTION_COLUMNS} FROM notify_subscriptions s WHERE s.id = $1 AND s.github_user_id = $2",
        subscription_id, github_user_id)


async def delete_subscription(conn: asyncpg.Connection, github_user_id: int, subscription_id) -> bool:
    return bool(await conn.fetchval(
        "DELETE FROM notify_subscriptions WHERE id = $1 AND github_user_id = $2 RETURNING true",
        subscription_id, github_user_id))


async def resume(conn: asyncpg.Connection, github_user_id: int, subscription_id, *,
                 give_up_s: float) -> bool:
    """Active again, its failure count reset; what was pending goes at once, with a fresh
    retry window."""
    async with conn.transaction():
        done = await conn.fetchval(
            """UPDATE notify_subscriptions SET state = 'active', paused_at = NULL, paused_reason = NULL,
                      failing_since = NULL, consecutive_failures = 0, updated_at = now()
               WHERE id = $1 AND github_user_id = $2 RETURNING true""", subscription_id, github_user_id)
        if done:
            await conn.execute(
                """UPDATE notify_deliveries SET next_attempt_at = now(), lease_owner = NULL,
                          deadline_at = now() + make_interval(secs => $2)
                   WHERE subscription_id = $1 AND state = 'pending'""", subscription_id, give_up_s)
        return bool(done)


async def redeliver(conn: asyncpg.Connection, github_user_id: int, subscription_id, delivery: uuid.UUID, *,
                    give_up_s: float) -> bool:
    """Send a delivery again (same id, ``redelivery`` marked), whatever became of it."""
    return bool(await conn.fetchval(
        """UPDATE notify_deliveries d SET state = 'pending', next_attempt_at = now(), lease_owner = NULL,
                  deadline_at = now() + make_interval(secs => $4), redeliver = true, finished_at = NULL
           FROM notify_subscriptions s
           WHERE d.id = $3 AND d.subscription_id = $1 AND s.id = d.subscription_id AND s.github_user_id = $2
           RETURNING true""", subscription_id, github_user_id, delivery, give_up_s))


async def deliveries_of(conn: asyncpg.Connection, subscription_id, limit: int,
                        offset: int = 0) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT d.id, d.version_id, m.slug AS mod_slug, v.version_number, d.event, d.state, d.attempts,
                  d.next_attempt_at, d.deadline_at, d.redeliver, d.last_status, d.last_error, d.created_at,
                  d.finished_at
           FROM notify_deliveries d JOIN mod_versions v ON v.id = d.version_id JOIN mods m ON m.id = v.mod_id
           WHERE d.subscription_id = $1 ORDER BY d.created_at DESC, d.id LIMIT $2 OFFSET $3""",
        subscription_id, limit, offset)


async def count_deliveries(conn: asyncpg.Connection, subscription_id) -> int:
    return await conn.fetchval("SELECT count(*) FROM notify_deliveries WHERE subscription_id = $1", subscription_id)


async def attempts_for(conn: asyncpg.Connection, subscription_id, delivery_ids: list,
                       per_delivery: int) -> list[asyncpg.Record]:
    """The newest ``per_delivery`` attempts of each of these deliveries (newest first), each
    with ``n``: how many the log keeps of that delivery."""
    return await conn.fetch(
        """SELECT * FROM (
               SELECT id, delivery_id, attempted_at, outcome, response_code, latency_ms, response_head, error,
                      row_number() OVER (PARTITION BY delivery_id ORDER BY id DESC) AS rn,
                      count(*) OVER (PARTITION BY delivery_id) AS n
               FROM notify_attempts WHERE subscription_id = $1 AND delivery_id = ANY ($2::uuid[])) x
           WHERE rn <= $3 ORDER BY id DESC""", subscription_id, list(delivery_ids), per_delivery)


async def last_errors(conn: asyncpg.Connection, subscription_id, limit: int) -> list[asyncpg.Record]:
    """The subscription's newest failed attempts (what a paused subscription shows)."""
    return await conn.fetch(
        """SELECT a.attempted_at, a.outcome, a.response_code, a.error, v.version_number
           FROM notify_attempts a LEFT JOIN notify_deliveries d ON d.id = a.delivery_id
                LEFT JOIN mod_versions v ON v.id = d.version_id
           WHERE a.subscription_id = $1 AND a.outcome NOT IN ('ok', 'deferred', 'cancelled')
           ORDER BY a.id DESC LIMIT $2""", subscription_id, limit)


async def attempts_of(conn: asyncpg.Connection, subscription_id, limit: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT id, delivery_id, attempted_at, outcome, response_code, latency_ms, response_head, error
           FROM notify_attempts WHERE subscription_id = $1 ORDER BY id DESC LIMIT $2""", subscription_id, limit)


async def deliveries_this_hour(conn: asyncpg.Connection, github_user_id: int, hour: datetime) -> int:
    return await conn.fetchval(
        "SELECT COALESCE((SELECT deliveries FROM notify_user_hours WHERE github_user_id = $1 AND hour = $2), 0)",
        github_user_id, hour)


async def mod_for_subscription(conn: asyncpg.Connection, slug: str) -> asyncpg.Record | None:
    """A mod by slug, listed or not yet (a subscriber may wait for its first version); not a hidden one."""
    return await conn.fetchrow("SELECT id, slug FROM mods WHERE slug = $1 AND NOT hidden", slug)


async def author_by_login(conn: asyncpg.Connection, login: str) -> asyncpg.Record | None:
    return await conn.fetchrow("SELECT github_id, login FROM authors WHERE lower(login) = lower($1) LIMIT 1",
                               login)


async def known_game_versions(conn: asyncpg.Connection, ids: list[str]) -> set[str]:
    return {r["id"] for r in await conn.fetch("SELECT id FROM minecraft_versions WHERE id = ANY($1::text[])", ids)}


# ---- matching (the notify role's consumer) ---------------------------------------------------------

# The subscription's own filters, all on one file of the version (as every facet of search).
_FILE_FILTERS = """EXISTS (SELECT 1 FROM version_files f WHERE f.version_id = v.id
        AND (cardinality(s.loaders) = 0 OR f.loaders && s.loaders)
        AND (cardinality(s.game_versions) = 0 OR f.game_versions && s.game_versions)
        AND (s.game_version_min IS NULL OR EXISTS (
             SELECT 1 FROM minecraft_versions mv JOIN minecraft_versions lo ON lo.id = s.game_version_min
             WHERE mv.id = ANY (f.game_versions) AND mv.position <= lo.position)))"""
_MATCH_COMMON = f"""s.state = 'active'
    AND (cardinality(s.version_types) = 0 OR v.version_type = ANY (s.version_types))
    AND {_FILE_FILTERS}"""


async def public_version(conn: asyncpg.Connection, version_id) -> asyncpg.Record | None:
    """The version if public now (its mod listed), with what matching needs; else None."""
    return await conn.fetchrow(
        f"""SELECT v.id, v.mod_id, m.author_github_id FROM mod_versions v JOIN mods m ON m.id = v.mod_id
            WHERE v.id = $1 AND {PUBLIC_VERSION} AND m.listed AND NOT m.hidden""", version_id)


async def candidates(conn: asyncpg.Connection, version_id) -> list[asyncpg.Record]:
    """Active subscriptions whose kind and filters the version meets: every one to its mod or
    author, and every saved search whose per-file filters it meets (its text and categories
    are the catalogue's to judge: ``sqlpath.finds_mod``)."""
    frm = "notify_subscriptions s, mod_versions v JOIN mods m ON m.id = v.mod_id"
    cols = "s.id, s.kind, s.github_user_id, s.search_q, s.search_categories"
    return await conn.fetch(
        f"""SELECT {cols} FROM {frm} WHERE v.id = $1 AND s.kind = 'mod' AND s.mod_id = v.mod_id AND {_MATCH_COMMON}
            UNION ALL
            SELECT {cols} FROM {frm} WHERE v.id = $1 AND s.kind = 'author'
                AND s.author_github_id = m.author_github_id AND {_MATCH_COMMON}
            UNION ALL
            SELECT {cols} FROM {frm} WHERE v.id = $1 AND s.kind = 'search' AND {_MATCH_COMMON}""",
        version_id)


async def enqueue(conn: asyncpg.Connection, version_id, subscription_ids: list, *, event: str, now: datetime,
                  give_up_s: float) -> list[uuid.UUID]:
    """One pending delivery per subscription, unless that pair has one already; the ids written.
    ON CONFLICT without a target: the id is the pair's (delivery_id), so two jobs of one version
    inserting at once (a redelivery beside the first run) may meet on the primary key first, which
    a target of (subscription_id, version_id) left an error (UniqueViolationError in a CI run)."""
    if not subscription_ids:
        return []
    ids = [delivery_id(s, version_id) for s in subscription_ids]
    rows = await conn.fetch(
        """INSERT INTO notify_deliveries (id, subscription_id, version_id, event, next_attempt_at, deadline_at,
                                          created_at)
           SELECT d, s, $3, $4, $5::timestamptz, $5::timestamptz + make_interval(secs => $6), $5::timestamptz
           FROM unnest($1::uuid[], $2::uuid[]) AS x(d, s)
           ON CONFLICT DO NOTHING RETURNING id""",
        ids, list(subscription_ids), version_id, event, now, give_up_s)
    return [r["id"] for r in rows]


# ---- delivering (the notify role's outbox loop) ---------------------------------------------------

async def claim_due(conn: asyncpg.Connection, *, lease: str, now: datetime, lease_until: datetime,
                    limit: int) -> list[asyncpg.Record]:
    """Take up to ``limit`` due deliveries of active subscriptions: each is leased to ``lease``
    until ``lease_until`` (its next_attempt_at moves there, so a replica that dies mid-POST
    leaves a row that falls due again by itself). Concurrent claimers skip each other's rows."""
    return await conn.fetch(
        """WITH due AS (
               SELECT d.id FROM notify_deliveries d JOIN notify_subscriptions s ON s.id = d.subscription_id
               WHERE d.state = 'pending' AND d.next_attempt_at <= $2 AND s.state = 'active'
               ORDER BY d.next_attempt_at LIMIT $4
               FOR UPDATE OF d SKIP LOCKED)
           UPDATE notify_deliveries d SET lease_owner = $1, next_attempt_at = $3, attempts = d.attempts + 1
           FROM due, notify_subscriptions s
           WHERE d.id = due.id AND s.id = d.subscription_id
           RETURNING d.id, d.subscription_id, d.version_id, d.event, d.attempts, d.deadline_at, d.redeliver,
                     d.created_at, s.github_user_id, s.target_url, s.format, s.secret_salt""",
        lease, now, lease_until, limit)


async def version_facts(conn: asyncpg.Connection, version_id) -> asyncpg.Record | None:
    """What a delivery tells of a version, and whether it is public right now."""
    return await conn.fetchrow(
        f"""SELECT v.id, v.version_number, v.name, v.version_type, v.changelog, v.published_at, v.tag_name,
                  v.loaders,
                  ARRAY(SELECT g FROM unnest(v.game_versions) AS g LEFT JOIN minecraft_versions mv ON mv.id = g
                        ORDER BY mv.position NULLS LAST, g) AS game_versions,
                  m.slug, m.name AS mod_name, m.summary, m.repo_full_name,
                  (SELECT login FROM authors a WHERE a.github_id = m.author_github_id) AS owner,
                  EXISTS (SELECT 1 FROM mod_icons i WHERE i.mod_id = m.id) AS has_icon,
                  ({PUBLIC_VERSION} AND m.listed AND NOT m.hidden) AS public,
                  NOT EXISTS (SELECT 1 FROM mod_versions o WHERE o.mod_id = v.mod_id AND o.id <> v.id
                              AND o.status = 'public' AND NOT o.hidden AND o.created_at < v.created_at)
                      AS new_project,
                  COALESCE((SELECT json_agg(json_build_object(
                        'filename', f.filename, 'url', f.url, 'size', f.size, 'primary', f.is_primary,
                        'loaders', f.loaders, 'game_versions', f.game_versions,
                        'sha1', f.sha1, 'sha256', f.sha256, 'sha512', f.sha512)
                        ORDER BY f.is_primary DESC, f.filename)
                     FROM version_files f WHERE f.version_id = v.id), '[]') AS files
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE v.id = $1""", version_id)


async def releases(conn: asyncpg.Connection) -> list[str]:
    """Minecraft releases, newest first (compact game-version ranges)."""
    return [r["id"] for r in await conn.fetch(
        "SELECT id FROM minecraft_versions WHERE type = 'release' ORDER BY position")]


async def take_hour_slot(conn: asyncpg.Connection, github_user_id: int, hour: datetime, limit: int) -> bool:
    """Count one POST for this user in this hour, unless ``limit`` were made already."""
    return await conn.fetchval(
        """INSERT INTO notify_user_hours AS h (github_user_id, hour, deliveries) VALUES ($1, $2, 1)
           ON CONFLICT (github_user_id, hour) DO UPDATE SET deliveries = h.deliveries + 1
               WHERE h.deliveries < $3
           RETURNING true""", github_user_id, hour, limit) or False


async def log_attempt(conn: asyncpg.Connection, *, subscription_id, delivery: uuid.UUID, at: datetime,
                      outcome: str, response_code: int | None, latency_ms: int | None,
                      response_head: str | None, error: str | None, keep: int) -> None:
    """One row of the delivery log; the subscription's rows past the newest ``keep`` go."""
    await conn.execute(
        """INSERT INTO notify_attempts (subscription_id, delivery_id, attempted_at, outcome, response_code,
                                        latency_ms, response_head, error)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)""",
        subscription_id, delivery, at, outcome, response_code, latency_ms,
        None if response_head is None else response_head[:512], None if error is None else error[:500])
    await conn.execute(
        """DELETE FROM notify_attempts WHERE subscription_id = $1 AND id <= (
               SELECT id FROM notify_attempts WHERE subscription_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1)""",
        subscription_id, keep)


async def delivered(conn: asyncpg.Connection, *, delivery: uuid.UUID, lease: str, subscription_id,
                    at: datetime, status: int) -> bool:
    """A 2xx: the delivery is done and its subscription's failure count starts again. False
    when the lease was lost meanwhile (another replica took the row: it will send it too)."""
    done = await conn.fetchval(
        """UPDATE notify_deliveries SET state = 'delivered', finished_at = $3, last_status = $4,
                  last_error = NULL, lease_owner = NULL
           WHERE id = $1 AND lease_owner = $2 AND state = 'pending' RETURNING true""",
        delivery, lease, at, status)
    await conn.execute(
        """UPDATE notify_subscriptions SET consecutive_failures = 0, failing_since = NULL
           WHERE id = $1 AND (consecutive_failures <> 0 OR failing_since IS NOT NULL)""", subscription_id)
    return bool(done)


async def failed(conn: asyncpg.Connection, *, delivery: uuid.UUID, lease: str, subscription_id, at: datetime,
                 status: int | None, error: str, retry_at: datetime, pause_after_failures: int,
                 pause_after_s: float) -> str:
    """A failed POST: the subscription's failure run grows (paused past either bound); the
    delivery goes again at ``retry_at``, or is given up ('failed') past its deadline, unless
    its subscription was just paused (then it waits for the resume). Returns the delivery's
    state: 'pending', 'failed', 'paused' or 'lost' (the lease was taken meanwhile)."""
    async with conn.transaction():
        row = await conn.fetchrow(
            "SELECT deadline_at FROM notify_deliveries WHERE id = $1 AND lease_owner = $2 AND state = 'pending' "
            "FOR UPDATE", delivery, lease)
        if row is None:
            return "lost"
        sub = await conn.fetchrow(
            """UPDATE notify_subscriptions SET consecutive_failures = consecutive_failures + 1,
                      failing_since = COALESCE(failing_since, $2)
               WHERE id = $1 RETURNING consecutive_failures, failing_since, state""", subscription_id, at)
        # Paused already (by another delivery's failure, a moment ago): this one waits too.
        paused = sub is None or sub["state"] != "active"
        if not paused and (sub["consecutive_failures"] >= pause_after_failures
                           or at - sub["failing_since"] >= timedelta(seconds=pause_after_s)):
            reason = (f"{sub['consecutive_failures']} deliveries failed in a row"
                      if sub["consecutive_failures"] >= pause_after_failures
                      else f"deliveries failed for {pause_after_s / 3600:g} hours")
            await conn.execute(
                """UPDATE notify_subscriptions SET state = 'paused', paused_at = $2, paused_reason = $3,
                          updated_at = now() WHERE id = $1""", subscription_id, at, f"{reason}; last: {error}"[:500])
            paused = True
        give_up = not paused and at >= row["deadline_at"]
        await conn.execute(
            """UPDATE notify_deliveries SET lease_owner = NULL, last_status = $2, last_error = $3,
                      state = CASE WHEN $4::boolean THEN 'failed' ELSE 'pending' END,
                      finished_at = CASE WHEN $4::boolean THEN $5::timestamptz END, next_attempt_at = $6
               WHERE id = $1""", delivery, status, error[:500], give_up, at, retry_at)
        return "paused" if paused else ("failed" if give_up else "pending")


async def deferred(conn: asyncpg.Connection, *, delivery: uuid.UUID, lease: str, retry_at: datetime) -> None:
    """Past the user's hourly limit: not an attempt; the delivery waits for the next hour."""
    await conn.execute(
        """UPDATE notify_deliveries SET lease_owner = NULL, next_attempt_at = $3, attempts = attempts - 1
           WHERE id = $1 AND lease_owner = $2""", delivery, lease, retry_at)


async def cancelled(conn: asyncpg.Connection, *, delivery: uuid.UUID, lease: str, at: datetime, why: str) -> None:
    """The version is no longer public (hidden, quarantined): nothing is sent."""
    await conn.execute(
        """UPDATE notify_deliveries SET state = 'cancelled', lease_owner = NULL, finished_at = $3,
                  last_error = $4, attempts = attempts - 1
           WHERE id = $1 AND lease_owner = $2""", delivery, lease, at, why[:500])


async def prune(conn: asyncpg.Connection, *, keep_finished: int, hours_before: datetime) -> int:
    """Housekeeping: finished deliveries past the newest ``keep_finished`` per subscription, and
    hourly counts older than ``hours_before``."""
    n = await conn.execute(
        """DELETE FROM notify_deliveries d USING (
               SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY subscription_id
                                                            ORDER BY created_at DESC, id) AS rn
                               FROM notify_deliveries WHERE state <> 'pending') x WHERE rn > $1) old
           WHERE d.id = old.id""", keep_finished)
    m = await conn.execute("DELETE FROM notify_user_hours WHERE hour < $1", hours_before)
    return int(n.split()[-1]) + int(m.split()[-1])


# ---- personal API tokens (the API) ----------------------------------------------------------------

async def create_token(conn: asyncpg.Connection, *, limit: int, github_user_id: int, login: str, name: str,
                       token_hash: bytes, prefix: str) -> asyncpg.Record | None:
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended('user_api_tokens', $1))", github_user_id)
        if await conn.fetchval("SELECT count(*) FROM user_api_tokens WHERE github_user_id = $1",
                               github_user_id) >= limit:
            return None
        return await conn.fetchrow(
            """INSERT INTO user_api_tokens (github_user_id, login, name, token_hash, prefix)
               VALUES ($1, $2, $3, $4, $5) RETURNING id, name, prefix, created_at, last_used_at""",
            github_user_id, login, name, token_hash, prefix)


async def tokens_of(conn: asyncpg.Connection, github_user_id: int) -> list[asyncpg.Record]:
    return await conn.fetch(
        """SELECT id, name, prefix, created_at, last_used_at FROM user_api_tokens
           WHERE github_user_id = $1 ORDER BY created_at, id""", github_user_id)


async def delete_token(conn: asyncpg.Connection, github_user_id: int, token_id) -> bool:
    return bool(await conn.fetchval(
        "DELETE FROM user_api_tokens WHERE id = $1 AND github_user_id = $2 RETURNING true", token_id, github_user_id))


async def user_of_token(conn: asyncpg.Connection, token_hash: bytes) -> asyncpg.Record | None:
    """The token's user; its last use noted at most once an hour (not a write per request)."""
    row = await conn.fetchrow("SELECT id, github_user_id, login, last_used_at FROM user_api_tokens "
                              "WHERE token_hash = $1", token_hash)
    if row is not None:
        await conn.execute(
            """UPDATE user_api_tokens SET last_used_at = now()
               WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 hour')""", row["id"])
    return row
