"""What every response gets: the rate limit (every route but the operational ones), and on
the public JSON routes CORS and no-store on errors.

CORS is open (``Access-Control-Allow-Origin: *``, no credentials): web UIs and launchers
call the API from browsers, and nothing here depends on cookies. Preflights are answered
for the read methods and the two read-only POST lookups.
"""

from __future__ import annotations

from collections.abc import Awaitable

from aiohttp import hdrs, web
from multidict import CIMultiDict

from indexium_platform.web import PREFLIGHT, REQUEST_HOOK, RESPONSE_HOOK, ApiError

from .ratelimit import RateLimiter, Verdict
from .state import API, CLIENT
from .paths import V1

RATE = web.RequestKey("rate", Verdict)  # read again when the response is prepared
OPERATIONAL = frozenset({"/healthz", "/readyz", "/metrics"})  # probes and scrapes: never limited
AUTH_PREFIX = "/auth/"  # sign-in: its own, much smaller budget
PUBLIC_PREFIXES = (V1 + "/", "/openapi.json", "/v2/", "/updates/")  # /v2: the Modrinth-compatible surface
EXPOSED = "ETag, Retry-After, X-Cache, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset"
CORS = CIMultiDict({"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED})


def _public(path: str) -> bool:
    return path.startswith(PUBLIC_PREFIXES)


def _public_request(request: web.Request) -> bool:
    """Whether the request is for a public path. A route registered under a public prefix only
    ever matches paths under it, so its template answers without the request's path, which
    aiohttp percent-decodes on first use (every request would pay for that); the path itself
    decides only for the rest (the web site's pages, unmatched requests)."""
    resource = request.match_info.route.resource
    if resource is not None and resource.canonical.startswith(PUBLIC_PREFIXES):
        return True
    return request.path.startswith(PUBLIC_PREFIXES)


def _budget(api, path: str, resource) -> tuple[RateLimiter | None, str]:
    """The limiter a request counts against, and its name for the metric: /auth/*'s, the web
    site's (its routes, added by core/site.add_page: pages, static files, the dashboard), or the API's."""
    if path.startswith(AUTH_PREFIX):
        return api.auth_limiter, "auth"
    if resource in api.site_pages:
        return api.site_limiter, "site"
    return api.limiter, "rate"


def admit(request: web.Request) -> Awaitable[None] | None:
    """Counts a request against its client's budget and notes the client for the in-flight cap
    (respond.uncached). Every route but the operational ones counts: the JSON routes against the
    API's budget, the web site's pages and static files against the site's, /auth/* against its
    own smaller one. Past the budget: a 429 after
    a pause (the returned awaitable raises it; ratelimit.Tarpit), or at once when too many are
    held. Called by the platform's edge before the handler (REQUEST_HOOK): no middleware layer."""
    resource = request.match_info.route.resource
    path = resource.canonical if resource is not None else request.path
    if path in OPERATIONAL:
        return
    api = request.app[API]
    # The peer address is used here and only here: never logged, never a label.
    key = api.keys.key(request.remote, request.headers.get(hdrs.X_FORWARDED_FOR))
    if key is None:  # a trusted proxy forwarding no client
        return
    request[CLIENT] = key
    limiter, reason = _budget(api, path, resource)
    if limiter is None:
        return
    verdict = limiter.hit(key)
    request[RATE] = verdict
    if not verdict.allowed:
        api.metrics.rate_limited.labels(reason).inc()
        refusal = ApiError(429, "rate_limited",
                           f"More than {verdict.limit} requests a minute (or {limiter.burst} at once); "
                           f"retry in {verdict.reset_s} s.",
                           headers={"Retry-After": str(verdict.reset_s)})
        tarpit = api.tarpit
        if tarpit is not None and tarpit.hold(key):
            return tarpit.answer_later(key, refusal)  # answered after a pause (ratelimit.Tarpit)
        refusal.close_connection = True  # too many held: at once, and this connection ends
        raise refusal
    return None


def preflight(request: web.Request, refused: web.HTTPMethodNotAllowed) -> web.Response | None:
    """CORS preflight for any public route: an OPTIONS the router has no handler for (405)
    is answered with the methods the route allows; an unknown path stays a 404."""
    if not _public(request.path):
        return None
    methods = sorted({*refused.allowed_methods, "OPTIONS"})
    return web.Response(status=204, headers={
        "Access-Control-Allow-Methods": ", ".join(methods),
        "Access-Control-Allow-Headers": "Content-Type, If-None-Match",
        "Access-Control-Max-Age": "86400",
    })


def decorate(request: web.Request, response: web.StreamResponse) -> None:
    """CORS, and no-store on errors, for every public response (the rate limit is off)."""
    if not _public_request(request):
        return
    headers = response.headers
    headers.update(CORS)
    if response.status >= 400 and "Cache-Control" not in headers:
        headers["Cache-Control"] = "no-store"


def decorate_limited(request: web.Request, response: web.StreamResponse) -> None:
    """:func:`decorate`, and the X-RateLimit-* headers of a request that was counted."""
    decorate(request, response)
    verdict = request.get(RATE)
    if verdict is not None:
        headers = response.headers
        headers["X-RateLimit-Limit"] = str(verdict.limit)
        headers["X-RateLimit-Remaining"] = str(verdict.remaining)
        headers["X-RateLimit-Reset"] = str(verdict.reset_s)


def setup(app: web.Application) -> None:
    app[PREFLIGHT] = preflight  # answered by the platform's edge: no middleware of our own
    api = app[API]
    limited = api.limiter is not None or api.auth_limiter is not None or api.site_limiter is not None
    if limited:  # not even a call per request when the limit is off (a miss finds its client itself)
        app[REQUEST_HOOK] = admit
    # By the platform's edge: no signal per response; without a limit, no look-up
    # of a verdict that is never there (a missing request key costs a raised KeyError).
    app[RESPONSE_HOOK] = decorate_limited if limited else decorate
