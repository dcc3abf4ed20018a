"""The outbox loop: claim due deliveries, POST them, record what the receiver answered.

Every replica runs one. A claim leases rows to this process (``notify_deliveries.lease_owner``,
their ``next_attempt_at`` moved to the lease's end) in one statement with ``FOR UPDATE SKIP
LOCKED``, so replicas never take the same row; a replica killed mid-POST leaves rows that fall
due again when the lease ends, and another replica (or this one restarted) sends them again,
with the same delivery id. The outcome is written only under the lease that sent it.

What is guaranteed (docs/notifications.md): every delivery written to the outbox is POSTed
until a 2xx is recorded, it is given up after 24 hours, its subscription is paused, or the
version stops being public; a delivery recorded as answered 2xx is never sent again (but for
the owner's "Redeliver"). The one repeat at-least-once allows: a process that dies between the
receiver's 2xx and the commit of that answer (milliseconds) leaves the row to be sent again,
with the same ``X-Indexium-Delivery``, for the receiver to drop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import socket
import time
import uuid
from datetime import datetime, timedelta

import aiohttp
import asyncpg
from yarl import URL

from indexium_db.queries import notify as notify_q
from indexium_jar.http.hops import parse_retry_after
from indexium_notify import payloads, signing
from indexium_notify.schedule import retry_delay
from indexium_notify.targets import PinnedResolver, TargetPolicy, TargetRefused
from indexium_platform import logs
from indexium_platform.jobs import is_outage

from .clock import Clock, hour_of
from .metrics import NotifyMetrics
from .settings import Settings

log = logs.get(__name__)
HEAD_BYTES = 512  # of the receiver's answer, kept in the delivery log
PRUNE_EVERY_S = 600.0
RELEASES_EVERY_S = 600.0
USER_AGENT = "Indexium-Webhooks/1"


def session(policy: TargetPolicy, settings: Settings) -> aiohttp.ClientSession:
    """The delivery session: every name resolved and checked by the target policy on the way
    to the socket (PinnedResolver), no DNS cache, no proxy from the environment, no cookies."""
    connector = aiohttp.TCPConnector(resolver=PinnedResolver(policy), use_dns_cache=False,
                                     limit=settings.concurrency, limit_per_host=4)
    return aiohttp.ClientSession(connector=connector, trust_env=False, cookie_jar=aiohttp.DummyCookieJar(),
                                 auto_decompress=False, headers={"User-Agent": USER_AGENT})


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").replace("\x00", "\ufffd")


class Sender:
    def __init__(self, pool: asyncpg.Pool, http: aiohttp.ClientSession, policy: TargetPolicy, clock: Clock,
                 settings: Settings, metrics: NotifyMetrics):
        self._pool, self._http, self._policy, self._clock = pool, http, policy, clock
        self._s, self._metrics = settings, metrics
        self._key = settings.secret_key.encode()
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._inflight: set[asyncio.Task] = set()
        self._task: asyncio.Task | None = None
        self._lease_ids = itertools.count(1)
        self._lease_prefix = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._releases: tuple[str, ...] = ()
        self._releases_at = 0.0
        self._pruned_at = time.monotonic()
        self.running = False

    # ---- lifecycle --------------------------------------------------------------------------------
    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="notify-sender")
        self.running = True

    def wake(self) -> None:
        self._wake.set()

    async def stop(self) -> None:
        """Stop claiming; let POSTs under way finish within the grace period. Rows of those cut
        short stay leased and fall due again when the lease ends (another replica sends them)."""
        self._stopping.set()
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, timeout=5)
        if self._inflight:
            _, pending = await asyncio.wait(set(self._inflight), timeout=self._s.shutdown_grace_s)
            for task in pending:
                task.cancel()
        self.running = False

    def ready_check(self):
        async def check() -> bool:
            return self.running and self._task is not None and not self._task.done()

        return check

    # ---- the loop ---------------------------------------------------------------------------------
    async def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.clear()
            free = self._s.concurrency - len(self._inflight)
            claimed = 0
            if free > 0:
                try:
                    claimed = await self._claim(free)
                    await self._housekeeping()
                except Exception as exc:
                    level = log.warning if is_outage(exc) else log.exception
                    level("notify_claim_failed", error=str(exc) or type(exc).__name__)
            if claimed and claimed == free:
                continue  # more may be due; a finishing POST wakes us when every slot is busy
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._s.poll_s):
                    await self._wake.wait()

    async def _claim(self, free: int) -> int:
        now = self._clock.now()
        lease = f"{self._lease_prefix}:{next(self._lease_ids)}"
        async with self._pool.acquire() as conn:
            rows = await notify_q.claim_due(conn, lease=lease, now=now,
                                            lease_until=now + self._clock.span(self._s.lease_s), limit=free)
        for row in rows:
            task = asyncio.create_task(self._deliver(row, lease))
            self._inflight.add(task)
            task.add_done_callback(self._finished)
        return len(rows)

    def _finished(self, task: asyncio.Task) -> None:
        self._inflight.discard(task)
        self._wake.set()  # a slot is free

    async def _housekeeping(self) -> None:
        if time.monotonic() - self._pruned_at < PRUNE_EVERY_S:
            return
        self._pruned_at = time.monotonic()
        async with self._pool.acquire() as conn:
            n = await notify_q.prune(conn, keep_finished=self._s.keep_deliveries,
                                     hours_before=hour_of(self._clock.now()) - timedelta(hours=2))
        if n:
            log.info("notify_pruned", rows=n)

    async def _release_list(self, conn) -> tuple[str, ...]:
        if not self._releases or time.monotonic() - self._releases_at > RELEASES_EVERY_S:
            self._releases = tuple(await notify_q.releases(conn))
            self._releases_at = time.monotonic()
        return self._releases

    # ---- one delivery -----------------------------------------------------------------------------
    async def _deliver(self, row, lease: str) -> None:
        fmt = row["format"]
        try:
            prepared = await self._prepare(row, lease)
            if prepared is None:
                return
            body, headers = prepared
            outcome, status, head, error, retry_after, seconds = await self._post(row["target_url"], body, headers)
            self._metrics.latency.observe(seconds)
            await self._record(row, lease, outcome, status, head, error, retry_after, seconds)
            self._metrics.attempts.labels(outcome, fmt).inc()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # PostgreSQL away while recording: the lease ends and the row goes again (same id).
            level = log.warning if is_outage(exc) else log.exception
            level("notify_delivery_failed", delivery=str(row["id"]), error=str(exc) or type(exc).__name__)

    async def _prepare(self, row, lease: str) -> tuple[bytes, dict[str, str]] | None:
        now = self._clock.now()
        async with self._pool.acquire() as conn:
            facts_row = await notify_q.version_facts(conn, row["version_id"])
            if facts_row is None or not facts_row["public"]:
                # Hidden, quarantined or held since it matched: never sent.
                await notify_q.cancelled(conn, delivery=row["id"], lease=lease, at=now,
                                         why="the version is no longer public")
                self._metrics.attempts.labels("cancelled", row["format"]).inc()
                return None
            if not await notify_q.take_hour_slot(conn, row["github_user_id"], hour_of(now),
                                                 self._s.max_deliveries_per_hour):
                await self._defer(conn, row, lease, now)
                return None
            releases = await self._release_list(conn)
        facts = self._facts(facts_row, releases)
        delivery = str(row["id"])
        if row["format"] == "discord":
            body = payloads.discord_body(facts)
        else:
            body = payloads.indexium_body(facts, delivery_id=delivery, subscription_id=str(row["subscription_id"]),
                                          created_at=row["created_at"])
        secret = signing.secret_for(self._key, row["secret_salt"])
        headers = {"Content-Type": "application/json", "Accept-Encoding": "identity",
                   "X-Indexium-Event": row["event"], "X-Indexium-Delivery": delivery,
                   "X-Indexium-Signature-256": signing.signature(secret, body)}
        if row["redeliver"]:
            headers["X-Indexium-Redelivery"] = "true"
        return body, headers

    async def _defer(self, conn, row, lease: str, now: datetime) -> None:
        """Past the owner's hourly limit: the delivery waits for the next hour, and the log says so."""
        retry_at = hour_of(now) + timedelta(hours=1)
        async with conn.transaction():
            await notify_q.deferred(conn, delivery=row["id"], lease=lease, retry_at=retry_at)
            await notify_q.log_attempt(
                conn, subscription_id=row["subscription_id"], delivery=row["id"], at=now, outcome="deferred",
                response_code=None, latency_ms=None, response_head=None, keep=self._s.log_rows,
                error=(f"your subscriptions reached {self._s.max_deliveries_per_hour} deliveries this hour; "
                       f"this one waits until {retry_at:%H:%M} UTC"))
        self._metrics.attempts.labels("deferred", row["format"]).inc()

    def _facts(self, r, releases: tuple[str, ...]) -> payloads.Facts:
        files = tuple(payloads.FileFacts(
            filename=f["filename"], url=f["url"], size=f["size"], primary=f["primary"],
            loaders=tuple(f["loaders"] or ()), game_versions=tuple(f["game_versions"] or ()),
            sha1=f["sha1"], sha256=f["sha256"], sha512=f["sha512"]) for f in r["files"])
        return payloads.Facts(
            mod_slug=r["slug"], mod_name=r["mod_name"], mod_summary=r["summary"] or "", owner=r["owner"],
            repo_full_name=r["repo_full_name"], has_icon=r["has_icon"], version_id=str(r["id"]),
            version_number=r["version_number"], version_name=r["name"] or "", version_type=r["version_type"],
            tag_name=r["tag_name"], changelog=r["changelog"] or "", published_at=r["published_at"],
            loaders=tuple(r["loaders"] or ()), game_versions=tuple(r["game_versions"] or ()), files=files,
            new_project=r["new_project"], public_url=self._s.public_url.rstrip("/"),
            github_url=self._s.github_url.rstrip("/"), releases=releases)

    async def _post(self, target: str, body: bytes, headers: dict[str, str]):
        """(outcome, status, first bytes, error, Retry-After seconds, seconds taken)."""
        started = time.perf_counter()
        status, head, retry_after = None, None, None
        try:
            url = self._policy.check_literal(target)
            async with self._http.post(url, data=body, headers=headers, allow_redirects=False,
                                       timeout=aiohttp.ClientTimeout(total=self._s.timeout_s)) as resp:
                status = resp.status
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                head = _text(await resp.content.read(HEAD_BYTES))
        except TargetRefused as exc:
            return "refused", None, None, f"target refused: {exc.reason}", None, time.perf_counter() - started
        except aiohttp.ClientConnectorDNSError as exc:
            seconds = time.perf_counter() - started
            if isinstance(exc.os_error, TargetRefused):
                return "refused", None, None, f"target refused: {exc.os_error.reason}", None, seconds
            return "network", None, None, "the target's name cannot be resolved", None, seconds
        except TimeoutError:
            return ("timeout", status, head, f"no answer within {self._s.timeout_s:g} s", None,
                    time.perf_counter() - started)
        except (aiohttp.ClientError, OSError) as exc:
            return ("network", status, head, f"connection failed ({type(exc).__name__})", None,
                    time.perf_counter() - started)
        seconds = time.perf_counter() - started
        if 200 <= status < 300:
            return "ok", status, head, None, None, seconds
        error = f"HTTP {status}" + (" (redirects are not followed)" if 300 <= status < 400 else "")
        return "http_error", status, head, error, retry_after, seconds

    async def _record(self, row, lease: str, outcome: str, status: int | None, head: str | None,
                      error: str | None, retry_after: float | None, seconds: float) -> None:
        now = self._clock.now()
        latency_ms = round(seconds * 1000)
        async with self._pool.acquire() as conn, conn.transaction():
            await notify_q.log_attempt(conn, subscription_id=row["subscription_id"], delivery=row["id"], at=now,
                                       outcome=outcome, response_code=status, latency_ms=latency_ms,
                                       response_head=head, error=error, keep=self._s.log_rows)
            if outcome == "ok":
                kept = await notify_q.delivered(conn, delivery=row["id"], lease=lease,
                                                subscription_id=row["subscription_id"], at=now, status=status)
                state = "delivered" if kept else "lost"
            else:
                left = (row["deadline_at"] - now).total_seconds()
                delay = retry_delay(row["attempts"], base_s=self._s.retry_base_s, cap_s=self._s.retry_max_s,
                                    retry_after_s=retry_after, longest_s=max(left, 0.0))
                state = await notify_q.failed(
                    conn, delivery=row["id"], lease=lease, subscription_id=row["subscription_id"], at=now,
                    status=status, error=error or outcome, retry_at=now + timedelta(seconds=delay),
                    pause_after_failures=self._s.pause_after_failures, pause_after_s=self._s.pause_after_s)
        if state == "paused":
            self._metrics.paused.inc()
        elif state == "failed":
            self._metrics.given_up.inc()
        log.info("notify_delivery", delivery=str(row["id"]), subscription=str(row["subscription_id"]),
                 outcome=outcome, status=status, state=state, attempt=row["attempts"], latency_ms=latency_ms,
                 host=_host(row["target_url"]))


def _host(url: str) -> str | None:
    """Only the host goes in logs: a target URL may hold a credential (a Discord webhook's token)."""
    try:
        return URL(url).host
    except Exception:
        return None
