"""One HTTP GET as the download rules see it, shared by the range reader and the scan stage's
streaming download: redirects followed by hand with every hop's host checked first, and
the answers mapped to the jar reader's typed errors (so "retryable" means the same thing
in both stages).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TypeVar

import aiohttp
from yarl import URL

from ..errors import AssetNotFound, FetchTimeout, HttpError, JarReadError, NetworkError, TooManyRedirects

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

T = TypeVar("T")


async def follow_redirects(
    url: URL,
    max_redirects: int,
    check_host: Callable[[URL], Awaitable[object]],
    exchange: Callable[[URL], Awaitable[tuple[T, URL | None]]],
) -> T:
    """Run ``exchange`` on ``url`` and on each redirect target it returns, at most
    ``max_redirects`` hops, checking each hop's host before anything is sent to it.

    ``exchange`` returns ``(result, None)`` for a final answer and ``(_, target)`` for a
    redirect (having released that response itself).
    """
    for _hop in range(max_redirects + 1):
        await check_host(url)
        result, target = await exchange(url)
        if target is None:
            return result
        url = target
    raise TooManyRedirects(f"more than {max_redirects} redirects")


def redirect_target(url: URL, status: int, headers: Mapping[str, str]) -> URL | None:
    """Where a redirect answer points, resolved against ``url``; None when it is no redirect."""
    if status not in REDIRECT_STATUSES or "Location" not in headers:
        return None
    try:
        return url.join(URL(headers["Location"]))
    except ValueError:
        raise HttpError(status, "invalid Location header") from None


def status_error(status: int, retry_after: float | None = None) -> JarReadError:
    """The typed error for a final status the reader cannot use (``retry_after``: from
    :func:`parse_retry_after`)."""
    if status in (404, 410):
        return AssetNotFound("the file was not found")
    return HttpError(status, retry_after=retry_after)


class transport_errors:  # noqa: N801 (used like the context manager function it was)
    """Timeouts and connection failures inside the block as FetchTimeout / NetworkError.

    A class rather than ``contextlib.contextmanager``: the range reader enters one per HTTP
    exchange, and a generator-based manager cost more than the exchange's own bookkeeping."""

    __slots__ = ("_host", "_timeout_message")

    def __init__(self, host: str | None, timeout_message: str) -> None:
        self._host, self._timeout_message = host, timeout_message

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> bool:
        if exc is None or isinstance(exc, JarReadError):
            return False
        if isinstance(exc, TimeoutError):
            raise FetchTimeout(self._timeout_message) from None
        if isinstance(exc, (aiohttp.ClientError, OSError)):
            raise NetworkError(f"{type(exc).__name__} talking to {self._host}") from None
        return False


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - time.time())
