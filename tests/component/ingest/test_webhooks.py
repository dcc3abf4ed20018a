"""Ingest against a real JetStream: signatures, PubAck before 202, dedupe, 503 when NATS is away."""

import asyncio
import gzip
import json
import uuid
from pathlib import Path

import nats
import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_contracts import ingest
from indexium_ingest.app import create_app
from indexium_ingest.settings import Settings
from indexium_ingest.signature import sign
from indexium_platform.settings import load

PAYLOADS = Path(__file__).resolve().parents[3].parent / "shared" / "github-payloads"
SECRET = "s3cret"


def settings(nats_url: str, **extra) -> Settings:
    return load(Settings, {"NATS_URL": nats_url, "INDEXIUM_WEBHOOK_SECRET": f"old-secret,{SECRET}",
                           "INDEXIUM_PUBLISH_TIMEOUT_SECONDS": "1", **extra})


@pytest.fixture
async def client(nats_url):
    async with TestClient(TestServer(create_app(settings(nats_url)))) as c:
        yield c


async def post(client, event: str, body: bytes, *, secret=SECRET, delivery=None, signature=None):
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
               "Content-Type": "application/json"}
    sig = signature if signature is not None else sign(secret, body)
    if sig:
        headers["X-Hub-Signature-256"] = sig
    return await client.post("/webhooks/github", data=body, headers=headers)


async def stream_messages(nats_url: str, subject: str) -> list:
    """Every message stored on a subject, read directly by sequence (no consumer needed)."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    info = await js.stream_info(ingest.STREAM.name)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1) if info.state.messages else ():
        msg = await js.get_msg(ingest.STREAM.name, seq)
        if msg.subject == subject:
            out.append(msg)
    await nc.drain()
    return out


def release_body() -> bytes:
    return (PAYLOADS / "release.published.payload.json").read_bytes()


async def test_release_is_published_after_puback(client, nats_url):
    resp = await post(client, "release", release_body(), delivery="d-1")
    assert resp.status == 202
    assert (await resp.json())["status"] == "accepted"
    msgs = await stream_messages(nats_url, ingest.RELEASE)
    assert len(msgs) == 1
    assert msgs[0].headers["Nats-Msg-Id"] == "d-1"
    event = ingest.decoder.decode(msgs[0].data)
    assert isinstance(event, ingest.ReleaseReceived)
    assert event.delivery_id == "d-1" and event.webhook.repository.full_name == "Codertocat/Hello-World"


async def test_the_same_delivery_is_stored_once(client, nats_url):
    for _ in range(5):
        resp = await post(client, "release", release_body(), delivery="same")
        assert resp.status == 202
    assert len(await stream_messages(nats_url, ingest.RELEASE)) == 1


async def test_either_rotated_secret_verifies(client, nats_url):
    assert (await post(client, "release", release_body(), secret="old-secret")).status == 202


@pytest.mark.parametrize("signature", ["", "sha256=" + "0" * 64, "sha1=abc"])
async def test_bad_or_missing_signature_is_401_and_publishes_nothing(client, nats_url, signature):
    resp = await post(client, "release", release_body(), signature=signature)
    assert resp.status == 401
    assert (await resp.json())["error"] == "bad_signature"
    assert await stream_messages(nats_url, ingest.RELEASE) == []


async def test_ping_is_200(client):
    resp = await post(client, "ping", (PAYLOADS / "ping.payload.json").read_bytes())
    assert resp.status == 200 and (await resp.json())["status"] == "pong"


async def test_malformed_json_is_400(client, nats_url):
    resp = await post(client, "release", b'{"action": "published", "release": ')
    assert resp.status == 400 and (await resp.json())["error"] == "malformed_payload"
    resp = await post(client, "release", b'{"action": "published"}')
    assert resp.status == 400
    assert await stream_messages(nats_url, ingest.RELEASE) == []


async def test_missing_delivery_header_is_400(client):
    body = release_body()
    resp = await client.post("/webhooks/github", data=body, headers={
        "X-GitHub-Event": "release", "X-Hub-Signature-256": sign(SECRET, body)})
    assert resp.status == 400 and (await resp.json())["error"] == "missing_delivery"


async def test_bad_headers_bodies_and_encodings_are_clear_4xx(client, nats_url, raw_request):
    body = release_body()
    headers = {"X-GitHub-Event": "release", "X-Hub-Signature-256": sign(SECRET, body)}
    resp = await client.post("/webhooks/github", data=body, headers={**headers, "X-GitHub-Delivery": "d" * 129})
    assert resp.status == 400 and (await resp.json())["error"] == "bad_delivery"
    # Not ASCII (sent as raw bytes): aiohttp hands them over as surrogates no log line could write.
    for name, value in ((b"X-GitHub-Delivery", b"abc\xff"), (b"X-GitHub-Event", b"rel\xe9ase")):
        raw = {b"X-GitHub-Event": b"release", b"X-GitHub-Delivery": b"d-ok", name: value,
               b"X-Hub-Signature-256": sign(SECRET, body).encode()}
        status, answer = await raw_request(client, "POST", "/webhooks/github", raw, body)
        assert status == 400, (name, status, answer)
    resp = await client.post("/webhooks/github", data=body, headers={
        "X-GitHub-Event": "release", "X-GitHub-Delivery": "d-sig", "X-Hub-Signature-256": "sha256=\u00e9"})
    assert resp.status == 401 and (await resp.json())["error"] == "bad_signature"
    for encoding in ("gzip", "compress", "br"):
        resp = await client.post("/webhooks/github", data=b"notgzip", headers={
            **headers, "X-GitHub-Delivery": f"d-{encoding}", "Content-Encoding": encoding})
        assert resp.status == 415 and (await resp.json())["error"] == "unsupported_media_type"
    assert await stream_messages(nats_url, ingest.RELEASE) == []


async def test_a_signature_over_the_inflated_json_is_not_accepted(client, nats_url):
    # GitHub signs the bytes it sends and never compresses webhooks: a gzip body is refused
    # whichever bytes its signature covers, so nothing is ever inflated for a stranger.
    body = release_body()
    packed = gzip.compress(body)
    for signed in (body, packed):
        resp = await client.post("/webhooks/github", data=packed, headers={
            "X-GitHub-Event": "release", "X-GitHub-Delivery": "d-gz", "Content-Type": "application/json",
            "X-Hub-Signature-256": sign(SECRET, signed), "Content-Encoding": "gzip"})
        assert resp.status == 415 and (await resp.json())["error"] == "unsupported_media_type"
    assert await stream_messages(nats_url, ingest.RELEASE) == []
    assert (await post(client, "release", body, delivery="d-plain")).status == 202


async def test_a_compressed_body_is_refused_before_it_is_read(client):
    # The headers promise 20 MB of gzip; only a few bytes follow. The 415 must come at once,
    # without waiting for (or inflating) the rest.
    reader, writer = await asyncio.open_connection(client.server.host, client.server.port)
    writer.write(b"POST /webhooks/github HTTP/1.1\r\nHost: x\r\nX-GitHub-Event: release\r\n"
                 b"X-GitHub-Delivery: d-slow\r\nContent-Encoding: gzip\r\nContent-Length: 20000000\r\n\r\n"
                 + gzip.compress(b"{" * 100_000)[:64])
    await writer.drain()
    status_line = await asyncio.wait_for(reader.readline(), timeout=2)
    assert status_line.startswith(b"HTTP/1.1 415"), status_line
    writer.close()


async def test_a_push_listing_thousands_of_files_is_queued_with_its_manifest_paths(client, nats_url):
    push = json.loads((PAYLOADS / "push.with-installation.payload.json").read_bytes())
    template = push["commits"][0] if push["commits"] else {"id": "0" * 40}
    push["commits"] = [{**template, "id": f"{i:040x}", "removed": [], "modified": [],
                        "added": [f"src/main/java/com/example/gen/C{i}_{j}.java" for j in range(2500)]
                        + (["fabric/src/main/resources/fabric.mod.json"] if i == 7 else [])}
                       for i in range(20)]
    body = json.dumps(push).encode()
    assert len(body) > 2_000_000  # twice the queue's message limit
    resp = await post(client, "push", body, delivery="big-push")
    assert resp.status == 202, await resp.text()
    (msg,) = await stream_messages(nats_url, ingest.PUSH)
    event = ingest.decoder.decode(msg.data)
    assert len(event.webhook.commits) == 20 and len(msg.data) < 100_000
    assert [c.added for c in event.webhook.commits if c.added] == [["fabric/src/main/resources/fabric.mod.json"]]


async def test_body_over_the_limit_is_413(nats_url):
    app = create_app(settings(nats_url, INDEXIUM_WEBHOOK_MAX_BYTES="1000"))
    async with TestClient(TestServer(app)) as c:
        resp = await post(c, "release", b"{" + b" " * 2000 + b"}")
        assert resp.status == 413 and (await resp.json())["error"] == "payload_too_large"


async def test_unknown_events_are_accepted_and_ignored(client):
    resp = await post(client, "star", b'{"action": "created"}')
    assert resp.status == 202 and (await resp.json())["status"] == "ignored"


@pytest.mark.parametrize("path", sorted(p.name for p in PAYLOADS.glob("*.json") if not p.name.startswith("schema.")))
async def test_every_real_example_is_accepted(client, path):
    event = path.split(".", 1)[0]
    resp = await post(client, event, (PAYLOADS / path).read_bytes())
    assert resp.status in (200, 202), await resp.text()


async def test_503_when_jetstream_cannot_take_it(nats_server):
    if nats_server.server is None:
        pytest.skip("needs an embedded NATS this test can stop")
    nc = await nats.connect(nats_server.url)
    from indexium_platform import natsutil
    await natsutil.ensure_all(nc.jetstream())
    await nc.drain()
    async with TestClient(TestServer(create_app(settings(nats_server.url)))) as c:
        nats_server.server.stop()
        resp = await post(c, "release", release_body())
        assert resp.status == 503
        body = await resp.json()
        assert body["error"] == "queue_unavailable" and resp.headers["Retry-After"]


async def test_health_ready_metrics(client):
    assert (await client.get("/healthz")).status == 200
    ready = await client.get("/readyz")
    assert ready.status == 200 and (await ready.json())["checks"] == {"nats": True}
    await post(client, "ping", b"{}")
    metrics = await (await client.get("/metrics")).text()
    assert 'indexium_ingest_webhooks_total{event="ping",outcome="pong"} 1.0' in metrics
    assert 'indexium_ingest_http_requests_total{method="POST",route="/webhooks/github",status="200"}' in metrics


async def test_a_redelivery_after_the_jetstream_window_publishes_nothing(client, nats_url):
    """GitHub redelivers hours later with the same id; the KV record catches it."""
    assert (await post(client, "release", release_body(), delivery="late")).status == 202
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    # Simulate the duplicate window having passed: JetStream no longer remembers the id.
    info = await js.stream_info(ingest.STREAM.name)
    import dataclasses
    await js.update_stream(dataclasses.replace(info.config, duplicate_window=0.1))
    await nc.drain()
    import asyncio
    await asyncio.sleep(0.3)
    resp = await post(client, "release", release_body(), delivery="late")
    assert resp.status == 202 and (await resp.json())["status"] == "duplicate"
    assert len(await stream_messages(nats_url, ingest.RELEASE)) == 1


async def test_a_delivery_answered_503_is_not_remembered(nats_server):
    """If we could not store it, GitHub's redelivery must go through later."""
    if nats_server.server is None:
        pytest.skip("needs an embedded NATS this test can stop")
    from indexium_ingest.deliveries import DeliveryLog, key_for
    from indexium_platform import natsutil
    nc = await nats.connect(nats_server.url)
    await natsutil.ensure_all(nc.jetstream())
    log = DeliveryLog(nc.jetstream())
    assert not await log.seen("never-stored")
    await log.remember("stored", 1)
    assert await log.seen("stored")
    assert key_for("weird id/with spaces").startswith("h_")
    await nc.drain()
