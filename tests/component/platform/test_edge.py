"""Every response carries a request id (the caller's when given, else a fresh unique one), and
aiohttp's own 404/405 come out as the JSON error envelope."""

from __future__ import annotations

import re

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app


async def test_request_ids_are_echoed_or_unique():
    app = base_app("edge", ServiceMetrics("edge"))

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="hi")

    app.router.add_get("/hello", hello)
    async with TestClient(TestServer(app)) as client:
        ids = set()
        for _ in range(50):
            resp = await client.get("/hello")
            assert resp.status == 200
            ids.add(resp.headers["X-Request-Id"])
        assert len(ids) == 50 and all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
        resp = await client.get("/hello", headers={"X-Request-Id": "from-the-proxy"})
        assert resp.headers["X-Request-Id"] == "from-the-proxy"
        resp = await client.get("/nowhere")
        assert resp.status == 404 and re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-Id"])
        assert await resp.json() == {"error": "not_found", "description": "Not Found"}
        resp = await client.post("/hello")
        assert resp.status == 405 and "GET" in resp.headers["Allow"]
        assert (await resp.json())["error"] == "method_not_allowed"
