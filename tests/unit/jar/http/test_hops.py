"""The redirect and status rules that the range reader and the scan's download share."""

from __future__ import annotations

import pytest
from yarl import URL

import aiohttp

from indexium_jar.errors import AssetNotFound, FetchTimeout, HttpError, NetworkError, TooManyRedirects
from indexium_jar.http.hops import follow_redirects, redirect_target, status_error, transport_errors

BASE = URL("https://github.com/o/r/releases/download/v1/a.jar")


def test_a_redirect_target_is_resolved_against_the_hop_it_came_from():
    assert redirect_target(BASE, 302, {"Location": "/cdn/a.jar"}) == URL("https://github.com/cdn/a.jar")
    assert redirect_target(BASE, 307, {"Location": "https://cdn.example/x"}) == URL("https://cdn.example/x")
    assert redirect_target(BASE, 302, {}) is None  # no Location: a final answer
    assert redirect_target(BASE, 200, {"Location": "/x"}) is None


def test_an_invalid_location_is_an_http_error():
    with pytest.raises(HttpError) as caught:
        redirect_target(BASE, 301, {"Location": "http://[::1"})
    assert caught.value.message == "invalid Location header"


def test_statuses_map_to_the_typed_errors():
    assert isinstance(status_error(404), AssetNotFound) and isinstance(status_error(410), AssetNotFound)
    busy = status_error(503, 7.0)
    assert isinstance(busy, HttpError) and busy.retryable and busy.retry_after == 7.0
    assert not status_error(403).retryable


async def test_every_hop_is_checked_and_the_count_is_bounded():
    checked: list[URL] = []

    async def check(url: URL) -> None:
        checked.append(url)

    async def endless(url: URL) -> tuple[None, URL]:
        return None, url.with_path(url.path + "x")

    with pytest.raises(TooManyRedirects):
        await follow_redirects(BASE, 2, check, endless)
    assert len(checked) == 3

    async def once(url: URL) -> tuple[str, URL | None]:
        return ("done", None) if url.host == "cdn.example" else (None, URL("https://cdn.example/a"))

    checked.clear()
    assert await follow_redirects(BASE, 2, check, once) == "done"
    assert [u.host for u in checked] == ["github.com", "cdn.example"]


def test_transport_errors_map_to_the_typed_errors_and_let_the_rest_through():
    with transport_errors("cdn.example", "no answer in 5 s"):
        pass  # nothing raised: nothing to map
    with pytest.raises(FetchTimeout) as timeout:
        with transport_errors("cdn.example", "no answer in 5 s"):
            raise TimeoutError
    assert timeout.value.message == "no answer in 5 s" and timeout.value.retryable
    assert timeout.value.__cause__ is None and timeout.value.__suppress_context__
    for failure in (aiohttp.ClientConnectionError("reset"), ConnectionResetError(), OSError("unreachable")):
        with pytest.raises(NetworkError) as network:
            with transport_errors("cdn.example", "no answer in 5 s"):
                raise failure
        assert network.value.message == f"{type(failure).__name__} talking to cdn.example"
    mine = HttpError(416)
    with pytest.raises(HttpError) as kept:
        with transport_errors("cdn.example", "no answer in 5 s"):
            raise mine
    assert kept.value is mine  # the reader's own errors pass unchanged
    with pytest.raises(ValueError):
        with transport_errors("cdn.example", "no answer in 5 s"):
            raise ValueError("a bug of ours is not a network error")
