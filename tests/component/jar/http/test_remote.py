"""RemoteJar against a real aiohttp server on 127.0.0.1: request counts, bytes fetched,
the host rules, and every HTTP status the reader has to survive."""

from __future__ import annotations

import asyncio
import io
import os
import re
import socket
import struct
import warnings
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import aiohttp
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from indexium_jar.errors import (
    AssetChanged,
    AssetNotFound,
    CorruptZip,
    DownloadHostNotAllowed,
    EncryptedEntry,
    EntryTooLarge,
    FetchLimitExceeded,
    FetchTimeout,
    HttpError,
    NetworkError,
    RangeNotSupportedTooLarge,
    TooManyRedirects,
)
from indexium_jar.http.source import HttpRangeSource
from indexium_jar.http.remote import DownloadPolicy, MemorySource, RemoteJar

KiB, MiB = 1024, 1024 * 1024
MANIFEST = b"Manifest-Version: 1.0\r\nImplementation-Version: 1.0\r\n"
FABRIC = b'{"schemaVersion": 1, "id": "example", "version": "1.0.0"}'


def make_jar(files: list[tuple[str, bytes]], *, stored: bool = False, extra: bytes = b"") -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are intended
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as zf:
            for name, data in files:
                info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
                info.extra = extra
                zf.writestr(info, data)
    return out.getvalue()


def filler(count: int, size: int = 64) -> list[tuple[str, bytes]]:
    """Incompressible class files with long names: a big central directory."""
    return [
        (f"com/example/mod/generated/package{i // 50}/SomeLongClassName{i:05d}.class", os.urandom(size))
        for i in range(count)
    ]


SMALL = make_jar([("META-INF/MANIFEST.MF", MANIFEST), ("fabric.mod.json", FABRIC), *filler(20)])
# ~3000 entries: the central directory (~330 KB) starts long before the tail.
BIG_CD_MANIFEST_FIRST = make_jar(
    [("META-INF/MANIFEST.MF", MANIFEST), ("fabric.mod.json", FABRIC), *filler(3000)]
)
BIG_CD_MANIFEST_LAST = make_jar(
    [*filler(3000), ("META-INF/MANIFEST.MF", MANIFEST), ("fabric.mod.json", FABRIC)]
)
# Few entries but 2 MB of data: the directory is in the tail, the manifests are not.
BIG_DATA = make_jar(
    [
        ("META-INF/MANIFEST.MF", MANIFEST),
        ("fabric.mod.json", FABRIC),
        ("assets/blob.bin", os.urandom(2 * MiB)),
    ],
    stored=True,
)


# --- the server -----------------------------------------------------------------------------


@dataclass
class Hit:
    path: str
    host: str
    range: str | None
    authorization: str | None


@dataclass
class Cdn:
    files: dict[str, bytes] = field(default_factory=dict)
    hits: list[Hit] = field(default_factory=list)
    signatures: set[str] = field(default_factory=set)
    issued: int = 0
    port: int = 0

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [h.path for h in self.hits]


CDN = web.AppKey("cdn", Cdn)


def serve_range(request: web.Request, data: bytes) -> web.StreamResponse:
    header = request.headers.get("Range")
    if header is None:
        return web.Response(body=data)
    m = re.fullmatch(r"bytes=(\d*)-(\d*)", header)
    if not m or (not m[1] and not m[2]):
        return web.Response(status=416)
    if not m[1]:
        start, end = max(0, len(data) - int(m[2])), len(data)
    else:
        start, end = int(m[1]), min(len(data), int(m[2]) + 1 if m[2] else len(data))
    if start >= len(data) or start >= end:
        return web.Response(status=416, headers={"Content-Range": f"bytes */{len(data)}"})
    return web.Response(
        status=206, body=data[start:end], headers={"Content-Range": f"bytes {start}-{end - 1}/{len(data)}"}
    )


def create_app(cdn: Cdn) -> web.Application:
    app = web.Application()
    app[CDN] = cdn
    routes = web.RouteTableDef()

    @web.middleware
    async def record(request: web.Request, handler):
        cdn.hits.append(
            Hit(
                request.path,
                request.host.split(":")[0],
                request.headers.get("Range"),
                request.headers.get("Authorization"),
            )
        )
        return await handler(request)

    @routes.get("/f/{name}")  # an ordinary Range-capable server
    async def file(request):
        return serve_range(request, cdn.files[request.match_info["name"]])

    @routes.get("/plain/{name}")  # ignores Range
    async def plain(request):
        return web.Response(body=cdn.files[request.match_info["name"]])

    @routes.get("/chunked/{name}")  # ignores Range and sends no Content-Length
    async def chunked(request):
        resp = web.StreamResponse()
        await resp.prepare(request)
        data = cdn.files[request.match_info["name"]]
        for i in range(0, len(data), 8 * KiB):
            await resp.write(data[i : i + 8 * KiB])
        return resp

    @routes.get("/hop/{n}/{name}")  # n redirects, then the file
    async def hop(request):
        n, name = int(request.match_info["n"]), request.match_info["name"]
        raise web.HTTPFound(f"/hop/{n - 1}/{name}" if n else f"/f/{name}")

    @routes.get("/to/{host}/{name}")  # redirect to another host name of this server
    async def to_host(request):
        raise web.HTTPFound(cdn.url(f"/f/{request.match_info['name']}", request.match_info["host"]))

    @routes.get("/api/{name}")  # like GitHub's asset API: a fresh signed CDN URL each time
    async def api(request):
        cdn.issued += 1
        sig = f"s{cdn.issued}"
        cdn.signatures.add(sig)
        raise web.HTTPFound(cdn.url(f"/cdn/{request.match_info['name']}?sig={sig}", "localhost"))

    @routes.get("/cdn/{name}")
    async def signed(request):
        if request.query.get("sig") not in cdn.signatures:
            return web.Response(status=403, text="Request has expired")
        return serve_range(request, cdn.files[request.match_info["name"]])

    @routes.get("/status/{code}")
    async def status(request):
        code = int(request.match_info["code"])
        headers = {}
        if code == 503:
            headers["Retry-After"] = "7"
        if code == 429:
            headers["Retry-After"] = format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
        return web.Response(status=code, headers=headers)

    @routes.get("/no-ranges/{code}/{name}")  # 404/416 to any Range, the file without one
    async def no_ranges(request):
        if "Range" in request.headers:
            return web.Response(status=int(request.match_info["code"]))
        return web.Response(body=cdn.files[request.match_info["name"]])

    @routes.get("/loop")
    async def loop(request):
        raise web.HTTPFound("/loop")

    @routes.get("/slow")
    async def slow(request):
        await asyncio.sleep(2)
        return web.Response(body=b"late")

    @routes.get("/stall/{name}")  # headers and the first bytes of the range, then nothing
    async def stall(request):
        data = cdn.files[request.match_info["name"]]
        tail = data[-(len(data) if len(data) < 70_000 else 70_000):]
        resp = web.StreamResponse(status=206, headers={
            "Content-Range": f"bytes {len(data) - len(tail)}-{len(data) - 1}/{len(data)}",
            "Content-Length": str(len(tail))})
        await resp.prepare(request)
        await resp.write(tail[:100])
        await asyncio.sleep(2)
        return resp

    @routes.get("/wrong-range/{name}")
    async def wrong_range(request):
        data = cdn.files[request.match_info["name"]]
        return web.Response(status=206, body=data[:10], headers={"Content-Range": f"bytes 0-9/{len(data)}"})

    app.middlewares.append(record)
    app.add_routes(routes)
    return app


FILES = {
    "small.jar": SMALL,
    "first.jar": BIG_CD_MANIFEST_FIRST,
    "last.jar": BIG_CD_MANIFEST_LAST,
    "data.jar": BIG_DATA,
}


@pytest.fixture(scope="module")
async def server():
    cdn = Cdn()
    runner = web.AppRunner(create_app(cdn), access_log=None, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    cdn.port = runner.addresses[0][1]
    yield cdn
    await runner.cleanup()


@pytest.fixture
def cdn(server: Cdn) -> Cdn:
    """The module's server with fresh state for this test."""
    server.files, server.hits, server.signatures, server.issued = dict(FILES), [], set(), 0
    return server


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


def policy(cdn: Cdn, *extra_hosts: str, **kw) -> DownloadPolicy:
    return DownloadPolicy(allowed_hosts=frozenset({f"127.0.0.1:{cdn.port}", *extra_hosts}), **kw)


WANTED = ["META-INF/MANIFEST.MF", "fabric.mod.json", "quilt.mod.json", "META-INF/mods.toml"]


# --- request counts -------------------------------------------------------------------------


async def test_everything_in_the_tail_costs_one_request(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/f/small.jar"), policy(cdn))
    got = await jar.read(WANTED)
    assert got == {"META-INF/MANIFEST.MF": MANIFEST, "fabric.mod.json": FABRIC}
    assert jar.size == len(SMALL) and len(jar.entries) == 22 and "fabric.mod.json" in jar.directory
    assert (jar.stats.requests, jar.stats.bytes_fetched) == (1, len(SMALL))
    assert cdn.hits[0].range == f"bytes=-{65_557 + 8192}"


@pytest.mark.parametrize(("name", "requests"), [("first.jar", 3), ("last.jar", 2), ("data.jar", 2)])
async def test_large_jars_need_at_most_three_requests(cdn, session, name, requests):
    data = cdn.files[name]
    jar = await RemoteJar.open(session, cdn.url(f"/f/{name}"), policy(cdn))
    assert jar.size == len(data)
    assert jar.info is not None and jar.info.cd_size > 0
    assert await jar.read(WANTED) == {"META-INF/MANIFEST.MF": MANIFEST, "fabric.mod.json": FABRIC}
    assert jar.stats.requests == requests
    assert jar.stats.bytes_fetched < jar.info.cd_size + 160 * KiB  # tail + directory + a little
    # Nothing is fetched twice: reading again costs nothing.
    assert await jar.read("fabric.mod.json") == {"fabric.mod.json": FABRIC}
    assert jar.stats.requests == requests


async def test_close_entries_are_coalesced_into_one_request(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/f/data.jar"), policy(cdn))
    assert jar.stats.requests == 1
    got = await jar.read(["META-INF/MANIFEST.MF", "fabric.mod.json"])
    assert len(got) == 2 and jar.stats.requests == 2
    assert re.fullmatch(r"bytes=0-\d+", cdn.hits[-1].range or "")


async def test_local_extra_longer_than_the_margin_takes_one_more_request(cdn, session):
    big_extra = struct.pack("<HH", 0xCAFE, 3000) + b"\0" * 3000
    cdn.files["extra.jar"] = make_jar(
        [("fabric.mod.json", FABRIC), ("assets/blob.bin", os.urandom(200 * KiB))],
        stored=True,
        extra=big_extra,
    )
    jar = await RemoteJar.open(session, cdn.url("/f/extra.jar"), policy(cdn))
    assert await jar.read("fabric.mod.json") == {"fabric.mod.json": FABRIC}
    assert jar.stats.requests == 3


async def test_duplicate_names_resolve_to_the_last_record_like_java(cdn, session):
    cdn.files["dup.jar"] = make_jar(
        [("fabric.mod.json", b'{"id":"first"}'), ("fabric.mod.json", b'{"id":"second"}')]
    )
    jar = await RemoteJar.open(session, cdn.url("/f/dup.jar"), policy(cdn))
    assert [e.name for e in jar.entries] == ["fabric.mod.json"] * 2
    assert await jar.read(["fabric.mod.json"]) == {"fabric.mod.json": b'{"id":"second"}'}
    assert await jar.read([jar.entries[0]]) == {"fabric.mod.json": b'{"id":"first"}'}


async def test_entry_limits_are_checked_before_fetching(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/f/data.jar"), policy(cdn))
    with pytest.raises(EntryTooLarge):
        await jar.read("assets/blob.bin")
    with pytest.raises(EntryTooLarge):
        await jar.read("fabric.mod.json", max_size=10)
    assert jar.stats.requests == 1


async def test_fetch_budget(cdn, session):
    with pytest.raises(FetchLimitExceeded) as err:
        await RemoteJar.open(session, cdn.url("/f/first.jar"), policy(cdn, max_fetch_bytes=100 * KiB))
    assert err.value.code == "fetch_limit_exceeded" and len(cdn.hits) == 1
    jar = await RemoteJar.open(session, cdn.url("/f/data.jar"), policy(cdn, max_fetch_bytes=80 * KiB))
    with pytest.raises(FetchLimitExceeded):
        await jar.read("assets/blob.bin", max_size=4 * MiB)


# --- redirects and hosts --------------------------------------------------------------------


async def test_redirects_are_followed_and_the_final_url_reused(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/hop/2/first.jar"), policy(cdn))
    await jar.read(WANTED)
    assert cdn.paths() == [
        "/hop/2/first.jar",
        "/hop/1/first.jar",
        "/hop/0/first.jar",
        "/f/first.jar",
        "/f/first.jar",
        "/f/first.jar",
    ]
    assert jar.stats.redirects == 3


async def test_too_many_redirects(cdn, session):
    with pytest.raises(TooManyRedirects):
        await RemoteJar.open(session, cdn.url("/hop/4/small.jar"), policy(cdn))
    assert len(cdn.hits) == 4
    with pytest.raises(TooManyRedirects):
        await RemoteJar.open(session, cdn.url("/loop"), policy(cdn, max_redirects=0))


async def test_unlisted_host_is_never_contacted(cdn, session):
    with pytest.raises(DownloadHostNotAllowed) as err:
        await RemoteJar.open(
            session,
            cdn.url("/f/small.jar"),
            DownloadPolicy(allowed_hosts=frozenset({"objects.githubusercontent.com"})),
        )
    assert err.value.code == "download_host_not_allowed" and not err.value.retryable
    with pytest.raises(DownloadHostNotAllowed):  # right host, wrong port
        await RemoteJar.open(
            session, cdn.url("/f/small.jar"), DownloadPolicy(allowed_hosts=frozenset({"127.0.0.1:1"}))
        )
    assert cdn.hits == []


async def test_redirect_to_an_unlisted_host_is_not_followed(cdn, session):
    with pytest.raises(DownloadHostNotAllowed):
        await RemoteJar.open(session, cdn.url("/to/localhost/small.jar"), policy(cdn))
    assert [h.host for h in cdn.hits] == ["127.0.0.1"]


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1"])
async def test_wildcard_hosts_must_resolve_to_public_addresses(cdn, session, host):
    with pytest.raises(DownloadHostNotAllowed) as err:
        await RemoteJar.open(
            session, cdn.url("/f/small.jar", host), DownloadPolicy(allowed_hosts=frozenset({"*"}))
        )
    assert "non-public" in err.value.message
    assert cdn.hits == []


async def test_explicitly_listed_host_may_be_private(cdn, session):
    jar = await RemoteJar.open(
        session, cdn.url("/f/small.jar", "localhost"), DownloadPolicy(allowed_hosts=frozenset({"localhost"}))
    )
    assert jar.stats.requests == 1


async def test_authorization_stays_on_the_original_host(cdn, session):
    jar = await RemoteJar.open(
        session,
        cdn.url("/to/localhost/first.jar"),
        policy(cdn, f"localhost:{cdn.port}"),
        headers={"Authorization": "Bearer secret"},
    )
    await jar.read(WANTED)
    assert [(h.host, h.authorization) for h in cdn.hits] == [("127.0.0.1", "Bearer secret")] + [
        ("localhost", None)
    ] * 3


async def test_session_wide_credentials_are_refused(cdn):
    async with aiohttp.ClientSession(headers={"Authorization": "Bearer x"}) as s:
        with pytest.raises(ValueError):
            await RemoteJar.open(s, cdn.url("/f/small.jar"), policy(cdn))


async def test_expired_signed_url_is_resolved_again_once(cdn, session):
    p = policy(cdn, f"localhost:{cdn.port}")
    jar = await RemoteJar.open(session, cdn.url("/api/first.jar"), p, headers={"Authorization": "Bearer t"})
    assert cdn.paths() == ["/api/first.jar", "/cdn/first.jar", "/cdn/first.jar"]
    cdn.signatures.clear()  # the signed URL expires
    assert await jar.read("META-INF/MANIFEST.MF") == {"META-INF/MANIFEST.MF": MANIFEST}
    assert cdn.paths()[3:] == ["/cdn/first.jar", "/api/first.jar", "/cdn/first.jar"]
    assert cdn.hits[4].authorization == "Bearer t" and cdn.hits[5].authorization is None
    cdn.signatures.clear()  # expires again: no second re-resolution
    with pytest.raises(HttpError) as err:
        await jar.read("com/example/mod/generated/package30/SomeLongClassName01500.class")
    assert err.value.status == 403 and not err.value.retryable


async def test_concurrent_requests_share_one_re_resolution(cdn, session):
    p = policy(cdn, f"localhost:{cdn.port}")
    jar = await RemoteJar.open(session, cdn.url("/api/first.jar"), p)
    cdn.signatures.clear()
    far_apart = ["META-INF/MANIFEST.MF", "com/example/mod/generated/package30/SomeLongClassName01500.class"]
    got = await jar.read(far_apart)
    assert got["META-INF/MANIFEST.MF"] == MANIFEST and len(got) == 2
    assert cdn.paths().count("/api/first.jar") == 2


# --- statuses -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/plain/small.jar", "/chunked/small.jar"])
async def test_server_without_range_support_under_the_cap(cdn, session, path):
    jar = await RemoteJar.open(session, cdn.url(path), policy(cdn))
    assert await jar.read(WANTED) == {"META-INF/MANIFEST.MF": MANIFEST, "fabric.mod.json": FABRIC}
    assert (jar.stats.requests, jar.stats.bytes_fetched) == (1, len(SMALL))


async def test_server_without_range_support_over_the_cap(cdn, session):
    p = policy(cdn, no_range_cap=1 * MiB)
    source = HttpRangeSource(session, cdn.url("/plain/data.jar"), p)
    with pytest.raises(RangeNotSupportedTooLarge) as err:
        await RemoteJar.from_source(source, p)
    assert err.value.code == "range_not_supported_too_large" and not err.value.retryable
    assert source.stats.bytes_fetched == 0  # Content-Length was enough to refuse
    source = HttpRangeSource(session, cdn.url("/chunked/data.jar"), p)
    with pytest.raises(RangeNotSupportedTooLarge):  # no Content-Length: read the cap, then stop
        await RemoteJar.from_source(source, p)
    assert source.stats.bytes_fetched <= 1 * MiB + 64 * KiB


@pytest.mark.parametrize("code", [404, 416])
async def test_range_refused_is_retried_once_without_range(cdn, session, code):
    jar = await RemoteJar.open(session, cdn.url(f"/no-ranges/{code}/small.jar"), policy(cdn))
    assert await jar.read("fabric.mod.json") == {"fabric.mod.json": FABRIC}
    assert [h.range is None for h in cdn.hits] == [False, True]


async def test_missing_file(cdn, session):
    with pytest.raises(AssetNotFound) as err:
        await RemoteJar.open(session, cdn.url("/status/404"), policy(cdn))
    assert err.value.code == "asset_not_found" and not err.value.retryable
    assert [h.range is None for h in cdn.hits] == [False, True]


async def test_unavailable_is_retryable_with_retry_after(cdn, session):
    with pytest.raises(HttpError) as err:
        await RemoteJar.open(session, cdn.url("/status/503"), policy(cdn))
    assert (err.value.status, err.value.retryable, err.value.retry_after) == (503, True, 7.0)
    with pytest.raises(HttpError) as err:
        await RemoteJar.open(session, cdn.url("/status/429"), policy(cdn))
    assert err.value.retryable and 50 < (err.value.retry_after or 0) <= 60
    with pytest.raises(HttpError) as err:
        await RemoteJar.open(session, cdn.url("/status/401"), policy(cdn))
    assert not err.value.retryable


async def test_wrong_content_range_is_refused(cdn, session):
    with pytest.raises(HttpError):
        await RemoteJar.open(session, cdn.url("/wrong-range/small.jar"), policy(cdn))


async def test_file_changing_between_requests(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/f/first.jar"), policy(cdn))
    cdn.files["first.jar"] += b"\0"
    with pytest.raises(AssetChanged) as err:
        await jar.read("com/example/mod/generated/package0/SomeLongClassName00000.class")
    assert err.value.retryable


async def test_timeout(cdn, session):
    with pytest.raises(FetchTimeout) as err:
        await RemoteJar.open(session, cdn.url("/slow"), policy(cdn, timeout=0.2))
    assert err.value.code == "timeout" and err.value.retryable


async def test_timeout_while_the_body_stalls(cdn, session):
    """The timeout covers the whole exchange, the body too, not only the headers."""
    started = asyncio.get_running_loop().time()
    with pytest.raises(FetchTimeout) as err:
        await RemoteJar.open(session, cdn.url("/stall/small.jar"), policy(cdn, timeout=0.3, tail_size=70_000))
    assert err.value.retryable and asyncio.get_running_loop().time() - started < 1.5


async def test_connection_refused(session):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(NetworkError) as err:
        await RemoteJar.open(
            session, f"http://127.0.0.1:{port}/x.jar", DownloadPolicy(allowed_hosts=frozenset({"127.0.0.1"}))
        )
    assert err.value.code == "network_error" and err.value.retryable


async def test_not_a_zip(cdn, session):
    cdn.files["text.jar"] = b"<html>this is an error page</html>" * 10
    with pytest.raises(CorruptZip):
        await RemoteJar.open(session, cdn.url("/f/text.jar"), policy(cdn))


# --- the same orchestration over memory -----------------------------------------------------


async def test_memory_source_counts_like_http():
    jar = await RemoteJar.from_source(
        MemorySource(BIG_CD_MANIFEST_LAST), DownloadPolicy(allowed_hosts=frozenset())
    )
    assert await jar.read(WANTED) == {"META-INF/MANIFEST.MF": MANIFEST, "fabric.mod.json": FABRIC}
    assert jar.stats.requests == 2


async def test_zip64_end_record_outside_a_small_tail():
    plain = make_jar([("fabric.mod.json", FABRIC)])
    # Same layout as a zip64 writer: zip64 record + locator + sentinel end record.
    eocd = len(plain) - 22
    count, cd_size, cd_offset = struct.unpack_from("<HII", plain, eocd + 10)
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size, cd_offset)
    data = plain[:eocd] + z64 + struct.pack("<IIQI", 0x07064B50, 0, eocd, 1)
    data += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    jar = await RemoteJar.from_source(
        MemorySource(data), DownloadPolicy(allowed_hosts=frozenset(), tail_size=30)
    )
    assert jar.info is not None and jar.info.zip64
    assert await jar.read("fabric.mod.json") == {"fabric.mod.json": FABRIC}


async def test_encrypted_entry_is_refused_without_fetching():
    data = bytearray(make_jar([("fabric.mod.json", FABRIC)]))
    cd = struct.unpack_from("<I", data, len(data) - 6)[0]
    data[cd + 8] |= 1
    jar = await RemoteJar.from_source(MemorySource(bytes(data)), DownloadPolicy(allowed_hosts=frozenset()))
    with pytest.raises(EncryptedEntry):
        await jar.read("fabric.mod.json")


small_files = st.lists(
    st.tuples(st.sampled_from(["a", "b/c.json", "META-INF/MANIFEST.MF", "x" * 40]), st.binary(max_size=2000)),
    max_size=6,
)


@settings(max_examples=100, deadline=None)
@given(small_files, st.booleans(), st.integers(22, 4000), st.integers(0, 2000), st.integers(0, 4000))
def test_any_tail_and_margin_reads_what_zipfile_reads(files, stored, tail, margin, gap):
    data = make_jar(files, stored=stored)
    p = DownloadPolicy(
        allowed_hosts=frozenset(), tail_size=tail, entry_margin=margin, cd_prefetch=margin, coalesce_gap=gap
    )

    async def read_each() -> list[tuple[str, bytes]]:
        jar = await RemoteJar.from_source(MemorySource(data), p)
        return [(e.name, (await jar.read([e]))[e.name]) for e in jar.entries]

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        expected = [(i.filename, zf.read(i)) for i in zf.infolist()]
    assert asyncio.run(read_each()) == expected


# --- a read plan: the directory's last records tell what sits before it ---------------------


def plan_wanting(*names: str):
    return lambda entries, complete: (list(names), [])


async def test_a_manifest_named_by_the_directory_tail_comes_with_the_directory(cdn, session):
    # last.jar: 3000 entries, the manifests written last, right before a ~330 KB directory
    jar = await RemoteJar.open(session, cdn.url("/f/last.jar"), policy(cdn), plan=plan_wanting("fabric.mod.json"))
    assert jar.stats.requests == 2 and jar.is_held("fabric.mod.json")
    assert await jar.read("fabric.mod.json") == {"fabric.mod.json": FABRIC} and jar.stats.requests == 2
    assert jar.stats.bytes_fetched <= 1.2 * jar.needed_bytes


async def test_no_blind_look_behind_when_the_directory_tail_says_the_manifest_is_elsewhere(cdn, session):
    # first.jar: the manifests are the first entries; fetching 64 KiB before the directory is waste
    jar = await RemoteJar.open(session, cdn.url("/f/first.jar"), policy(cdn), plan=plan_wanting("fabric.mod.json"))
    assert jar.stats.requests == 2 and not jar.is_held("fabric.mod.json")
    assert await jar.read("fabric.mod.json", also=["META-INF/MANIFEST.MF"]) == {"fabric.mod.json": FABRIC}
    assert jar.stats.requests == 3 and jar.is_held("META-INF/MANIFEST.MF")  # adjacent: came along
    assert jar.stats.bytes_fetched <= 1.2 * jar.needed_bytes


async def test_entries_read_also_never_cost_a_request(cdn, session):
    jar = await RemoteJar.open(session, cdn.url("/f/data.jar"), policy(cdn))  # blob between manifests and tail
    assert await jar.read([], also=["fabric.mod.json"]) == {} and jar.stats.requests == 1
    assert jar.requests_for(["fabric.mod.json", "META-INF/MANIFEST.MF"]) == 1


async def test_a_huge_signed_manifest_mf_is_read_as_its_main_section():
    main = b"Manifest-Version: 1.0\r\nImplementation-Version: 4.5.6\r\n\r\n"
    digests = b"".join(b"Name: com/x/C%05d.class\r\nSHA-256-Digest: %s\r\n\r\n" % (i, os.urandom(24).hex().encode())
                       for i in range(15000))
    data = make_jar([("META-INF/MANIFEST.MF", main + digests), ("fabric.mod.json", FABRIC),
                     ("blob", os.urandom(2 * MiB))], stored=False)
    jar = await RemoteJar.from_source(MemorySource(data), DownloadPolicy(allowed_hosts=frozenset()))
    got = await jar.read(["META-INF/MANIFEST.MF", "fabric.mod.json"])
    assert got["META-INF/MANIFEST.MF"].startswith(main) and len(got["META-INF/MANIFEST.MF"]) == 64 * KiB
    # the digests (~1 MB) lie between the two: tail + one round of two requests, no digest bytes
    assert jar.stats.requests == 3 and jar.stats.bytes_fetched < 73 * KiB + 100 * KiB


@settings(max_examples=100, deadline=None)
@given(small_files, st.booleans(), st.integers(22, 4000), st.integers(0, 2000), st.integers(0, 4000),
       st.floats(0, 1), st.data())
def test_planned_reads_with_extras_read_what_zipfile_reads(files, stored, tail, margin, gap, ratio, data):
    blob = make_jar(files + [("filler.bin", os.urandom(data.draw(st.integers(0, 6000))))], stored=stored)
    p = DownloadPolicy(allowed_hosts=frozenset(), tail_size=tail, entry_margin=margin, cd_prefetch=margin,
                       coalesce_gap=gap, extra_ratio=ratio)
    names = sorted({n for n, _ in files})
    want = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    extra = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []

    async def read_planned() -> dict[str, bytes]:
        jar = await RemoteJar.from_source(MemorySource(blob), p, plan=lambda entries, complete: (want, extra))
        got = await jar.read(want, also=extra)
        for name in extra:  # what came along is right too
            got.update(await jar.read(name))
        return got

    with zipfile.ZipFile(io.BytesIO(blob)) as zf:
        expected = {i.filename: zf.read(i.filename) for i in zf.infolist() if i.filename in {*want, *extra}}
    assert asyncio.run(read_planned()) == expected
