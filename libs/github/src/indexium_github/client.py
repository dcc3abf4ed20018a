"""``GitHubClient``: the one GitHub REST client of a process, shared by every caller.

* credentials: the App's JWT (``app=True``) or an installation token
  (``installation_id=...``), minted on demand, cached, refreshed once on a 401;
* quota: one :class:`~.ratelimit.Bucket` per credential; a request that would find
  it empty (or below the caller's ``reserve``) waits for the reset, 403/429 answers
  wait for ``Retry-After``/the reset/a secondary back-off, and a wait longer than
  ``max_wait_s`` raises :class:`RateLimited` so a consumer can nak with that delay;
* conditional GETs: an ETag cache; a 304 is answered from it (``not_modified``);
* ``Link`` pagination; redirects (renamed repositories) followed on the API host; mutations spaced ``mutation_interval_s`` apart per credential,
  as GitHub asks; Authorization is never sent to a host other than the API's.
"""

from __future__ import annotations

import asyncio
import json as _json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass

import aiohttp
import msgspec
from multidict import CIMultiDict
from yarl import URL

from .auth import AppConfig, AppJwt, InstallationTokens, parse_expiry
from .errors import GitHubError, InstallationUnavailable, NotFound, RateLimited, Unauthorized
from .etags import Cached, EtagCache
from .links import next_link
from .metrics import ClientMetrics, status_class
from .ratelimit import Bucket, limit_wait

API_VERSION = "2022-11-28"
MAX_LIMIT_WAITS = 8  # per request: a server that keeps saying "wait" eventually becomes an error
MAX_PAGES = 1000
MAX_REDIRECTS = 3


@dataclass(frozen=True)
class Response:
    status: int
    url: str
    headers: Mapping[str, str]
    body: bytes
    not_modified: bool = False  # answered 304 and served from the ETag cache (no quota spent)

    def json(self):
        return _json.loads(self.body) if self.body else None

    def decode(self, type_):
        return msgspec.json.decode(self.body, type=type_)

    @property
    def next_url(self) -> str | None:
        return next_link(self.headers.get("Link"))


@dataclass
class Counters:
    """Totals since start; a reconciliation pass reports its own share as a difference."""

    requests: int = 0
    not_modified: int = 0
    waits: int = 0
    waited_s: float = 0.0


def _message(body: bytes) -> str:
    try:
        data = _json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace")
    return str(data.get("message", "")) if isinstance(data, dict) else ""


class GitHubClient:
    def __init__(
        self,
        session: aiohttp.ClientSession,
        config: AppConfig,
        *,
        metrics: ClientMetrics | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        max_wait_s: float = 900.0,
        retries: int = 3,
        retry_base_s: float = 1.0,
        mutation_interval_s: float = 1.0,
        concurrency_per_credential: int = 8,
        etag_cache: EtagCache | None = None,
        user_agent: str = "Indexium",
    ):
        self._session, self._config, self._metrics = session, config, metrics
        self._clock, self._sleep = clock, sleep
        self._max_wait, self._retries, self._retry_base = max_wait_s, retries, retry_base_s
        self._mutation_interval = mutation_interval_s
        self._concurrency = concurrency_per_credential
        self._etags = etag_cache or EtagCache()
        self._user_agent = user_agent
        self._api = URL(config.api_url.rstrip("/"))
        self._jwt = AppJwt(config, clock)
        self.tokens = InstallationTokens(self._mint, clock)
        self._buckets: dict[str, Bucket] = {}
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._last_mutation: dict[str, float] = {}
        self.counters = Counters()

    @property
    def app_id(self) -> int:
        return self._config.app_id

    def bucket(self, *, installation_id: int | None = None, app: bool = False) -> Bucket:
        return self._buckets.setdefault(self._key(installation_id, app), Bucket())

    # ---- the request loop -------------------------------------------------------------------
    async def request(
        self, method: str, url: str, *, installation_id: int | None = None, app: bool = False,
        params: Mapping[str, str | int] | None = None, json: object = None,
        accept: str = "application/vnd.github+json", op: str = "other", conditional: bool = True,
        reserve: int = 0, max_wait_s: float | None = None, if_none_match: str | None = None,
    ) -> Response:
        """``if_none_match``: an ETag the caller stored itself (the README's, kept in PostgreSQL
        across restarts): sent instead of the in-memory cache's, and a 304 answers with status
        304, ``not_modified`` and no body, for the caller to keep what it has."""
        if if_none_match is not None:
            conditional = False  # the caller's ETag, not the cache's
        target = self._resolve(url, params)
        key = self._key(installation_id, app)
        bucket = self._buckets.setdefault(key, Bucket())
        max_wait = self._max_wait if max_wait_s is None else max_wait_s
        cache_key = (key, str(target))
        refreshed = False
        transient = limit_waits = redirects = 0
        while True:
            await self._wait_for_quota(bucket, reserve, max_wait, op)
            headers = {"Accept": accept, "User-Agent": self._user_agent,
                       "X-GitHub-Api-Version": API_VERSION}
            credential = await self._credential(installation_id, app)
            if credential:
                headers["Authorization"] = f"Bearer {credential}"
            cached = self._etags.get(cache_key) if method == "GET" and conditional else None
            if cached is not None:
                headers["If-None-Match"] = cached.etag
            elif if_none_match is not None and method == "GET":
                headers["If-None-Match"] = if_none_match
            if method != "GET":
                await self._space_mutations(key)
            try:
                async with self._slot(key):
                    async with self._session.request(method, target, headers=headers, json=json,
                                                     allow_redirects=False) as resp:
                        status, rh, body = resp.status, CIMultiDict(resp.headers), await resp.read()
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                self._count(op, 0)
                transient += 1
                if transient > self._retries:
                    raise GitHubError(0, f"{type(exc).__name__}: {exc}", op=op) from None
                await self._sleep(self._retry_base * 2 ** (transient - 1))
                continue
            self._count(op, status)
            self._observe(bucket, rh, installation_id is not None)
            if status == 304 and cached is not None:
                bucket.after_success()
                self.counters.not_modified += 1
                headers = CIMultiDict(cached.headers)
                headers.update(_rate_headers(rh))
                return Response(200, str(target), headers, cached.body, not_modified=True)
            if status == 304 and if_none_match is not None:
                bucket.after_success()
                self.counters.not_modified += 1
                return Response(304, str(target), rh, b"", not_modified=True)
            if 200 <= status < 300:
                bucket.after_success()
                if method == "GET" and conditional and rh.get("ETag"):
                    self._etags.put(cache_key, Cached(rh["ETag"], rh, body))
                return Response(status, str(target), rh, body)
            if status in (301, 302, 307, 308) and rh.get("Location") and redirects < MAX_REDIRECTS:
                redirects += 1  # a renamed or transferred repository: same host, new path
                target = self._resolve(rh["Location"], None)
                continue
            if status == 401 and (installation_id is not None or app) and not refreshed:
                refreshed = True  # revoked or expired early: mint a fresh credential once
                if installation_id is not None:
                    self.tokens.invalidate(installation_id, credential)
                else:
                    self._jwt.drop()
                continue
            message = _message(body)
            limited = limit_wait(status, rh, message, self._clock(), bucket)
            if limited is not None:
                limit_waits += 1
                if limit_waits > MAX_LIMIT_WAITS:
                    raise RateLimited(self._clock() + limited[0], limited[0], op=op, reason=limited[1])
                continue  # the wait itself happens at the top, from the bucket's state
            if status >= 500 and transient < self._retries:
                transient += 1
                await self._sleep(self._retry_base * 2 ** (transient - 1))
                continue
            if status == 404:
                raise NotFound(status, message, op=op)
            if status == 401:
                raise Unauthorized(status, message, op=op)
            raise GitHubError(status, message, op=op)

    async def get(self, url: str, **kw) -> Response:
        return await self.request("GET", url, **kw)

    async def paginate(self, url: str, *, per_page: int = 100,
                       params: Mapping[str, str | int] | None = None, **kw) -> AsyncIterator[Response]:
        """Every page, following ``Link: rel="next"`` (each page a conditional request)."""
        resp = await self.request("GET", url, params={**(params or {}), "per_page": per_page}, **kw)
        yield resp
        for _ in range(MAX_PAGES):
            nxt = resp.next_url
            if not nxt:
                return
            resp = await self.request("GET", nxt, **kw)
            yield resp
        raise GitHubError(0, f"more than {MAX_PAGES} pages", op=kw.get("op", "other"))

    # ---- pieces -------------------------------------------------------------------------------
    def _resolve(self, url: str, params: Mapping[str, str | int] | None) -> URL:
        target = URL(url) if url.startswith(("http://", "https://")) else URL(f"{self._api}/{url.lstrip('/')}")
        if target.origin() != self._api.origin():
            # Never send a credential to another host, whatever a Link header says.
            raise GitHubError(0, f"refusing to call {target.host}: not the API host", op="resolve")
        if params:
            target = target.update_query({k: str(v) for k, v in params.items()})
        return target

    @staticmethod
    def _key(installation_id: int | None, app: bool) -> str:
        if installation_id is not None:
            return f"installation:{installation_id}"
        return "app" if app else "anonymous"

    def _slot(self, key: str) -> asyncio.Semaphore:
        return self._slots.setdefault(key, asyncio.Semaphore(self._concurrency))

    async def _credential(self, installation_id: int | None, app: bool) -> str | None:
        if installation_id is not None:
            return await self.tokens.get(installation_id)
        return self._jwt.get() if app else None

    async def _mint(self, installation_id: int) -> tuple[str, float]:
        try:
            resp = await self.request("POST", f"/app/installations/{installation_id}/access_tokens",
                                      app=True, op="create_token")
        except (NotFound, GitHubError) as exc:
            if exc.status in (403, 404):
                raise InstallationUnavailable(exc.status, exc.message, op="create_token") from None
            raise
        data = resp.json()
        if self._metrics:
            self._metrics.tokens.inc()
        return data["token"], parse_expiry(data["expires_at"])

    async def _wait_for_quota(self, bucket: Bucket, reserve: int, max_wait: float, op: str) -> None:
        while True:
            wait, reason = bucket.wait_before(self._clock(), reserve)
            if wait <= 0:
                return
            if wait > max_wait:
                raise RateLimited(self._clock() + wait, wait, op=op, reason=reason)
            self.counters.waits += 1
            self.counters.waited_s += wait
            if self._metrics:
                self._metrics.waits.labels(reason).inc()
                self._metrics.wait_seconds.inc(wait)
            await self._sleep(wait)

    async def _space_mutations(self, key: str) -> None:
        last = self._last_mutation.get(key)
        now = self._clock()
        if last is not None and now - last < self._mutation_interval:
            await self._sleep(self._mutation_interval - (now - last))
        self._last_mutation[key] = self._clock()

    def _observe(self, bucket: Bucket, headers: Mapping[str, str], installation: bool) -> None:
        bucket.observe(headers)
        if self._metrics and bucket.remaining is not None:
            auth = "installation" if installation else "app"
            self._metrics.remaining.labels(auth).set(bucket.remaining)
            if bucket.limit is not None:
                self._metrics.limit.labels(auth).set(bucket.limit)

    def _count(self, op: str, status: int) -> None:
        self.counters.requests += 1
        if self._metrics:
            self._metrics.requests.labels(op, status_class(status)).inc()


def _rate_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower().startswith("x-ratelimit-")}
