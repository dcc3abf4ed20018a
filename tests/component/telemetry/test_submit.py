"""POST /api/v1/analytics/submit against a real JetStream and PostgreSQL: the accept path."""

from __future__ import annotations

import asyncio
import gzip
import uuid

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_contracts import registry, telemetry
from indexium_platform import natsutil
from indexium_devstack import telemetry_samples as samples
from indexium_telemetry.app import create_app

from .conftest import make_settings, stream_events

URL = "/api/v1/analytics/submit"
JSON = {"Content-Type": "application/json"}
GZIP = {"Content-Type": "application/json", "Content-Encoding": "gzip"}


async def submit(client, body: dict | bytes, headers=None, **kw):
    data = body if isinstance(body, bytes) else samples.encode(body)
    return await client.post(URL, data=data, headers=headers or JSON, **kw)


async def test_a_ping_is_published_after_the_puback_with_only_the_hash(client, nats_url, mods):
    server = uuid.uuid4()
    resp = await submit(client, samples.ping(server, mods=[
        {"slug": "sodium", "version": "0.5.8"}, {"mod_id": str(mods["lithium"])}]))
    assert resp.status == 202, await resp.text()
    assert await resp.json() == {"status": "accepted", "counted": 2, "unknown": 0,
                                 "next_ping_in_s": 1800}
    [msg] = await stream_events(nats_url)
    assert msg.subject == telemetry.PING
    event = telemetry.decoder.decode(msg.data)
    assert msg.headers["Nats-Msg-Id"] == event.ping_id.hex
    assert [(m.mod_id, m.version) for m in event.mods] == [(mods["sodium"], "0.5.8"), (mods["lithium"], None)]
    assert len(event.server_hash) == 32 and event.java_version == "21"
    assert event.received_at == "2025-03-14T12:00:00+00:00"
    # The raw server uuid never leaves the handler.
    assert str(server).encode() not in msg.data and server.bytes not in msg.data


async def test_gzip_pings_are_accepted(client):
    resp = await submit(client, samples.encode(samples.ping(), gzipped=True), GZIP)
    assert resp.status == 202


async def test_unknown_mods_are_dropped_and_counted(client, nats_url):
    resp = await submit(client, samples.ping(mods=[
        {"slug": "sodium"}, {"slug": "not-indexed"}, {"mod_id": str(uuid.uuid4())}, {"slug": "sodium"}]))
    assert resp.status == 202
    assert (await resp.json())["counted"] == 1 and (await resp.json())["unknown"] == 2
    [msg] = await stream_events(nats_url)
    assert len(telemetry.decoder.decode(msg.data).mods) == 1  # duplicates folded too
    metrics = await (await client.get("/metrics")).text()
    assert "indexium_telemetry_unknown_mods_total 2.0" in metrics


async def test_a_ping_with_only_unknown_mods_is_ignored_and_not_queued(client, nats_url):
    resp = await submit(client, samples.ping(mods=[{"slug": "nobody-knows"}]))
    assert resp.status == 200 and (await resp.json())["status"] == "ignored"
    assert await stream_events(nats_url) == []


async def test_bad_pings_are_400_naming_the_field_and_queue_nothing(client, nats_url):
    # The full matrix runs on decode_ping in tests/unit/telemetry; these go through HTTP.
    for field, change in [("loader", {"loader": 7}), ("server_uuid", {"server_uuid": "x"}),
                          ("mods[0]", {"mods": [{"version": "1"}]}), ("ip", {"ip": "203.0.113.5"}),
                          ("core_count", {"core_count": 0})]:
        resp = await submit(client, samples.ping(**change))
        body = await resp.json()
        assert resp.status == 400 and body["error"] == "invalid_ping", change
        assert field in body["description"], (field, body)
    assert await stream_events(nats_url) == []


async def test_too_many_mods_is_400(client):
    resp = await submit(client, samples.ping(mods=[{"slug": "sodium"}] * 1001))
    assert resp.status == 400 and "mods" in (await resp.json())["description"]


async def test_malformed_json_is_400(client):
    for body in (b"", b"{", b"[]", b'"ping"', b"\xff\xfe"):
        resp = await submit(client, body)
        assert resp.status == 400 and (await resp.json())["error"] == "invalid_ping", body


async def test_plain_body_over_64_kib_is_413(client):
    body = samples.encode(samples.ping())[:-1] + b" " * 70_000 + b"}"
    resp = await submit(client, body)
    assert resp.status == 413 and (await resp.json())["error"] == "payload_too_large"


async def test_gzip_bomb_is_refused_after_64_kib_of_output(client):
    bomb = gzip.compress(b"{" + b" " * (50 * 1024 * 1024) + b"}", compresslevel=9)
    assert len(bomb) < 64 * 1024  # 50 MiB of JSON whitespace in ~50 KiB
    resp = await submit(client, bomb, GZIP)
    assert resp.status == 413 and (await resp.json())["error"] == "payload_too_large"


async def test_inflated_body_just_over_the_limit_is_413_and_just_under_is_read(client):
    base = samples.encode(samples.ping())
    under = base[:-1] + b" " * (64 * 1024 - len(base)) + b"}"
    over = base[:-1] + b" " * (64 * 1024 - len(base) + 1) + b"}"
    assert (await submit(client, gzip.compress(under), GZIP)).status == 202
    assert (await submit(client, gzip.compress(over), GZIP)).status == 413


async def test_truncated_gzip_is_400(client):
    whole = samples.encode(samples.ping(), gzipped=True)
    for cut in (len(whole) - 4, len(whole) // 2, 5):
        resp = await submit(client, whole[:cut], GZIP)
        assert resp.status == 400 and (await resp.json())["error"] == "bad_gzip", cut


async def test_corrupt_gzip_and_trailing_data_are_400(client):
    whole = samples.encode(samples.ping(), gzipped=True)
    assert (await submit(client, whole[:10] + b"\x00" * 20 + whole[30:], GZIP)).status == 400
    resp = await submit(client, whole + b"garbage", GZIP)
    assert resp.status == 400 and "after the end" in (await resp.json())["description"]


async def _in_pieces(data: bytes, size: int = 400):
    for i in range(0, len(data), size):
        await asyncio.sleep(0.01)  # each piece its own read on the server: the body is not all there
        yield data[i:i + size]


async def test_a_body_arriving_in_pieces_is_read_as_one_arriving_whole(client, nats_url):
    def fresh() -> bytes:  # a new server each time: the second send of a case must not be a 429
        return samples.encode(samples.ping(uuid.uuid4()))

    over = fresh()[:-1] + b" " * (64 * 1024 - len(fresh()) + 1) + b"}"
    cases = [(fresh, JSON, 202, None), (lambda: gzip.compress(fresh()), GZIP, 202, None),
             (lambda: gzip.compress(fresh())[:-8], GZIP, 400, "bad_gzip"),
             (lambda: gzip.compress(fresh()) + b"garbage", GZIP, 400, "bad_gzip"),
             (lambda: over, JSON, 413, "payload_too_large"),
             (lambda: gzip.compress(over), GZIP, 413, "payload_too_large")]
    for make, headers, status, code in cases:
        for pieces in (False, True):
            body = make()
            resp = await client.post(URL, data=_in_pieces(body) if pieces else body, headers=headers)
            assert resp.status == status, (pieces, status, await resp.text())
            if code:
                assert (await resp.json())["error"] == code
    assert len(await stream_events(nats_url)) == 4  # both accepted cases, each both ways


async def test_nested_or_unsupported_encodings_are_415(client):
    body = gzip.compress(gzip.compress(samples.encode(samples.ping())))
    for encoding in ("gzip, gzip", "br", "deflate", "zstd", "gzip,identity,gzip"):
        resp = await submit(client, body, {"Content-Type": "application/json", "Content-Encoding": encoding})
        assert resp.status == 415 and (await resp.json())["error"] == "unsupported_encoding", encoding
    # Two headers are two layers too.
    resp = await client.post(URL, data=body, headers=[("Content-Type", "application/json"),
                                                      ("Content-Encoding", "gzip"), ("Content-Encoding", "gzip")])
    assert resp.status == 415


async def test_identity_encoding_and_missing_content_type_are_plain_json(client):
    resp = await client.post(URL, data=samples.encode(samples.ping()),
                             headers={"Content-Encoding": "identity"}, skip_auto_headers=["Content-Type"])
    assert resp.status == 202


async def test_non_json_content_type_is_415(client):
    resp = await submit(client, samples.ping(), {"Content-Type": "text/plain"})
    assert resp.status == 415


async def test_an_unparsable_content_type_is_415(client):
    resp = await submit(client, {"server_uuid": "x"}, headers={"Content-Type": ";;;"})
    assert resp.status == 415 and (await resp.json())["error"] == "unsupported_media_type"


async def test_a_client_hanging_up_mid_upload_is_a_499_not_a_500(client):
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(b"POST /api/v1/analytics/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 1000\r\n\r\n{\"server_uuid\":")
    await writer.drain()
    await asyncio.sleep(0.2)
    writer.close()
    deadline = asyncio.get_running_loop().time() + 5
    while True:
        text = await (await client.get("/metrics")).text()
        if 'route="/api/v1/analytics/submit",status="499"' in text:
            break
        assert asyncio.get_running_loop().time() < deadline, text
        await asyncio.sleep(0.1)
    assert 'status="500"' not in text


async def test_one_ping_per_server_per_window(client, nats_url, clock):
    server = uuid.uuid4()
    assert (await submit(client, samples.ping(server))).status == 202
    resp = await submit(client, samples.ping(server, mods=[{"slug": "lithium"}]))
    assert resp.status == 429 and (await resp.json())["error"] == "rate_limited"
    assert 1 <= int(resp.headers["Retry-After"]) <= 900
    assert (await submit(client, samples.ping(uuid.uuid4()))).status == 202  # another server
    assert len(await stream_events(nats_url)) == 2


@pytest.mark.usefixtures("needs_per_message_ttl")
async def test_the_window_reopens_after_its_ttl(nats_url, database_url, mods, clock):
    import asyncio
    app = create_app(make_settings(nats_url, database_url, INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS="1"),
                     clock=clock)
    async with TestClient(TestServer(app)) as c:
        server = uuid.uuid4()
        assert (await submit(c, samples.ping(server))).status == 202
        assert (await submit(c, samples.ping(server))).status == 429
        await asyncio.sleep(1.6)
        assert (await submit(c, samples.ping(server))).status == 202


async def test_503_when_jetstream_is_away_and_the_window_stays_open(nats_server, database_url, mods, clock):
    if nats_server.server is None:
        pytest.skip("needs an embedded NATS this test can stop")
    nc = await nats.connect(nats_server.url)
    await natsutil.ensure_streams(nc.jetstream(), registry.STREAMS, registry.CONSUMERS)
    # Remove the stream: KV still answers, publishing the ping cannot be acknowledged.
    await nc.jetstream().delete_stream(telemetry.STREAM.name)
    await nc.drain()
    async with TestClient(TestServer(create_app(make_settings(nats_server.url, database_url),
                                                clock=clock))) as c:
        server = uuid.uuid4()
        resp = await submit(c, samples.ping(server))
        assert resp.status == 503 and resp.headers["Retry-After"]
        nc = await nats.connect(nats_server.url)
        await natsutil.ensure_streams(nc.jetstream(), registry.STREAMS, registry.CONSUMERS)
        await nc.drain()
        # The failed attempt released the server's window: its retry is accepted, not a 429.
        assert (await submit(c, samples.ping(server))).status == 202
        nats_server.server.stop()
        resp = await submit(c, samples.ping(uuid.uuid4()))
        assert resp.status == 503


async def test_health_ready_and_metrics(client):
    ready = await client.get("/readyz")
    assert ready.status == 200
    assert (await ready.json())["checks"] == {"postgres": True, "nats": True, "catalogue": True}
    await submit(client, samples.ping(loader=7))
    metrics = await (await client.get("/metrics")).text()
    assert 'indexium_telemetry_pings_total{outcome="invalid"} 1.0' in metrics
    assert 'indexium_telemetry_catalogue_mods 4.0' in metrics
