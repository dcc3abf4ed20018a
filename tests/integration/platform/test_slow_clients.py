"""Slow and idle clients against real service processes on loopback: the keep-alive timer closes
connections that never send a request, or send their head a byte at a time, and a body that
trickles in is a 408 envelope (a webhook, an API POST, a telemetry ping). Counts are bounded (a few dozen sockets per kind)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess

IDLE_S = 1.0
BODY_S = 1.0
PER_KIND = 30
# The keep-alive timer fires IDLE_S after the connection opened; the rest is scheduling slack
# on a loaded machine (a slow-header client would need 45 s for its head, and aiohttp's own
# default would hold them all for an hour).
CLOSED_WITHIN_S = IDLE_S + 9.0

POST_PATHS = {"ingest": "/webhooks/github", "api": "/api/v1/versions/by-hashes",
              "telemetry": "/api/v1/analytics/submit"}


@pytest.fixture(params=["ingest", "api", "telemetry"])
def service(request, nats_url, database_url, tmp_path):
    env = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_WEBHOOK_SECRET": "s3cret",
           "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0", "INDEXIUM_LOG_LEVEL": "warning",
           "INDEXIUM_HTTP_KEEPALIVE_TIMEOUT_SECONDS": str(IDLE_S),
           "INDEXIUM_HTTP_BODY_TIMEOUT_SECONDS": str(BODY_S)}
    proc = ServiceProcess(BY_NAME[request.param], port=free_port(), env=env,
                          log_path=tmp_path / f"{request.param}.log").start()
    try:
        proc.wait_ready(timeout=60, path="/healthz")
        yield request.param, proc
    finally:
        proc.stop(timeout=10)


async def _closed_by_server(reader: asyncio.StreamReader) -> float:
    """Read until the server closes; returns when (monotonic) that happened."""
    while await reader.read(4096):
        pass
    return time.monotonic()


async def _trickle(writer: asyncio.StreamWriter, data: bytes, every_s: float) -> None:
    """Write one byte every ``every_s`` until the data runs out or the server hangs up."""
    try:
        for i in range(len(data)):
            writer.write(data[i:i + 1])
            await writer.drain()
            await asyncio.sleep(every_s)
    except (ConnectionError, OSError):
        pass


async def test_idle_and_slow_header_connections_are_closed(service):
    name, proc = service
    opened = time.monotonic()
    idle = [await asyncio.open_connection("127.0.0.1", proc.port) for _ in range(PER_KIND)]
    slow = [await asyncio.open_connection("127.0.0.1", proc.port) for _ in range(PER_KIND)]
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    trickles = [asyncio.create_task(_trickle(w, head, 0.2)) for _, w in slow]
    try:
        closed = await asyncio.wait_for(
            asyncio.gather(*(_closed_by_server(r) for r, _ in idle + slow)), timeout=CLOSED_WITHIN_S + 5)
    finally:
        for task in trickles:
            task.cancel()
        for _, w in idle + slow:
            w.close()
    assert max(closed) - opened < CLOSED_WITHIN_S, f"{name}: held {max(closed) - opened:.1f} s"

    # The service itself is unaffected, and a kept-alive connection is closed once idle.
    reader, writer = await asyncio.open_connection("127.0.0.1", proc.port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    await writer.drain()
    assert (await reader.readline()).startswith(b"HTTP/1.1 200")
    await asyncio.wait_for(_closed_by_server(reader), timeout=CLOSED_WITHIN_S)
    writer.close()


async def test_a_body_that_trickles_in_is_a_408_envelope(service):
    name, proc = service
    reader, writer = await asyncio.open_connection("127.0.0.1", proc.port)
    writer.write(f"POST {POST_PATHS[name]} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"X-GitHub-Event: ping\r\nX-GitHub-Delivery: d-slow\r\nContent-Length: 1000\r\n\r\n".encode())
    trickle = asyncio.create_task(_trickle(writer, b"{" + b" " * 999, 0.05))
    try:
        started = time.monotonic()
        # Still sending after the answer, and reading it only then: the server drops those bytes
        # (linger) instead of resetting the connection under an answer not read yet.
        await asyncio.sleep(BODY_S + 0.5)
        answer = await asyncio.wait_for(reader.read(), timeout=BODY_S + 5)  # read() to EOF: closed after
    finally:
        trickle.cancel()
        writer.close()
    assert time.monotonic() - started < BODY_S + 4
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    assert json.loads(body)["error"] == "request_timeout"
    if name == "telemetry":  # counted under its own outcome, not as an invalid ping
        reader, writer = await asyncio.open_connection("127.0.0.1", proc.port)
        writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        metrics = (await asyncio.wait_for(reader.read(), timeout=10)).decode()
        writer.close()
        assert 'indexium_telemetry_pings_total{outcome="timed_out"} 1.0' in metrics
