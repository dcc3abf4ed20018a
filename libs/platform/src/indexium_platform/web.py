"""The aiohttp app every service is built on: health, readiness, metrics, error envelope, canonical log line.

A service's ``create_app(settings)`` calls :func:`base_app`, adds its routes and
its resources as ``cleanup_ctx`` entries, and registers readiness checks with
:func:`add_readiness_check`. :func:`run` owns the process lifetime: SIGTERM/SIGINT
flip readiness to false, stop new work and close resources within the grace period.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import time
from collections.abc import Awaitable, Callable

import msgspec
import structlog
from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler, RequestPayloadError
from aiohttp.web_urldispatcher import SystemRoute, UrlMappingMatchInfo
from multidict import istr

from . import heap, inflate, logs
from .metrics import ServiceMetrics

ReadinessCheck = Callable[[], Awaitable[bool]]

METRICS = web.AppKey("metrics", ServiceMetrics)
READINESS = web.AppKey("readiness", dict)  # name -> ReadinessCheck
SHUTTING_DOWN = web.AppKey("shutting_down", asyncio.Event)
SERVICE = web.AppKey("service", str)
# Optional: called with every response the edge sends (answers, error envelopes,
# HTTP exceptions), before it is sent, to add headers. A hook rather than an
# on_response_prepare signal, which costs every request a signal dispatch and a coroutine.
RESPONSE_HOOK = web.AppKey("response_hook", Callable[[web.Request, web.StreamResponse], None])
# Optional: answers an OPTIONS request the router refused with 405 (a CORS preflight), or
# None to answer the 405. A hook here rather than a middleware of its own: every middleware
# layer costs every request, and only OPTIONS requests need this.
PREFLIGHT = web.AppKey("preflight", Callable[[web.Request, web.HTTPMethodNotAllowed], "web.StreamResponse | None"])
# Optional: offered every exception a handler (or the router) raises, before the edge
# answers it, as a middleware inside the edge would see it: a response to send
# instead, or None to leave the exception to the edge (the API's web site answers errors on
# its pages with pages), or an awaitable of either (the site reads who is signed in for its
# 403 and 404 pages). A hook rather than a middleware, which would cost every request.
ERROR_PAGE = web.AppKey("error_page", Callable[[web.Request, Exception],
                                               "web.StreamResponse | Awaitable[web.StreamResponse | None] | None"])
# Optional: called with every request before its handler, once its request id is bound; it
# raises (an ApiError, say) to answer instead of the handler (the API's rate limit), or returns
# an awaitable that the edge awaits first, which may raise likewise (the API answers a refusal
# only after a pause). A hook rather than a middleware, for the reason above.
REQUEST_HOOK = web.AppKey("request_hook", Callable[[web.Request], "Awaitable[None] | None"])

log = logs.get(__name__)
request_line = logs.canonical(__name__)
_REQUEST_ID = logs.context_var("request_id")  # bound around every request (None: bind_contextvars)
_json = msgspec.json.Encoder()


def error_response(
    status: int, code: str, description: str, headers: dict[str, str] | None = None
) -> web.Response:
    """The stable error envelope: a machine code and safe text, never internal detail."""
    return web.Response(
        status=status,
        body=_json.encode({"error": code, "description": description}),
        content_type="application/json",
        headers=headers,
    )


class ApiError(Exception):
    """Raise from a handler to answer with the error envelope."""

    def __init__(self, status: int, code: str, description: str, headers: dict[str, str] | None = None,
                 *, close_connection: bool = False):
        super().__init__(description)
        self.status, self.code, self.description, self.headers = status, code, description, headers
        self.close_connection = close_connection  # the request's bytes cannot be read past: no keep-alive


def json_response(data: object, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status, body=_json.encode(data), content_type="application/json", headers=headers
    )


_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 408: "request_timeout",
               413: "payload_too_large",
               415: "unsupported_media_type"}


_QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})
_BODY_HEADERS = frozenset({"content-type", "content-length"})




BODY_LIMIT = web.AppKey("body_limit", int)  # the app's client_max_size: the default body limit
BODY_TIMEOUT = web.AppKey("body_timeout", float)  # seconds for a whole body (Common.http_body_timeout_s)
DEFAULT_BODY_TIMEOUT_S = 30.0


class BodyError(ApiError):
    """What :func:`read_request_body` raises: the envelope it answers with, and ``reason``, why,
    one of ``encoding`` (415), ``too_large`` (413), ``timeout`` (408), ``unreadable`` (400, the
    HTTP framing broke) or ``stream`` (400, the body does not inflate: ``detail`` says how). A
    caller with its own error codes maps the reason; the rest pass the envelope on."""

    def __init__(self, reason: str, status: int, code: str, description: str, *,
                 detail: str = "", close_connection: bool = False):
        super().__init__(status, code, description, close_connection=close_connection)
        self.reason, self.detail = reason, detail


async def read_request_body(request: web.Request, limit: int | None = None, *,
                            encodings: tuple[str, ...] = ("gzip", "deflate")) -> bytes:
    """The whole (inflated) body, or a :class:`BodyError`: 415 for a Content-Encoding not in
    ``encodings`` (checked before a byte of the body is read), 400 for one that does not
    inflate or is truncated, 413 when what was sent or what it inflates to exceeds ``limit``
    (default: the app's client_max_size), 408 when it does not arrive in full within the app's
    body timeout. aiohttp's own decompression is off (``base_app``)."""
    limit = request.app[BODY_LIMIT] if limit is None else limit
    sent = inflate.layers(request.headers.getall("Content-Encoding", []))
    if len(sent) > 1 or (sent and inflate.ENCODINGS.get(sent[0]) not in encodings):
        allowed = " or ".join((*encodings, "identity")) if encodings else "absent (or identity)"
        raise BodyError("encoding", 415, "unsupported_media_type", f"Content-Encoding must be {allowed}.")
    too_large = BodyError("too_large", 413, "payload_too_large", f"Request bodies are limited to {limit} bytes.")
    if request.content_length is not None and request.content_length > limit:
        raise too_large
    inflater = inflate.Inflater(inflate.ENCODINGS[sent[0]], limit) if sent else None
    body = bytearray()
    timeout_s = request.app.get(BODY_TIMEOUT, DEFAULT_BODY_TIMEOUT_S)
    content = request.content
    try:
        if content.is_eof():
            # All of it has arrived with the headers (a small body nearly always has): nothing
            # to wait for, so neither a timer nor a chunk iterator.
            whole = content.read_nowait()
            if len(whole) > limit:
                raise too_large
            if inflater is None:
                return whole
            inflater.feed(whole)
            return inflater.finish()
        # A client trickling its body must not hold the connection (and a handler) forever.
        async with asyncio.timeout(timeout_s):
            async for chunk in content.iter_chunked(64 * 1024):
                body += chunk
                if len(body) > limit:
                    raise too_large
                if inflater is not None:
                    inflater.feed(chunk)
        return inflater.finish() if inflater is not None else bytes(body)
    except TimeoutError:
        # The rest of the body is left to arrive: the edge drops it after the answer (linger).
        raise BodyError("timeout", 408, "request_timeout",
                        f"The request body did not arrive within {timeout_s:g} s.",
                        close_connection=True) from None
    except UNREADABLE_BODY:
        request.content.feed_eof()
        raise BodyError("unreadable", 400, "invalid_body", "The request body could not be read.",
                        close_connection=True) from None
    except inflate.TooLarge:
        raise too_large from None
    except inflate.BadStream as exc:
        # Neither can the connection carry another request: the rest of the body is unread
        # (the edge drops it after the answer).
        raise BodyError("stream", 400, "invalid_body",
                        f"The request body {exc} (Content-Encoding: {sent[0]}).",
                        detail=str(exc), close_connection=True) from None


# What aiohttp raises when it cannot inflate or read a request body (a broken chunk, say).
UNREADABLE_BODY = (RequestPayloadError, HttpProcessingError)

LINGER_S = 2.0


async def linger(request: web.Request, linger_s: float = LINGER_S) -> None:
    """After an answer that ends the connection with the body unread (a 408, a body that does
    not inflate): send FIN, then read and drop what the client still sends until it hangs up,
    for at most ``linger_s``, and only then let the socket close. Closing a socket with bytes
    unread in it, or one the client is still writing to, sends a reset, and a reset can cost
    the client the answer it has not read yet (nginx's lingering close does the same)."""
    transport = request.transport
    content = request.content
    try:
        if transport is None or transport.is_closing():
            return
        if transport.can_write_eof():
            transport.write_eof()
        async with asyncio.timeout(linger_s):
            while await content.readany():
                pass
    except Exception:  # (timed out, the client gone, the body's framing broken: done either way)
        pass
    finally:
        content.feed_eof()  # so aiohttp does not linger over it again (10 s) before it closes


def header_text(request: web.Request, name: str, max_len: int) -> str | None:
    """A header as printable ASCII of at most ``max_len`` characters, else None (aiohttp hands
    other bytes over as surrogates, which no log line or JSON can encode)."""
    value = request.headers.get(name)
    if value is None or len(value) > max_len or not value.isascii() or not value.isprintable():
        return None
    return value


# Header names as multidict's istr: a look-up by an istr skips case-folding the name, which a
# plain str costs on every look-up (aiohttp.hdrs names its headers the same way).
X_REQUEST_ID = istr("X-Request-Id")
_NOSNIFF = istr("X-Content-Type-Options")
_ID_PREFIX = os.urandom(8).hex()
_ID_COUNTER = itertools.count(1)


def new_request_id() -> str:
    """32 hex digits, unique: a random per-process prefix and a counter (a uuid4 per request
    costs a getrandom() call; ids need to be unique, not unpredictable)."""
    return f"{_ID_PREFIX}{next(_ID_COUNTER):016x}"


class _Hooks:
    """What the edge reads from its app on every request, read once when the app starts (a
    frozen app's keys cannot change): ``app.get(KEY)`` is a Python-level mapping look-up,
    several of them per request."""

    __slots__ = ("observe", "request", "response", "preflight", "error_page")

    def __init__(self, app: web.Application) -> None:
        self.observe = app[METRICS].requests.observe
        self.request = app.get(REQUEST_HOOK)
        self.response = app.get(RESPONSE_HOOK)
        self.preflight = app.get(PREFLIGHT)
        self.error_page = app.get(ERROR_PAGE)


class _Refused(SystemRoute):
    """The route of a request no route answers: it raises aiohttp's own 404 or 405, inside
    the edge like any handler."""

    def __init__(self, refusal: web.HTTPException, at_edge) -> None:
        super().__init__(refusal)
        self._at_edge = at_edge(self._handle)

    @property
    def handler(self):
        return self._at_edge


class _Unmatched(web.AbstractResource):
    """The router's last resort: a request no route matches gets a :class:`_Refused` route (the
    edge wraps route handlers, so it cannot wrap aiohttp's own answer for those).

    Registered before any route and indexed under "/", which the router tries last for every
    path: when it is asked, nothing registered under a longer prefix of the path matched. A
    route registered after it under "/" itself (the web site's home page, a catch-all) may
    still match: then it declines, and the router goes on to that route."""

    def __init__(self, router: web.UrlDispatcher, at_edge) -> None:
        super().__init__()
        self._router, self._at_edge = router, at_edge

    @property
    def canonical(self) -> str:
        return "/"

    def url_for(self, **kwargs: str):
        raise RuntimeError("the unmatched-request resource has no URL")

    def add_prefix(self, prefix: str) -> None:
        raise RuntimeError("the unmatched-request resource cannot be moved under a prefix")

    def get_info(self) -> dict:
        return {}

    def raw_match(self, path: str) -> bool:
        return False

    def __len__(self) -> int:
        return 0

    def __iter__(self):
        return iter(())

    async def resolve(self, request: web.Request):
        allowed: set[str] = set()
        for resource in self._router.resources():
            if resource is self:
                continue
            match_info, methods = await resource.resolve(request)
            if match_info is not None:
                return None, set()  # that route answers: the router reaches it after this
            allowed |= methods
        # As the router itself answers: 405 when the path has routes for other methods.
        refusal = web.HTTPMethodNotAllowed(request.method, allowed) if allowed else web.HTTPNotFound()
        return UrlMappingMatchInfo({}, _Refused(refusal, self._at_edge)), set()


def _edge(app: web.Application):
    """The edge of ``app``: metrics by route template, one canonical log line, errors as the
    envelope. Every request pays for each line here (it wraps a cache hit, the cheapest answer
    there is), so the app's hooks are read once, at start-up, and the edge is no aiohttp
    middleware: it wraps each route's handler when the app starts. Any middleware costs every
    request two coroutine layers (its own and the one aiohttp adds to track the current app);
    a wrapped handler is one. Requests no route matches reach it through :class:`_Unmatched`.
    Returns ``at_edge(handler)``, the wrapped handler."""
    started_app: list[_Hooks] = []
    perf_counter = time.perf_counter

    def at_edge(handler):
        async def edge(request: web.Request) -> web.StreamResponse:
            started = perf_counter()
            hooks = started_app[0] if started_app else _Hooks(app)  # (unmatched, before start-up: a test's)
            route = request.match_info.route.resource
            template = route.canonical if route is not None else "unmatched"
            request_id = header_text(request, X_REQUEST_ID, 128) or new_request_id()
            if _REQUEST_ID is not None:
                bound = _REQUEST_ID.set(request_id)
            else:
                structlog.contextvars.bind_contextvars(request_id=request_id)
            status = 500
            closing = answered = None
            try:
                try:
                    try:
                        before = hooks.request
                        if before is not None and (pause := before(request)) is not None:
                            await pause
                        response = await handler(request)
                    except Exception as exc:
                        error_page = hooks.error_page
                        if error_page is None or (response := error_page(request, exc)) is None:
                            raise
                        if not isinstance(response, web.StreamResponse):  # an awaitable: the hook reads first
                            if (response := await response) is None:
                                raise
                except ApiError as exc:
                    response = error_response(exc.status, exc.code, exc.description, exc.headers)
                    if exc.close_connection:
                        response.force_close()
                        closing = True  # answered, then lingered over, below
                except web.HTTPException as exc:
                    preflight = hooks.preflight if exc.status == 405 and request.method == "OPTIONS" else None
                    if preflight is not None and (answer := preflight(request, exc)) is not None:
                        response = answer
                    elif exc.status >= 400 and exc.content_type != "application/json":
                        code = _HTTP_CODES.get(exc.status, "http_error")
                        # Keep what the exception says beyond its own body (Allow on a 405), not its
                        # Content-Type/Length: aiohttp refuses a Content-Type header next to content_type.
                        kept = {k: v for k, v in exc.headers.items() if k.lower() not in _BODY_HEADERS}
                        response = error_response(exc.status, code, exc.reason, kept or None)
                    else:
                        raise
                except (asyncio.CancelledError, ConnectionResetError):
                    # The client hung up (mid-upload, say; aiohttp then cancels the handler): nobody
                    # to answer, not our error. Logged and counted as 499, as nginx does, never a 5xx.
                    status = 499
                    raise
                except KeyboardInterrupt:
                    raise
                except Exception:
                    log.exception("unhandled_error", route=template)
                    response = error_response(500, "internal_error", "Something went wrong on our side.")
                status = response.status
                headers = response.headers
                headers[X_REQUEST_ID] = request_id
                # Every answer is what its Content-Type says: an icon an author made, a JSON
                # body, a page are never sniffed into script or HTML (docs/security.md).
                headers[_NOSNIFF] = "nosniff"
                hook = hooks.response
                if hook is not None and not response.prepared:
                    hook(request, response)
                if closing:
                    await response.prepare(request)
                    await response.write_eof()
                    answered = perf_counter()
                    await linger(request)
                return response
            except web.HTTPException as exc:
                status = exc.status
                hook = hooks.response
                if hook is not None:
                    hook(request, exc)
                raise
            finally:
                elapsed = (answered or perf_counter()) - started
                method = request.method
                hooks.observe(template, method, status, elapsed)
                if template not in _QUIET_ROUTES:
                    # The canonical line: no client address, ever (telemetry's privacy promise).
                    # Milliseconds to 2 decimals: integer rounding, a fraction of round(x, 2)'s cost.
                    request_line.request(method, template, status, int(elapsed * 100_000 + 0.5) / 100)
                if _REQUEST_ID is not None:
                    _REQUEST_ID.reset(bound)
                else:
                    structlog.contextvars.unbind_contextvars("request_id")

        edge.at_edge = True  # (a route's handler is wrapped once)
        return edge

    async def start(app: web.Application) -> None:
        if app.middlewares:
            # It would run outside the edge: its errors without the envelope, its time in no
            # metric or log line. The hooks above do what a middleware here would.
            raise RuntimeError("base_app takes no aiohttp middleware: use REQUEST_HOOK, RESPONSE_HOOK or ERROR_PAGE")
        started_app[:] = [_Hooks(app)]
        # The router is frozen now: every route is registered, and none is added from here on.
        # aiohttp keeps a route's handler as its _handler (AbstractRoute); a test pins this.
        for route in app.router.routes():
            if not getattr(route.handler, "at_edge", False):
                route._handler = at_edge(route.handler)

    app.on_startup.append(start)
    return at_edge


async def _healthz(request: web.Request) -> web.Response:
    return json_response({"status": "ok", "service": request.app[SERVICE]})


async def _readyz(request: web.Request) -> web.Response:
    app = request.app
    if app[SHUTTING_DOWN].is_set():
        app[METRICS].ready.set(0)
        return json_response({"status": "shutting_down"}, status=503)
    results: dict[str, bool] = {}
    for name, check in app[READINESS].items():
        try:
            results[name] = bool(await asyncio.wait_for(check(), timeout=2.0))
        except Exception:
            results[name] = False
    ok = all(results.values())
    app[METRICS].ready.set(1 if ok else 0)
    return json_response({"status": "ready" if ok else "not_ready", "checks": results},
                         status=200 if ok else 503)


async def _metrics(request: web.Request) -> web.Response:
    body, content_type = request.app[METRICS].render()
    return web.Response(body=body, headers={"Content-Type": content_type})


async def _mark_shutting_down(app: web.Application) -> None:
    app[SHUTTING_DOWN].set()


# What aiohttp's parser reads of a request's head (its defaults: 8,190 bytes a line or field, 128
# headers). The request line holds a bulk GET's ids: /v2's ids=["…"] with 1,000 ids or slugs (up to
# 64 characters each, ~73 bytes URL-encoded) is ~73 KB, so the line may hold 80 KiB, which still
# bounds what one connection's head can make us buffer. A header field keeps aiohttp's 8,190 (a
# browser's cookies fit). The two must differ: a LineTooLong says which by the limit it names.
MAX_REQUEST_LINE = 80 * 1024
MAX_HEADER_FIELD = 8190
MAX_HEADERS = 128


def _refusal(handler: RequestHandler, exc: BaseException | None) -> tuple[int, str, str] | None:
    """(status, code, description) for a request head aiohttp's parser refused, else None."""
    if isinstance(exc, LineTooLong):
        limit = exc.args[1] if len(exc.args) > 1 else None
        if limit == handler.max_line_size:
            return 414, "uri_too_long", f"The request line is longer than {limit} bytes."
        return 431, "header_too_large", f"A request header is longer than {handler.max_field_size} bytes."
    if isinstance(exc, BadHttpMessage) and exc.message == "Too many headers received":
        return 431, "header_too_large", f"A request has at most {MAX_HEADERS} headers."
    if isinstance(exc, HttpProcessingError):
        return 400, "bad_request", "The request could not be parsed as HTTP/1.1."
    return None


class _EdgeHandler(RequestHandler):
    """aiohttp's per-connection protocol, answering a request head its parser refused (too
    long, malformed) with the error envelope, logged at warning without a traceback. aiohttp's
    own answer is a text/plain 400 for all of them and an error-level traceback for each: a
    client's mistake (or a probe) is not our error. Everything else is aiohttp's."""

    __slots__ = ()

    def handle_error(self, request, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        refusal = _refusal(self, exc)
        if refusal is None or request.writer.output_size > 0:
            return super().handle_error(request, status, exc, message)
        status, code, description = refusal
        request_id = new_request_id()
        # No client address, as every log line here; no traceback: nothing of ours failed. A head
        # over our limits is a warning (a real client may need more); junk (a port scan) is info.
        (log.warning if status != 400 else log.info)("request_head_refused", status=status, error=code,
                                                     request_id=request_id)
        response = error_response(status, code, description, {X_REQUEST_ID: request_id})
        response.force_close()  # the parser cannot go on reading this connection
        return response


class _EdgeServer(web.Server):
    """aiohttp's Server, making an :class:`_EdgeHandler` for each connection."""

    def __call__(self) -> RequestHandler:
        return _EdgeHandler(self, loop=self._loop, **self._kwargs)


def _serve_with_edge_handlers(app: web.Application) -> None:
    """Every server made for ``app`` (web.run_app's, a test's TestServer, make run's) makes
    :class:`_EdgeHandler` connections. aiohttp has no setting for the protocol class: its
    runners all get their Server from ``app._make_handler``, so that is wrapped, on this app
    only (tests/component/platform/test_edge.py pins it)."""
    make = app._make_handler

    def make_handler(**kwargs) -> web.Server:
        server = make(**kwargs)
        server.__class__ = _EdgeServer  # (a subclass adding no state: only __call__ differs)
        return server

    app._make_handler = make_handler


def base_app(
    service: str, metrics: ServiceMetrics, *, client_max_size: int = 1024**2,
    handler_args: dict | None = None,
) -> web.Application:
    # Request bodies are inflated by read_request_body, never by aiohttp (see inflate.py).
    handler_args = {"auto_decompress": False, "max_line_size": MAX_REQUEST_LINE, "max_field_size": MAX_HEADER_FIELD,
                    "max_headers": MAX_HEADERS, **(handler_args or {})}
    app = web.Application(client_max_size=client_max_size, handler_args=handler_args)
    _serve_with_edge_handlers(app)
    # The edge wraps every route when the app starts (_edge); no middleware. A service adding
    # a middleware of its own puts it outside the edge: use the hooks above instead.
    app.router.register_resource(_Unmatched(app.router, _edge(app)))
    app[BODY_LIMIT] = client_max_size
    app[SERVICE] = service
    app[METRICS] = metrics
    app[READINESS] = {}
    app[SHUTTING_DOWN] = asyncio.Event()
    app.on_shutdown.append(_mark_shutting_down)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)
    return app


def add_readiness_check(app: web.Application, name: str, check: ReadinessCheck) -> None:
    app[READINESS][name] = check


def run(app: web.Application, *, host: str, port: int, shutdown_grace_s: float,
        keepalive_timeout_s: float = 75.0) -> None:
    """Serve until SIGTERM/SIGINT, then shut down gracefully and return (exit 0)."""
    log.info("listening", host=host, port=port)
    web.run_app(
        app,
        host=host,
        port=port,
        access_log=None,  # the middleware writes the canonical line without client addresses
        shutdown_timeout=shutdown_grace_s,
        # aiohttp's default (3630 s) let idle and slow-header connections pin descriptors.
        keepalive_timeout=keepalive_timeout_s,
        handle_signals=True,
        print=None,
    )
    log.info("stopped")


def collect_less(app: web.Application, young_threshold: int) -> None:
    """Fewer cyclic-GC passes for a process serving many small requests at once (opt-in, per
    service, from its ``main``: it sets process-wide state).

    CPython collects its youngest generation whenever the tracked objects allocated and not
    yet freed since the last pass exceed 700. Nearly everything a request allocates is freed
    by reference counting when it ends, so with a few dozen requests in flight that count is
    the objects those requests hold; it keeps crossing 700, and every pass walks all of
    them (and every gen1 and full pass all the objects loaded at start-up). Measured on
    telemetry's accept path at 64 requests in flight: ~1 pass per 16 pings and about a tenth
    of the process's CPU. So: the youngest generation collected past ``young_threshold``
    objects instead, and everything loaded before serving (modules, settings, the first
    caches) frozen once start-up is done, out of every later pass (``gc.freeze``). Cyclic
    garbage is still collected, just in fewer, larger passes; an object loaded at start-up
    that later ends in a reference cycle stays, which start-up state does not do."""
    first, *older = gc.get_threshold()
    gc.set_threshold(max(first, young_threshold), *older)

    async def freeze(app: web.Application) -> None:
        gc.collect()
        gc.freeze()

    # Last of the start-up hooks: after the cleanup contexts have opened their resources.
    app.on_startup.append(freeze)


def serve(name: str, settings_cls, create_app: Callable[..., web.Application], *,
          young_gc_threshold: int | None = None) -> None:
    """A service's whole ``main``: settings (fail fast, naming every bad variable), logs, app, run.
    ``young_gc_threshold``: see :func:`collect_less`."""
    from .settings import SettingsError, load

    try:
        settings = load(settings_cls)
    except SettingsError as exc:
        raise SystemExit(f"{name}: {exc}") from None
    logs.configure(name, fmt=settings.log_format, level=settings.log_level)
    heap.watch()  # every collector pass timed: indexium_<service>_gc_pause_seconds
    app = create_app(settings)
    if young_gc_threshold is not None:
        collect_less(app, young_gc_threshold)
    app[BODY_TIMEOUT] = settings.http_body_timeout_s
    run(app, host=settings.host, port=settings.port, shutdown_grace_s=settings.shutdown_grace_s,
        keepalive_timeout_s=settings.http_keepalive_timeout_s)
