"""Fixtures for the fake GitHub: a started server, an HTTP client, a webhook receiver."""

from __future__ import annotations

from dataclasses import dataclass, field

import aiohttp
import pytest
from aiohttp import web

from indexium_devstack.fakegithub import FakeGitHub


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


@pytest.fixture
async def http():
    async with aiohttp.ClientSession() as session:
        yield session


@dataclass
class Receiver:
    """A tiny webhook receiver on loopback recording what it got."""

    url: str = ""
    status: int = 202
    received: list[tuple[dict, bytes]] = field(default_factory=list)


@pytest.fixture
async def receiver():
    rec = Receiver()

    async def hook(request: web.Request) -> web.Response:
        rec.received.append((dict(request.headers), await request.read()))
        return web.Response(status=rec.status, text="ok")

    app = web.Application()
    app.router.add_post("/webhook", hook)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    rec.url = f"http://127.0.0.1:{runner.addresses[0][1]}/webhook"
    try:
        yield rec
    finally:
        await runner.cleanup()
