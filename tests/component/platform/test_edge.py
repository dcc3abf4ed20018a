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


async def test_request_id_is_bound_while_handling_and_hooks_see_every_response():
    import structlog

    from indexium_platform.web import PREFLIGHT, RESPONSE_HOOK, ApiError

    app = base_app("edge", ServiceMetrics("edge"))
    seen_ids, hooked = [], []

    async def hello(request: web.Request) -> web.Response:
        seen_ids.append(structlog.contextvars.get_contextvars().get("request_id"))
        if request.query.get("fail") == "api":
            raise ApiError(429, "rate_limited", "slow down")
        if request.query.get("fail") == "redirect":
            raise web.HTTPFound("/elsewhere")
        return web.Response(text="hi")

    app.router.add_get("/hello", hello)
    app[RESPONSE_HOOK] = lambda request, response: hooked.append(response.status) or response.headers.update(
        {"X-Hooked": "yes"})
    app[PREFLIGHT] = lambda request, refused: web.Response(status=204) if request.path == "/hello" else None
    async with TestClient(TestServer(app)) as client:
        resp = await client.get("/hello", headers={"X-Request-Id": "rid-1"})
        assert resp.headers["X-Hooked"] == "yes" and seen_ids == ["rid-1"]
        assert structlog.contextvars.get_contextvars().get("request_id") is None  # not left bound
        resp = await client.get("/hello", params={"fail": "api"})
        assert resp.status == 429 and resp.headers["X-Hooked"] == "yes"
        resp = await client.get("/hello", params={"fail": "redirect"}, allow_redirects=False)
        assert resp.status == 302 and resp.headers["X-Hooked"] == "yes"
        resp = await client.get("/nowhere")
        assert resp.status == 404 and resp.headers["X-Hooked"] == "yes"
        preflight = await client.options("/hello")
        assert preflight.status == 204 and preflight.headers["X-Hooked"] == "yes"
        refused = await client.post("/hello")  # not OPTIONS: the 405 envelope, the hook not asked
        assert refused.status == 405 and (await refused.json())["error"] == "method_not_allowed"
    assert hooked == [200, 429, 302, 404, 204, 405]
    assert len(seen_ids) == 3 and seen_ids[0] == "rid-1" and all(seen_ids)


async def test_the_error_page_hook_sees_exceptions_before_the_edge_answers_them():
    from indexium_platform.web import ERROR_PAGE, ApiError

    app = base_app("edge", ServiceMetrics("edge"))
    offered = []

    async def page(request: web.Request) -> web.Response:
        failure = request.query["fail"]
        if failure == "api":
            raise ApiError(409, "conflict", "no")
        if failure == "redirect":
            raise web.HTTPFound("/elsewhere")
        if failure == "db":
            raise ConnectionRefusedError("database")
        raise RuntimeError("bug")

    def error_page(request: web.Request, exc: Exception) -> web.Response | None:
        offered.append(type(exc).__name__)
        if request.path != "/page" or isinstance(exc, (web.HTTPFound, RuntimeError)):
            return None  # left to the edge
        return web.Response(status=503 if isinstance(exc, OSError) else exc.status, text="a page")

    app.router.add_get("/page", page)
    app.router.add_get("/api", page)
    app[ERROR_PAGE] = error_page
    async with TestClient(TestServer(app)) as client:
        resp = await client.get("/page", params={"fail": "api"})
        assert resp.status == 409 and await resp.text() == "a page" and "X-Request-Id" in resp.headers
        resp = await client.get("/page", params={"fail": "db"})
        assert resp.status == 503 and await resp.text() == "a page"
        resp = await client.get("/page", params={"fail": "redirect"}, allow_redirects=False)
        assert resp.status == 302
        resp = await client.get("/page", params={"fail": "bug"})
        assert resp.status == 500 and (await resp.json())["error"] == "internal_error"
        resp = await client.get("/api", params={"fail": "api"})
        assert resp.status == 409 and (await resp.json())["error"] == "conflict"
        resp = await client.get("/nowhere")  # the router's 404 is offered too
        assert resp.status == 404 and (await resp.json())["error"] == "not_found"
        assert (await client.get("/healthz")).status == 200  # nothing raised: nothing offered
    assert offered == ["ApiError", "ConnectionRefusedError", "HTTPFound", "RuntimeError", "ApiError", "HTTPNotFound"]


async def test_each_app_answers_with_its_own_hooks_read_at_start_up_and_cleans_bad_request_ids():
    """The edge reads an app's hooks once, when the app starts (a started app's keys cannot
    change): two apps in one process keep their own, and a caller's request id that is too
    long or not printable ASCII is replaced by a fresh one."""
    from indexium_platform.web import RESPONSE_HOOK

    hooked, plain = base_app("a", ServiceMetrics("a")), base_app("b", ServiceMetrics("b"))

    async def hello(request: web.Request) -> web.Response:
        return web.Response(text="hi")

    for app in (hooked, plain):
        app.router.add_get("/hello", hello)
    hooked[RESPONSE_HOOK] = lambda request, response: response.headers.update({"X-Hooked": "a"})
    async with TestClient(TestServer(hooked)) as a, TestClient(TestServer(plain)) as b:
        for _ in range(2):
            assert (await a.get("/hello")).headers.get("X-Hooked") == "a"
            assert "X-Hooked" not in (await b.get("/hello")).headers
        for bad in ("x" * 129, "tab\tinside"):
            resp = await a.get("/hello", headers={"X-Request-Id": bad})
            assert resp.status == 200 and re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-Id"])
        resp = await a.get("/hello", headers={"X-Request-Id": "y" * 128})
        assert resp.headers["X-Request-Id"] == "y" * 128
        metrics = await (await a.get("/metrics")).text()
        assert 'indexium_a_http_requests_total{method="GET",route="/hello",status="200"} 5.0' in metrics
        # An empty id is no id: the edge makes one (as it did before the hooks were read once).
        resp = await a.get("/hello", headers={"X-Request-Id": ""})
        assert re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-Id"])


async def test_routes_under_the_root_and_static_files_are_answered_inside_the_edge(tmp_path):
    """The edge wraps each route's handler when the app starts (no middleware), and a request no
    route matches reaches it through a last-resort resource registered under "/" before any
    route: routes registered after it under "/" (a home page, a catch-all) still answer, and
    405 still names the methods a path has."""
    from indexium_platform.web import REQUEST_HOOK

    app = base_app("edge", ServiceMetrics("edge"))
    asked = []

    async def home(request: web.Request) -> web.Response:
        return web.Response(text="home")

    async def anything(request: web.Request) -> web.Response:
        return web.Response(text="tail " + request.match_info["tail"])

    (tmp_path / "a.txt").write_text("static")
    app.router.add_get("/", home)
    app.router.add_static("/static", str(tmp_path))
    app.router.add_post("/{tail:.*}", anything)
    app[REQUEST_HOOK] = lambda request: asked.append(request.path)
    async with TestClient(TestServer(app)) as client:
        resp = await client.get("/")
        assert await resp.text() == "home" and re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-Id"])
        resp = await client.get("/static/a.txt")
        assert await resp.text() == "static" and "X-Request-Id" in resp.headers
        resp = await client.post("/some/where")
        assert await resp.text() == "tail some/where" and "X-Request-Id" in resp.headers
        resp = await client.get("/some/where")  # only POST there: 405 naming it, as the envelope
        assert resp.status == 405 and "POST" in resp.headers["Allow"]
        assert (await resp.json())["error"] == "method_not_allowed" and "X-Request-Id" in resp.headers
        resp = await client.get("/static/missing.txt")  # (aiohttp's file response finds out as it is sent)
        assert resp.status == 404 and "X-Request-Id" in resp.headers
        metrics = await (await client.get("/metrics")).text()
    assert asked == ["/", "/static/a.txt", "/some/where", "/some/where", "/static/missing.txt", "/metrics"]
    assert 'route="unmatched",status="405"' in metrics and 'route="/",status="200"' in metrics


async def test_the_request_hook_answers_instead_of_the_handler_with_everything_the_edge_adds():
    """REQUEST_HOOK runs before the handler, with the request id bound; what it raises is
    answered as the handler's own exceptions are (envelope, X-Request-Id, the response hook),
    for requests no route matches too."""
    import structlog

    from indexium_platform.web import REQUEST_HOOK, RESPONSE_HOOK, ApiError

    app = base_app("edge", ServiceMetrics("edge"))
    handled, bound = [], []

    async def hello(request: web.Request) -> web.Response:
        handled.append(request.path)
        return web.Response(text="hi")

    def refuse(request: web.Request) -> None:
        bound.append(structlog.contextvars.get_contextvars().get("request_id"))
        if request.query.get("refuse"):
            raise ApiError(429, "rate_limited", "slow down", headers={"Retry-After": "3"})

    app.router.add_get("/hello", hello)
    app[REQUEST_HOOK] = refuse
    app[RESPONSE_HOOK] = lambda request, response: response.headers.update({"X-Hooked": "yes"})
    async with TestClient(TestServer(app)) as client:
        resp = await client.get("/hello", params={"refuse": "1"}, headers={"X-Request-Id": "rid-9"})
        assert resp.status == 429 and resp.headers["Retry-After"] == "3" and resp.headers["X-Hooked"] == "yes"
        assert await resp.json() == {"error": "rate_limited", "description": "slow down"}
        assert resp.headers["X-Request-Id"] == "rid-9"
        resp = await client.get("/nowhere", params={"refuse": "1"})
        assert resp.status == 429 and resp.headers["X-Hooked"] == "yes"
        assert (await client.get("/hello")).status == 200
    assert handled == ["/hello"] and bound[0] == "rid-9" and len(bound) == 3 and all(bound)


async def test_an_app_with_an_aiohttp_middleware_refuses_to_start():
    """The edge wraps route handlers, so a middleware would run outside it (its errors without
    the envelope, its time in no metric or log line): starting such an app fails, naming the
    hooks to use instead."""
    import pytest

    app = base_app("m", ServiceMetrics("m"))

    @web.middleware
    async def outside(request, handler):
        return await handler(request)

    app.middlewares.append(outside)
    with pytest.raises(RuntimeError, match="REQUEST_HOOK"):
        async with TestClient(TestServer(app)):
            pass


async def test_a_request_head_over_the_parser_limits_is_the_envelope_logged_as_a_warning(raw_request):
    """aiohttp answers a request line or header over its limits with a text/plain 400 and logs an
    error-level traceback; ours is the envelope (414, 431; 400 for a head that is not HTTP) at
    warning level (info for the 400), without a traceback. The request line itself holds 1,000 ids."""
    import io
    import json
    import logging

    import structlog

    from indexium_platform import logs
    from indexium_platform.web import MAX_HEADER_FIELD, MAX_HEADERS, MAX_REQUEST_LINE

    class Stderr(io.TextIOWrapper):
        def isatty(self) -> bool:
            return False

    raw = io.BytesIO()
    root = logging.getLogger()
    kept = root.handlers[:], root.level
    logs.configure("edge", fmt="json", level="info", stream=Stderr(raw, encoding="utf-8", write_through=True))
    app = base_app("edge", ServiceMetrics("edge"))

    async def ids(request: web.Request) -> web.Response:
        return web.Response(text=str(len(json.loads(request.query["ids"]))))

    app.router.add_get("/ids", ids)
    try:
        async with TestClient(TestServer(app)) as client:
            thousand = "%5B" + "%2C".join(f"%22{i:08d}%22" for i in range(1000)) + "%5D"  # ~17 KB
            status, answer = await raw_request(client, "GET", f"/ids?ids={thousand}", {})
            assert status == 200 and answer.endswith(b"1000")
            slugs = "%5B" + "%2C".join(f"%22{i:064d}%22" for i in range(1000)) + "%5D"  # 1,000 longest slugs
            assert len(slugs) < MAX_REQUEST_LINE - 100
            assert (await raw_request(client, "GET", f"/ids?ids={slugs}", {}))[0] == 200
            cases = [
                (("GET", "/ids?ids=" + "x" * MAX_REQUEST_LINE, {}), 414, "uri_too_long"),
                (("GET", "/ids", {b"X-Big": b"y" * (MAX_HEADER_FIELD + 1)}), 431, "header_too_large"),
                (("GET", "/ids", {f"X-H{i}".encode(): b"1" for i in range(MAX_HEADERS + 1)}), 431,
                 "header_too_large"),
                (("GET", "/ids", {b"Bad Header": b"1"}), 400, "bad_request"),
            ]
            for (method, path, headers), expected, code in cases:
                status, answer = await raw_request(client, method, path, headers)
                head, _, body = answer.partition(b"\r\n\r\n")
                assert status == expected, (code, answer[:200])
                assert b"Content-Type: application/json" in head and b"X-Request-Id: " in head
                assert json.loads(body)["error"] == code
        logs.flush()
        lines = [json.loads(line) for line in raw.getvalue().splitlines()]
        refused = [line for line in lines if line["event"] == "request_head_refused"]
        assert [(line["status"], line["level"]) for line in refused] == [
            (414, "warning"), (431, "warning"), (431, "warning"), (400, "info")]
        assert not [line for line in lines if line["level"] in ("error", "critical") or "exception" in line]
    finally:
        structlog.reset_defaults()
        structlog.contextvars.clear_contextvars()
        root.handlers[:], _ = kept
        root.setLevel(kept[1])
