"""natsutil.connect's disconnect warning: a connection lost while in use, never our own close."""

import asyncio

import pytest
from structlog.testing import capture_logs

from indexium_platform import natsutil


def _warnings(logs: list[dict]) -> list[str]:
    return [e["event"] for e in logs if e["log_level"] == "warning"]


async def test_draining_or_closing_our_own_connection_warns_of_nothing(nats_server):
    # What the setup step does at every `make run` (it printed "[warning] nats_disconnected").
    with capture_logs() as logs:
        nc = await natsutil.connect(nats_server.url, name="test-drain")
        await nc.drain()
        nc = await natsutil.connect(nats_server.url, name="test-close")
        await natsutil.close(nc)
        nc = await natsutil.connect(nats_server.url, name="test-plain-close")
        await nc.close()
    assert logs == []  # `make run` configures no log level: a debug line would print too


async def test_a_connection_lost_to_the_server_still_warns(nats_server):
    if nats_server.server is None:
        pytest.skip("an external NATS_URL cannot be stopped by the test")
    with capture_logs() as logs:
        nc = await natsutil.connect(nats_server.url, name="test-lost")
        try:
            nats_server.server.stop()
            for _ in range(100):
                if "nats_disconnected" in _warnings(logs):
                    break
                await asyncio.sleep(0.05)
        finally:
            await nc.close()
    assert "nats_disconnected" in _warnings(logs)
