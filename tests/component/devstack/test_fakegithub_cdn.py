"""Release-asset downloads through the fake: redirect, signed CDN URLs, ranges, faults."""

from __future__ import annotations

import time

import aiohttp
import pytest
from yarl import URL

from indexium_devstack import jars
from indexium_devstack.fakegithub import FakeGitHub, parse_range
from indexium_devstack.fakegithub.cdn import Unsatisfiable

pytestmark = pytest.mark.component

JAR = jars.fabric_jar("lumen", "1.0.0", "Lumen", "Lights caves.", extra_entries=20)
SIZE = len(JAR)


def _release(gh: FakeGitHub, tag: str = "v1.0.0", **kw):
    repo = gh.add_repo("alice", "lumen", **kw)
    rel = gh.add_release(repo, tag, assets=[("lumen-1.0.0.jar", JAR)])
    return rel, rel.assets[0]


async def test_download_redirects_to_signed_cdn_url(gh, http):
    rel, asset = _release(gh)
    url = gh.release_payload(rel)["release"]["assets"][0]["browser_download_url"]
    assert url == f"{gh.base_url}/alice/lumen/releases/download/v1.0.0/lumen-1.0.0.jar"
    async with http.get(url, allow_redirects=False) as r:
        assert r.status == 302
        loc = URL(r.headers["Location"])
    assert f"{loc.host}:{loc.port}" == gh.cdn_host != gh.github_host
    assert loc.query["sig"] and int(loc.query["exp"]) > time.time()
    async with http.get(url) as r:
        body = await r.read()
        assert r.status == 200
        assert r.headers["Accept-Ranges"] == "bytes"
        assert r.headers["Content-Length"] == str(SIZE)
        assert r.headers["ETag"] == asset.etag
        assert r.headers["Content-Type"] == "application/octet-stream"
    assert body == JAR
    assert asset.download_count == 2
    st = gh.stats(asset)
    assert (st.requests, st.bytes_sent, st.redirects, st.ranges) == (1, SIZE, 2, ())


@pytest.mark.parametrize(
    "header, start, end",
    [
        ("bytes=-22", SIZE - 22, SIZE - 1),  # suffix: the end-of-central-directory record
        ("bytes=0-29", 0, 29),
        ("bytes=100-", 100, SIZE - 1),
        ("bytes=10-999999999", 10, SIZE - 1),
        (f"bytes=-{SIZE * 4}", 0, SIZE - 1),  # suffix longer than the file
    ],
)
async def test_ranges_answer_206_with_content_range(gh, http, header, start, end):
    _, asset = _release(gh)
    async with http.get(gh.download_url(asset), headers={"Range": header}) as r:
        body = await r.read()
        assert r.status == 206
        assert r.headers["Content-Range"] == f"bytes {start}-{end}/{SIZE}"
        assert r.headers["Content-Length"] == str(end - start + 1)
    assert body == JAR[start : end + 1]
    st = gh.stats(asset)
    assert st.ranges == (header,) and st.bytes_sent == end - start + 1 and st.statuses == (206,)


@pytest.mark.parametrize("header", [f"bytes={SIZE}-", f"bytes={SIZE + 10}-{SIZE + 20}", "bytes=-0"])
async def test_unsatisfiable_range_is_416(gh, http, header):
    _, asset = _release(gh)
    async with http.get(gh.download_url(asset), headers={"Range": header}) as r:
        assert r.status == 416
        assert r.headers["Content-Range"] == f"bytes */{SIZE}"


async def test_head_and_counters(gh, http):
    _, asset = _release(gh)
    async with http.head(gh.download_url(asset), allow_redirects=True) as r:
        assert r.status == 200
        assert r.headers["Content-Length"] == str(SIZE)
        assert await r.read() == b""
    for h in ("bytes=-22", "bytes=-65557", "bytes=0-1023"):
        async with http.get(gh.download_url(asset), headers={"Range": h}) as r:
            await r.read()
    st = gh.stats(asset)
    assert st.requests == 4
    assert st.ranges == ("bytes=-22", "bytes=-65557", "bytes=0-1023")
    assert st.bytes_sent == 22 + SIZE + 1024
    assert st.statuses == (200, 206, 206, 206)
    gh.reset_stats()
    assert gh.stats(asset).requests == 0 and gh.cdn_requests == []


async def test_no_authorization_header_reaches_the_cdn(gh, http):
    rel, asset = _release(gh, private=True)
    inst = gh.add_installation([rel.repo])
    token = gh.issue_token(inst)
    headers = {"Authorization": f"token {token}", "Accept": "application/octet-stream"}
    async with http.get(gh.asset_api_url(asset), headers=headers) as r:
        assert r.status == 200 and await r.read() == JAR
    async with http.get(gh.download_url(asset), headers=headers) as r:
        assert r.status == 200
    async with http.get(gh.download_url(asset)) as r:  # anonymous: private repo is hidden
        assert r.status == 404
    assert len(gh.cdn_requests) == 2
    assert all("Authorization" not in req.headers for req in gh.cdn_requests)


async def test_expired_signature_is_403(gh, http):
    _, asset = _release(gh)
    gh.url_ttl = 30
    async with http.get(gh.download_url(asset), allow_redirects=False) as r:
        location = r.headers["Location"]
    async with http.get(location) as r:
        assert r.status == 200
    gh.advance(31)
    async with http.get(location) as r:
        assert r.status == 403
        assert "AuthenticationFailed" in await r.text()
    tampered = str(URL(location).update_query(exp=str(int(gh.now()) + 999)))
    async with http.get(tampered) as r:
        assert r.status == 403
    async with http.get(gh.download_url(asset)) as r:  # a fresh redirect works again
        assert r.status == 200


async def test_expire_once(gh, http):
    _, asset = _release(gh)
    gh.set_mode(asset, "expire_once")
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 403
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 200
    assert gh.stats(asset).statuses == (403, 200)


async def test_fail_next_503_with_retry_after(gh, http):
    _, asset = _release(gh)
    gh.fail_next(asset, status=503, count=2, retry_after=7)
    for _ in range(2):
        async with http.get(gh.download_url(asset)) as r:
            assert r.status == 503
            assert r.headers["Retry-After"] == "7"
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 200 and await r.read() == JAR


async def test_fail_next_global_and_on_the_redirector(gh, http):
    _, asset = _release(gh)
    gh.fail_next(None, status=500, count=1)
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 500
    gh.fail_next(asset, status=502, count=1, where="download")
    async with http.get(gh.download_url(asset), allow_redirects=False) as r:
        assert r.status == 502
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 200


async def test_no_range_mode_returns_full_body(gh, http):
    _, asset = _release(gh)
    gh.set_mode(asset, "no_range")
    async with http.get(gh.download_url(asset), headers={"Range": "bytes=-22"}) as r:
        assert r.status == 200
        assert "Content-Range" not in r.headers and "Accept-Ranges" not in r.headers
        assert await r.read() == JAR
    assert gh.stats(asset).bytes_sent == SIZE


async def test_asset_gone_and_removed_release(gh, http):
    rel, asset = _release(gh)
    gh.set_mode(asset, "404")
    async with http.get(gh.download_url(asset)) as r:
        assert r.status == 404
    gh.set_mode(asset, "normal")
    async with http.get(gh.download_url(asset), allow_redirects=False) as r:
        location = r.headers["Location"]
    url = gh.download_url(asset)
    gh.remove_release(rel)
    async with http.get(url) as r:
        assert r.status == 404
    async with http.get(location) as r:  # the CDN no longer has the blob either
        assert r.status == 404


async def test_redirect_elsewhere(gh, http):
    _, asset = _release(gh)
    gh.redirect_asset_to(asset, "http://127.0.0.2:9/evil.jar")
    async with http.get(gh.download_url(asset), allow_redirects=False) as r:
        assert r.status == 302 and r.headers["Location"] == "http://127.0.0.2:9/evil.jar"
    gh.redirect_asset_to(asset, None)
    async with http.get(gh.download_url(asset), allow_redirects=False) as r:
        assert URL(r.headers["Location"]).port == URL(gh.cdn_url).port


async def test_truncated_body(gh, http):
    _, asset = _release(gh)
    gh.set_mode(asset, "truncate")
    with pytest.raises(aiohttp.ClientPayloadError):
        async with http.get(gh.download_url(asset)) as r:
            await r.read()


async def test_latency(gh, http):
    _, asset = _release(gh)
    gh.set_latency(0.2, asset=asset)
    started = time.monotonic()
    async with http.get(gh.download_url(asset), headers={"Range": "bytes=-22"}) as r:
        assert r.status == 206
    assert time.monotonic() - started >= 0.2 * 2 * 0.9  # redirector + CDN


async def test_special_tags_and_names(gh, http):
    repo = gh.add_repo("bob/harvest")
    rel = gh.add_release(repo, "1.4.0+1.21.1", assets=[("harvest 1.4.0+1.21.1.jar", JAR)])
    rel2 = gh.add_release(repo, "release/2.0", assets=[("harvest.jar", JAR)])
    asset = rel.assets[0]
    assert asset.name == "harvest.1.4.0+1.21.1.jar"  # GitHub replaces spaces with dots
    for a in (asset, rel2.assets[0]):
        async with http.get(gh.download_url(a), headers={"Range": "bytes=0-3"}) as r:
            assert r.status == 206 and await r.read() == b"PK\x03\x04"


async def test_large_asset_tail(gh, http):
    big = jars.large_jar(5_000_000, 2000)
    repo = gh.add_repo("bench/big")
    asset = gh.add_release(repo, "v1", assets=[("big.jar", big)]).assets[0]
    async with http.get(gh.download_url(asset), headers={"Range": "bytes=-65557"}) as r:
        tail = await r.read()
        assert r.status == 206
    assert tail == big[-65557:]
    assert gh.stats(asset).bytes_sent == 65557


def test_parse_range_unit():
    assert parse_range(None, 10) is None
    assert parse_range("bytes=2-4", 10) == (2, 4)
    assert parse_range("bytes=-3", 10) == (7, 9)
    assert parse_range("bytes=5-", 10) == (5, 9)
    assert parse_range("bytes=4-2", 10) is None  # invalid → whole body
    assert parse_range("items=0-1", 10) is None
    assert parse_range("bytes=0-1,4-5", 10) is None
    with pytest.raises(Unsatisfiable):
        parse_range("bytes=10-", 10)
