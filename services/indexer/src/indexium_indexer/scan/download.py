"""Stream a whole asset over HTTP under the jar reader's download rules.

The same :class:`~indexium_jar.http.policy.DownloadPolicy` as the range reader: every
redirect hop is followed by hand and its host checked against ``allowed_hosts``
before anything is sent (hosts admitted only by a wildcard must resolve to public
addresses), at most ``max_redirects`` hops. The redirect loop, the Location
handling and the error mapping are the range reader's own
(:mod:`indexium_jar.http.hops`), so failures are the same typed
:class:`~indexium_jar.errors.JarReadError` subclasses and "retryable" means the
same thing in both stages. Bodies are never written to disk.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
from yarl import URL

from indexium_jar.errors import AssetNotFound, FetchLimitExceeded, FetchTimeout, JarReadError, NetworkError
from indexium_jar.http.hops import (
    follow_redirects,
    parse_retry_after,
    redirect_target,
    status_error,
    transport_errors,
)
from indexium_jar.http.policy import DownloadPolicy, check_host

CHUNK = 256 * 1024  # handed to the hashers and the parser at a time


class TooLarge(FetchLimitExceeded):
    code = "too_large"


async def _get(session: aiohttp.ClientSession, url: URL, policy: DownloadPolicy) -> aiohttp.ClientResponse:
    """GET, following allowed redirects; a 200 response whose body is not read yet."""

    async def hop(at: URL) -> tuple[aiohttp.ClientResponse | None, URL | None]:
        with transport_errors(at.host, f"no answer from {at.host} in {policy.timeout} s"):
            resp = await session.get(
                at, allow_redirects=False, headers={"Accept-Encoding": "identity"},
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=policy.timeout, sock_read=policy.timeout),
            )
        try:
            target = redirect_target(at, resp.status, resp.headers)
        finally:
            if resp.status != 200:
                resp.release()
        return resp, target

    resp = await follow_redirects(url, policy.max_redirects, lambda at: check_host(at, policy), hop)
    if resp.status != 200:
        raise status_error(resp.status, parse_retry_after(resp.headers.get("Retry-After")))
    return resp


@contextlib.asynccontextmanager
async def open_body(session: aiohttp.ClientSession, url: str, policy: DownloadPolicy,
                    *, max_bytes: int) -> AsyncIterator[AsyncIterator[bytes]]:
    """The body as chunks of about :data:`CHUNK` bytes; raises TooLarge past ``max_bytes``."""
    resp = await _get(session, URL(url), policy)
    try:
        if resp.content_length is not None and resp.content_length > max_bytes:
            raise TooLarge(f"the file is {resp.content_length} bytes, the limit is {max_bytes}")
        yield _chunks(resp, max_bytes)
    finally:
        resp.release()


async def _chunks(resp: aiohttp.ClientResponse, max_bytes: int) -> AsyncIterator[bytes]:
    total, parts, held = 0, [], 0
    try:
        while True:
            data = await resp.content.read(CHUNK)
            if not data:
                break
            total += len(data)
            if total > max_bytes:
                raise TooLarge(f"the file is larger than the limit of {max_bytes} bytes")
            parts.append(data)
            held += len(data)
            if held >= CHUNK:
                yield parts[0] if len(parts) == 1 else b"".join(parts)
                parts, held = [], 0
    except JarReadError:
        raise
    except asyncio.TimeoutError:
        raise FetchTimeout("the download stalled") from None
    except (aiohttp.ClientError, OSError) as exc:  # ClientPayloadError: connection closed early
        raise NetworkError(f"download interrupted ({type(exc).__name__})") from None
    if resp.content_length is not None and total != resp.content_length:
        raise NetworkError("download truncated: body shorter than Content-Length")
    if parts:
        yield b"".join(parts)


async def fetch_small(session: aiohttp.ClientSession, url: str, policy: DownloadPolicy,
                      *, limit: int = 4096) -> bytes | None:
    """A small text asset (a ``.sha256`` sidecar); None when it is gone (404/410)."""
    try:
        async with open_body(session, url, policy, max_bytes=limit) as body:
            return b"".join([chunk async for chunk in body])
    except AssetNotFound:
        return None
