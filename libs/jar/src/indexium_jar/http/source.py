"""Byte ranges of one file over HTTP (aiohttp), with the download rules enforced.

* Redirects are followed by hand so that every hop's host is checked against the
  policy (and, for hosts admitted by a wildcard, its resolved addresses) before
  anything is sent to it, and so that ``Authorization`` never leaves the original host.
  (The address check runs before aiohttp connects and resolves again; a DNS answer
  that changes in between is not caught. Pin resolution in the session's connector
  if that matters.)
* The URL reached after redirects is reused for later ranges. A 403 there usually
  means the signed CDN URL expired: the chain is resolved again from the original
  URL, once.
* A server that ignores ``Range`` (200) is tolerated for files up to
  ``no_range_cap``; the whole body then serves every later read from memory.
"""

from __future__ import annotations

import asyncio
import functools
import re
from dataclasses import dataclass

import aiohttp
from yarl import URL

from ..errors import (
    AssetChanged,
    AssetNotFound,
    FetchLimitExceeded,
    HttpError,
    NetworkError,
    RangeNotSupportedTooLarge,
)
from .hops import follow_redirects, parse_retry_after, redirect_target, status_error, transport_errors
from .policy import DownloadPolicy, check_host

_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")


@dataclass
class FetchStats:
    requests: int = 0  # HTTP requests sent, redirect hops included
    bytes_fetched: int = 0  # body bytes received
    redirects: int = 0


@dataclass(frozen=True)
class _Want:
    """The range asked for: a suffix of ``suffix`` bytes, or ``[start, end)``."""

    header: str
    suffix: int = 0
    start: int = 0
    end: int = 0

    def expected(self, total: int) -> tuple[int, int]:
        if self.suffix:
            return max(0, total - self.suffix), total
        return self.start, min(self.end, total)


@dataclass
class _Reply:
    status: int
    url: URL
    start: int = 0
    data: bytes | list[bytes] = b""  # a 206 body: its chunks, in order
    location: URL | None = None
    retry_after: float | None = None


class HttpRangeSource:
    """A ``RangeSource`` (see :mod:`indexium_jar.http.remote`) over one HTTP(S) URL."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        policy: DownloadPolicy,
        headers: dict[str, str] | None = None,
    ) -> None:
        # Session-wide credentials would be sent on every hop, defeating the rule below.
        if getattr(session, "auth", None) is not None or "Authorization" in session.headers:
            raise ValueError("pass Authorization in headers=, not on the session")
        self._session = session
        self._policy = policy
        self._timeout = _client_timeout(policy.timeout)
        self._origin = URL(url)
        self._headers = {
            k: v for k, v in (headers or {}).items() if k.lower() not in ("range", "accept-encoding")
        }
        # Ranges address the stored bytes; a compressed transfer would shift them.
        self._headers["Accept-Encoding"] = "identity"
        self._hop_headers: dict[tuple[str, str | None, int | None], dict[str, str]] = {}
        self._resolved: URL | None = None
        self._reresolved = False
        self._reresolve_lock: asyncio.Lock | None = None  # made by the first 403 (rare)
        self._public_hosts: set[tuple[str, int | None]] = set()
        self._whole: bytes | None = None
        self._etag: str | None = None
        self.size: int | None = None
        self.stats = FetchStats()

    async def fetch_tail(self, length: int) -> tuple[int, int, bytes]:
        start, data = await self._get(_Want(f"bytes=-{length}", suffix=length))
        assert self.size is not None
        return self.size, start, data if isinstance(data, bytes) else b"".join(data)

    async def fetch(self, start: int, end: int) -> tuple[int, bytes | list[bytes]]:
        if self._whole is not None:
            return 0, self._whole
        return await self._get(_Want(f"bytes={start}-{end - 1}", start=start, end=end))

    # --- status handling ----------------------------------------------------------------

    async def _get(self, want: _Want) -> tuple[int, bytes | list[bytes]]:
        reply = await self._request(want)
        if reply.status in (404, 416):
            # Some servers answer a Range they dislike this way: ask once for the whole file.
            reply = await self._request(None)
            if reply.status in (404, 410, 416):
                raise AssetNotFound("the file was not found")
        if reply.status == 206:
            return reply.start, reply.data
        if reply.status == 200:
            self._whole = reply.data
            return 0, reply.data
        raise status_error(reply.status, reply.retry_after)

    async def _request(self, want: _Want | None) -> _Reply:
        start = self._resolved or self._origin
        reply = await self._follow(start, want)
        if reply.status == 403 and start != self._origin:
            # The signed URL expired. The first request to notice resolves the chain
            # again (once per file); concurrent ones wait and use the fresh URL.
            if self._reresolve_lock is None:  # no await since the check: one lock per source
                self._reresolve_lock = asyncio.Lock()
            async with self._reresolve_lock:
                if self._resolved == start and not self._reresolved:
                    self._reresolved = True
                    self._resolved = None
                    reply = await self._follow(self._origin, want)
                    start = self._origin
                    if reply.status in (200, 206):
                        self._resolved = reply.url
            if start != self._origin and self._resolved not in (None, start):
                reply = await self._follow(self._resolved, want)
        if reply.status in (200, 206):
            self._resolved = reply.url
        return reply

    async def _follow(self, url: URL, want: _Want | None) -> _Reply:
        async def hop(at: URL) -> tuple[_Reply, URL | None]:
            reply = await self._exchange(at, want)
            if reply.location is not None:
                self.stats.redirects += 1
            return reply, reply.location

        return await follow_redirects(url, self._policy.max_redirects, self._check_host, hop)

    # --- one HTTP exchange --------------------------------------------------------------

    def _headers_for(self, url: URL, want: _Want | None) -> dict[str, str]:
        key = (url.scheme, url.host, url.port)
        base = self._hop_headers.get(key)
        if base is None:
            same_origin = (url.host, url.port) == (self._origin.host, self._origin.port) and not (
                self._origin.scheme == "https" and url.scheme != "https"
            )
            base = dict(self._headers)
            if not same_origin:
                base = {k: v for k, v in base.items() if k.lower() != "authorization"}
            # Per host of the chain, decided once: a jar's reads go to the same two hosts.
            self._hop_headers[key] = base
        return {**base, "Range": want.header} if want is not None else dict(base)

    async def _exchange(self, url: URL, want: _Want | None) -> _Reply:
        self.stats.requests += 1
        # aiohttp's own total timeout bounds the whole exchange, body included (its timer runs
        # until the response is released, which is after _read_reply): it replaces an
        # asyncio.timeout around the block, which was a second timer per request.
        with transport_errors(url.host, f"no complete answer from {url.host} in {self._policy.timeout} s"):
            async with self._session.get(
                url, headers=self._headers_for(url, want), allow_redirects=False, raise_for_status=False,
                timeout=self._timeout,
            ) as resp:
                return await self._read_reply(url, resp, want)

    async def _read_reply(self, url: URL, resp: aiohttp.ClientResponse, want: _Want | None) -> _Reply:
        status = resp.status
        target = redirect_target(url, status, resp.headers)
        if target is not None:
            await _discard_small_body(resp)
            return _Reply(status, url, location=target)
        if status == 206 and want is not None:
            return await self._read_partial(url, resp, want)
        if status == 200:
            return await self._read_whole(url, resp)
        if status == 206:
            raise HttpError(status, "partial content to a request without Range")
        await _discard_small_body(resp)
        return _Reply(status, url, retry_after=parse_retry_after(resp.headers.get("Retry-After")))

    async def _read_partial(self, url: URL, resp: aiohttp.ClientResponse, want: _Want) -> _Reply:
        match = _CONTENT_RANGE.fullmatch(resp.headers.get("Content-Range", "").strip())
        if match is None:
            raise HttpError(206, "missing or invalid Content-Range")
        first, last, total = map(int, match.groups())
        self._same_file(total, resp.headers.get("ETag"))
        start, end = want.expected(total)
        if (first, last + 1) != (start, end):
            raise HttpError(206, "Content-Range does not match the requested range")
        self._charge(end - start)
        declared = resp.content_length
        if declared is not None and declared != end - start:
            raise NetworkError("Content-Length differs from Content-Range")
        # Exactly the announced bytes, kept as the chunks they arrived in: the reader joins
        # them once, together with the bytes it holds around them (a central directory of
        # megabytes joins the tail that holds its last records).
        # readany(), not read(left): read(n) joins every chunk buffered so far into a new
        # bytes first, so a 1.8 MB directory was copied there and again by the span store.
        chunks: list[bytes] = []
        left = end - start
        content = resp.content
        while left > 0:
            chunk = await content.readany()
            if not chunk:
                raise NetworkError("body shorter than Content-Range")
            if len(chunk) > left:  # without Content-Length (chunked), nothing past the range is kept
                chunk = chunk[:left]
            chunks.append(chunk)
            left -= len(chunk)
            self.stats.bytes_fetched += len(chunk)
        return _Reply(206, url, start=start, data=chunks)

    async def _read_whole(self, url: URL, resp: aiohttp.ClientResponse) -> _Reply:
        cap = self._policy.no_range_cap
        declared = resp.content_length
        if declared is not None and declared > cap:
            raise RangeNotSupportedTooLarge(f"server ignores Range and the file exceeds {cap} bytes")
        budget = self._policy.max_fetch_bytes - self.stats.bytes_fetched
        data = await _read_at_most(resp, min(cap, budget) + 1)
        self.stats.bytes_fetched += len(data)
        if len(data) > cap:
            raise RangeNotSupportedTooLarge(f"server ignores Range and the file exceeds {cap} bytes")
        if len(data) > budget:
            raise FetchLimitExceeded("fetch budget exhausted")
        if declared is not None and len(data) != declared:
            raise NetworkError("body shorter than Content-Length")
        self._same_file(len(data), resp.headers.get("ETag"))
        return _Reply(200, url, data=data)

    def _charge(self, length: int) -> None:
        if self.stats.bytes_fetched + length > self._policy.max_fetch_bytes:
            raise FetchLimitExceeded("fetch budget exhausted")

    def _same_file(self, size: int, etag: str | None) -> None:
        strong = etag if etag and not etag.startswith("W/") else None
        if self.size is None:
            self.size, self._etag = size, strong
        elif size != self.size or (strong and self._etag and strong != self._etag):
            raise AssetChanged("the file changed while being read")

    # --- host policy --------------------------------------------------------------------

    async def _check_host(self, url: URL) -> None:
        if (url.host, url.port) in self._public_hosts:
            return  # resolved and found public earlier for this jar
        if await check_host(url, self._policy):
            self._public_hosts.add((url.host, url.port))


@functools.lru_cache(maxsize=8)
def _client_timeout(seconds: float) -> aiohttp.ClientTimeout:
    """Per request, replacing the session's: ``seconds`` for the whole exchange (connect,
    send, headers, body); built once per value."""
    return aiohttp.ClientTimeout(total=seconds)


async def _discard_small_body(resp: aiohttp.ClientResponse, limit: int = 16 * 1024) -> None:
    """Read a redirect's or an error's short body to its end, so the connection goes back to
    the pool instead of being closed (aiohttp closes a connection whose body was not read;
    every job starts with a redirect). A longer body is left: the connection is dropped."""
    length = resp.content_length
    if length is not None and length > limit:
        return
    await _read_at_most(resp, limit)


async def _read_at_most(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """Read the body, stopping after ``limit`` bytes (the caller decides if that is too many)."""
    buf = bytearray()
    while len(buf) < limit:
        chunk = await resp.content.read(min(64 * 1024, limit - len(buf)))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)
