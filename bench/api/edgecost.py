"""What the platform's edge saves over aiohttp middlewares (issue 39, point 3).

    python bench/api/edgecost.py [--rounds 9] [--requests 20000]
    python bench/api/edgecost.py --http [--seconds 5] [--rounds 5] [--connections 32]

Two servers, each a process of its own, answer the same cached route (fixed JSON bytes, as
a cache hit answers) with the same work around it:

* ``hooks``: ``indexium_platform.web.base_app``, the edge as it ships (it wraps each route's
  handler; metrics, request id, canonical log line, error envelope), with the API's three
  hooks set the way the API sets them on a cache hit: a ``REQUEST_HOOK`` (the rate limit: a
  dict look-up, no pause), a ``RESPONSE_HOOK`` (two headers) and an ``ERROR_PAGE`` (never
  called on a 200);
* ``middlewares``: a plain ``web.Application`` whose middleware chain does the same work the
  way aiohttp's demos write it: an edge middleware (the same lines as the edge: request id,
  metrics, canonical log line, error envelope, nosniff, the response headers), a rate-limit
  middleware and an error-page middleware.

Two measures. Over HTTP (``--http``): both servers loaded in turn by ``load.py`` (raw asyncio
connections, one process beside the server), requests/s and the server's CPU per request. In
process (the default): each app handles mocked requests through aiohttp's own
``Application._handle`` (the router, the middleware chain or the wrapped handler, the hooks, the
log line; no socket), CPU time per request. On a shared 2-core machine the HTTP figures swing by
±30 % from round to round; the in-process one isolates the part that differs. Rounds alternate
(hooks, middlewares, hooks, ...) so the machine's load falls on both alike; each figure is the
median of its rounds. Printed: requests/s and server CPU per request of each,
and the ratio middlewares / hooks. The load is ``load.py``'s (raw asyncio connections, one
process beside the server): on a 2-core machine the client competes with the server, so CPU
per request is the steadier figure.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BODY = json.dumps({"hits": [{"slug": f"mod-{i}", "name": f"Mod {i}", "downloads": i * 7} for i in range(20)],
                  "total": 20, "limit": 20, "offset": 0}).encode()


def _hooks_app():
    from aiohttp import web

    from indexium_platform.metrics import ServiceMetrics
    from indexium_platform.web import ERROR_PAGE, REQUEST_HOOK, RESPONSE_HOOK, base_app

    app = base_app("bench", ServiceMetrics("bench"))
    budgets: dict[str, int] = {}

    def rate_limit(request: web.Request) -> None:
        budgets["127.0.0.1"] = budgets.get("127.0.0.1", 0) + 1  # (a client's budget: never refused here)
        return None

    def response_headers(request: web.Request, response: web.StreamResponse) -> None:
        response.headers["X-RateLimit-Limit"] = "600"
        response.headers["Vary"] = "Origin"

    app[REQUEST_HOOK] = rate_limit
    app[RESPONSE_HOOK] = response_headers
    app[ERROR_PAGE] = lambda request, exc: None

    async def cached(request: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type="application/json")

    app.router.add_get("/api/v1/mods", cached)
    return app


def _middlewares_app():
    from aiohttp import web

    from indexium_platform import logs
    from indexium_platform.metrics import ServiceMetrics
    from indexium_platform.web import X_REQUEST_ID, ApiError, error_response, header_text, new_request_id

    metrics = ServiceMetrics("bench")
    observe = metrics.requests.observe
    request_line = logs.canonical("indexium_platform.web")
    request_id_var = logs.context_var("request_id") or contextvars.ContextVar("request_id")
    budgets: dict[str, int] = {}

    @web.middleware
    async def edge(request: web.Request, handler):
        started = time.perf_counter()
        route = request.match_info.route.resource
        template = route.canonical if route is not None else "unmatched"
        request_id = header_text(request, X_REQUEST_ID, 128) or new_request_id()
        bound = request_id_var.set(request_id)
        status = 500
        try:
            try:
                response = await handler(request)
            except ApiError as exc:
                response = error_response(exc.status, exc.code, exc.description, exc.headers)
            except web.HTTPException as exc:
                response = error_response(exc.status, "http_error", exc.reason) if exc.status >= 400 else None
                if response is None:
                    raise
            except Exception:
                response = error_response(500, "internal_error", "Something went wrong on our side.")
            status = response.status
            headers = response.headers
            headers[X_REQUEST_ID] = request_id
            headers["X-Content-Type-Options"] = "nosniff"
            headers["X-RateLimit-Limit"] = "600"
            headers["Vary"] = "Origin"
            return response
        finally:
            elapsed = time.perf_counter() - started
            observe(template, request.method, status, elapsed)
            request_line.request(request.method, template, status, int(elapsed * 100_000 + 0.5) / 100)
            request_id_var.reset(bound)

    @web.middleware
    async def error_page(request: web.Request, handler):
        try:
            return await handler(request)
        except Exception as exc:
            page = None  # (the site's pages: never on this route)
            if page is None:
                raise exc from None
            return page

    @web.middleware
    async def rate_limit(request: web.Request, handler):
        budgets["127.0.0.1"] = budgets.get("127.0.0.1", 0) + 1
        return await handler(request)

    app = web.Application(middlewares=[edge, error_page, rate_limit])

    async def cached(request: web.Request) -> web.Response:
        return web.Response(body=BODY, content_type="application/json")

    app.router.add_get("/api/v1/mods", cached)
    return app


async def _in_process(kind: str, requests: int) -> float:
    """CPU seconds per request of ``requests`` mocked GETs through the app (best of this round)."""
    from aiohttp.test_utils import make_mocked_request

    app = _hooks_app() if kind == "hooks" else _middlewares_app()
    app.freeze()
    await app.startup()  # (the edge wraps the handlers here)
    made = [make_mocked_request("GET", "/api/v1/mods", app=app) for _ in range(requests)]
    handle = app._handle
    started = time.process_time()
    for request in made:
        await handle(request)
    return (time.process_time() - started) / requests


def in_process(rounds: int, requests: int) -> None:
    from indexium_platform import logs

    logs.configure("bench", fmt="json", stream=open("/dev/null", "w"))  # the log line written, to nowhere
    times: dict[str, list[float]] = {"hooks": [], "middlewares": []}
    for _ in range(rounds):
        for kind in times:
            times[kind].append(asyncio.run(_in_process(kind, requests)))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"in process, {rounds} rounds of {requests} requests each (CPU µs per request, median; rounds)")
    for kind, v in times.items():
        print(f"{kind:<12} {med[kind] * 1e6:>7.1f}  {[round(x * 1e6, 1) for x in v]}")
    ratios = [m / h for h, m in zip(times["hooks"], times["middlewares"])]
    print(f"middlewares / hooks: {med['middlewares'] / med['hooks']:.3f} "
          f"(per round: min {min(ratios):.3f}, max {max(ratios):.3f})")


def serve(kind: str, port: int) -> None:
    from aiohttp import web

    from indexium_platform import logs

    logs.configure("bench", fmt="json")  # as a service logs: the canonical line of each request
    app = _hooks_app() if kind == "hooks" else _middlewares_app()
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"server on {port} did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--connections", type=int, default=32)
    ap.add_argument("--http", action="store_true", help="over HTTP (servers as processes) instead of in process")
    ap.add_argument("--requests", type=int, default=20000, help="in process: requests per round")
    args = ap.parse_args()
    if not args.http:
        in_process(max(args.rounds, 5), args.requests)
        return
    sys.path.insert(0, str(HERE))
    import load

    servers = {}
    try:
        for kind in ("hooks", "middlewares"):
            port = _free_port()
            proc = subprocess.Popen([sys.executable, __file__, "--serve", kind, str(port)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            servers[kind] = (port, proc)
            _wait(port)
        rows: dict[str, list[dict]] = {"hooks": [], "middlewares": []}
        for _ in range(args.rounds):
            for kind, (port, proc) in servers.items():
                rows[kind].append(asyncio.run(load.main("127.0.0.1", port, "/api/v1/mods", args.seconds,
                                                        args.connections, proc.pid)))
    finally:
        for _, proc in servers.values():
            proc.terminate()
            proc.wait(10)
    out = {}
    for kind, results in rows.items():
        bad = sum(r["non_200"] for r in results)
        out[kind] = {"rps": statistics.median(r["rps"] for r in results),
                     "cpu_us_per_request": statistics.median(r["cpu_us_per_request"] for r in results),
                     "rps_rounds": [round(r["rps"]) for r in results], "non_200": bad}
    print(f"{'edge':<12} {'req/s':>9} {'CPU µs/req':>11}  rounds")
    for kind, r in out.items():
        print(f"{kind:<12} {r['rps']:>9.0f} {r['cpu_us_per_request']:>11.1f}  {r['rps_rounds']}"
              + (f"  non-200: {r['non_200']}" if r["non_200"] else ""))
    print(f"middlewares / hooks: req/s {out['middlewares']['rps'] / out['hooks']['rps']:.3f}, "
          f"CPU per request {out['middlewares']['cpu_us_per_request'] / out['hooks']['cpu_us_per_request']:.3f}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2], int(sys.argv[3]))
    else:
        main()
