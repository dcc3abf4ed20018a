"""What launchers and browsers can throw at the API that no handler expects: broken bodies,
odd header bytes, unknown paths, preflights, invalid query encodings, missing icons."""

import gzip
import zlib

FABRIC_120 = (["fabric"], ["1.20.1"])


async def test_a_body_that_does_not_decode_is_a_400_and_ends_the_connection(client):
    for path in ("/api/v1/versions/by-hashes", "/api/v1/versions/update-check"):
        resp = await client.post(path, data=b"notgzip", headers={
            "Content-Type": "application/json", "Content-Encoding": "gzip"})
        assert resp.status == 400 and (await resp.json())["error"] == "invalid_body"
        assert resp.headers["Connection"] == "close"
    resp = await client.post("/api/v1/versions/by-hashes", data=b'{"hashes": []}', headers={
        "Content-Type": "application/json", "Content-Encoding": "compress"})
    assert resp.status == 415 and (await resp.json())["error"] == "unsupported_media_type"


async def test_encodings_we_do_not_take_are_a_415_envelope(client):
    # aiohttp's own decoder answered br (without Brotli) and zstd with a plain-text 400.
    for encoding in ("br", "zstd", "gzip, gzip", "compress"):
        resp = await client.post("/api/v1/versions/by-hashes", data=b'{"hashes": []}', headers={
            "Content-Type": "application/json", "Content-Encoding": encoding})
        assert resp.status == 415, (encoding, await resp.text())
        assert (await resp.json())["error"] == "unsupported_media_type"


async def test_a_gzip_body_without_its_trailer_is_a_400(client):
    whole = gzip.compress(b'{"hashes": ["' + b"0" * 40 + b'"]}')
    for cut in (whole[:-8], whole[:-1], b""):  # no CRC-32 and length; one byte short; nothing
        resp = await client.post("/api/v1/versions/by-hashes", data=cut, headers={
            "Content-Type": "application/json", "Content-Encoding": "gzip"})
        assert resp.status == 400 and (await resp.json())["error"] == "invalid_body", len(cut)
        assert resp.headers["Connection"] == "close"
    resp = await client.post("/api/v1/versions/by-hashes", data=whole + b"junk", headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_body"


async def test_gzip_and_deflate_bodies_are_read(client):
    body = b'{"hashes": ["' + b"0" * 40 + b'"]}'
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    for encoding, data in (("gzip", gzip.compress(body)), ("x-gzip", gzip.compress(body)),
                           ("deflate", zlib.compress(body)), ("deflate", raw.compress(body) + raw.flush()),
                           ("identity", body)):
        resp = await client.post("/api/v1/versions/by-hashes", data=data, headers={
            "Content-Type": "application/json", "Content-Encoding": encoding})
        assert resp.status == 200, (encoding, await resp.text())


async def test_a_body_inflating_past_the_limit_is_a_413(client):
    bomb = gzip.compress(b" " * (2 * 1024 * 1024))  # about 2 KB that inflate to 2 MiB
    resp = await client.post("/api/v1/versions/by-hashes", data=bomb, headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert resp.status == 413 and (await resp.json())["error"] == "payload_too_large"


async def test_request_ids_that_are_not_printable_ascii_are_replaced(client, raw_request):
    status, answer = await raw_request(client, "GET", "/api/v1/tags/loaders", {b"X-Request-Id": b"abc\xff"})
    assert status == 200, answer
    header = next(line for line in answer.split(b"\r\n") if line.lower().startswith(b"x-request-id:"))
    assert len(header.split(b":", 1)[1].strip()) == 32  # a fresh id, not the caller's bytes


async def test_unknown_paths_are_404_and_preflights_name_the_route_methods(client):
    for path in ("/api/v1/nope", "/api/v1/tags", "/api/v1/versions/by-hash/"):
        resp = await client.get(path)
        assert resp.status == 404 and (await resp.json())["error"] == "not_found", path
    assert (await client.post("/api/v1/nope")).status == 404
    assert (await client.options("/api/v1/nope")).status == 404
    preflight = await client.options("/api/v1/versions/by-hashes", headers={
        "Origin": "https://ui.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
    get_only = await client.options("/api/v1/tags/loaders")
    assert get_only.status == 204 and "POST" not in get_only.headers["Access-Control-Allow-Methods"]


async def test_query_strings_that_are_not_utf8_are_a_400(client, raw_request):
    for query in ("q=%FF", "loader=%FF", "q=caf%E9"):
        resp = await client.get(f"/api/v1/mods?{query}")
        assert resp.status == 400 and "UTF-8" in (await resp.json())["description"], query
    ok = await client.get("/api/v1/mods?q=%EF%BF%BD")  # a real U+FFFD is valid UTF-8
    assert ok.status == 200
    again = await client.get("/api/v1/mods?q=%FF")  # not answered from the parse of the valid one
    assert again.status == 400


async def test_missing_icons_name_their_own_slug_and_are_not_kept_by_clients(client, seed):
    m = await seed.mod("plain")
    await seed.version(m, "1.0", [FABRIC_120])
    for slug in ("x", "y", "plain", "no-such-mod"):
        resp = await client.get(f"/api/v1/mods/{slug}/icon")
        assert resp.status == 404 and f"'{slug}'" in (await resp.json())["description"], slug
        assert resp.headers["Cache-Control"] == "no-store" and "ETag" not in resp.headers
    missing_card = await client.get("/api/v1/mods/no-such-mod")
    assert missing_card.status == 404 and missing_card.headers["Cache-Control"] == "no-store"


async def test_methods_we_do_not_serve_share_one_metrics_label(client):
    # aiohttp's C parser takes llhttp's ~35 methods (WebDAV's among them); its pure-Python
    # parser any token (the unit test's case). Either way they are one label value here.
    webdav = ("PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH", "REPORT", "PURGE")
    for method in webdav:
        resp = await client.request(method, "/api/v1/mods")
        assert resp.status == 405
    text = await (await client.get("/metrics")).text()
    assert not any(f'method="{m}"' in text for m in webdav)
    line = f'indexium_api_http_requests_total{{method="other",route="unmatched",status="405"}} {len(webdav)}.0'
    assert line in text, [l for l in text.splitlines() if "requests_total{" in l]
