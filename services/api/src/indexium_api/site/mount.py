"""The web site on the API's app (``setup``): its write pool and HTTP session, its pages'
routes, and its error pages (``error_page``, the edge's ERROR_PAGE hook).

Public pages (home/search, ``/mods/{slug}``) go through the API's cache with the same tags
as the JSON (pages.py); sign-in with GitHub (oauth.py) keeps server-side sessions
(core/sessions.py); signed-in users get a dashboard (dashboard.py) with their webhook subscriptions and API
tokens (subscriptions.py), and operators the review
queue (review.py). docs/web.md describes the pages, the sessions and the settings.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from importlib import resources

import asyncpg

from aiohttp import web

from indexium_db.pool import create_pool
from indexium_platform import logs
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.web import ERROR_PAGE, ApiError

from ..core.state import API
from . import cspreport, dashboard, oauth, pages, players, render, review, subscriptions
from ..core import sessions
from ..core.site import SITE, Site, add_static

log = logs.get(__name__)
STATIC_PREFIX = "/static/site"
# Paths that are the JSON API's, never the site's: their errors stay the JSON envelope.
_NOT_SITE = ("/api/", "/v2/", "/v2", "/openapi.json", "/healthz", "/readyz", "/metrics", "/webhooks/")
_TITLES = {400: "That request did not make sense", 403: "Not allowed", 404: "Page not found",
           405: "Not allowed", 429: "Too many requests", 503: "Briefly unavailable"}


def _is_site(request: web.Request) -> bool:
    path = request.path
    if path.startswith(_NOT_SITE):
        return False
    resource = request.match_info.route.resource
    if resource is not None:
        return resource in request.app[API].site_pages  # added by core/site.add_page
    # Unknown paths: an HTML page for browsers, the JSON envelope for everything else.
    return "text/html" in request.headers.get("Accept", "")


# Error pages that show the visitor's signed-in header like every other page (docs/web.md); a
# 429 or 503 does not read the session: the read is what is refused or unavailable then.
_WITH_HEADER = (403, 404)


async def _signed_in_error(request: web.Request, status: int, text: str) -> web.Response:
    """The error page with the visitor's own header, the session read first (a request the
    router refused never reached a handler that would have read it)."""
    try:
        await sessions.current(request)
    except (ApiError, OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError):
        pass  # (too many in flight, the database away: the signed-out header, the error page still)
    return render.error_page(request, status, _TITLES.get(status, "Something went wrong"), text)


def error_page(request: web.Request, exc: Exception) -> web.StreamResponse | Awaitable[web.Response] | None:
    """Errors on the site's pages are pages, not the API's JSON envelope (never a bare 500):
    the platform's edge offers it every exception (ERROR_PAGE); None leaves the
    exception to the edge (redirects, every error of a non-site path, unexpected errors)."""
    if not _is_site(request):
        return None
    if isinstance(exc, ApiError):
        response = render.error_page(request, exc.status, _TITLES.get(exc.status, "Something went wrong"),
                                     exc.description)
        for k, v in (exc.headers or {}).items():
            response.headers[k] = v
        if exc.close_connection:
            response.force_close()
        return response
    if isinstance(exc, web.HTTPException):
        if exc.status < 400:
            return None
        text = {404: "There is nothing at this address. It may have moved, or the link may be wrong.",
                405: "This page cannot be used that way."}.get(exc.status, exc.reason)
        if exc.status in _WITH_HEADER and sessions.COOKIE in request.cookies and sessions.known(request) is None:
            return _signed_in_error(request, exc.status, text)
        return render.error_page(request, exc.status, _TITLES.get(exc.status, "Something went wrong"), text)
    if isinstance(exc, (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError)):
        log.warning("site_database_unavailable", error=type(exc).__name__)
        return render.error_page(request, 503, _TITLES[503], "Indexium cannot reach its database right now. "
                                 "Please retry in a moment.")
    return None


async def _cancel(task: asyncio.Task) -> None:
    task.cancel()


def setup(app: web.Application) -> None:
    settings = app[API].settings
    site = Site.create(settings)
    site.globals = {"public_url": settings.public_url.rstrip("/"), "github_url": settings.github_url.rstrip("/"),
                    "user": None, "is_admin": False, "csrf_token": "", "sign_in_configured": settings.sign_in_configured,
                    "csp_nonce": ""}  # (render.page sets it: pages for everyone have none)
    app[SITE] = site
    render.setup(app)

    async def open_resources(res: Resources) -> None:
        # min_size 0: the site (and the API beside it) starts without PostgreSQL; and no readiness
        # check (as Resources.postgres would add): the API is ready without PostgreSQL.
        site.pool = await create_pool(settings.database_url, min_size=0, max_size=4,
                                      connect_timeout=settings.db_connect_timeout_s,
                                      command_timeout=settings.db_statement_timeout_s + 1,
                                      server_settings={"application_name": "indexium-site"})
        res.on_close(site.pool.close)
        site.http = res.http()
        purging = asyncio.create_task(oauth.purge_loop(site, oauth.PURGE_EVERY_S))
        res.on_close(_cancel, purging)

    app.cleanup_ctx.append(cleanup_ctx(open_resources))
    pages.setup(app)
    players.setup(app)
    oauth.setup(app)
    dashboard.setup(app)
    review.setup(app)
    subscriptions.setup(app)
    cspreport.setup(app)
    static = resources.files("indexium_api.site") / "static"
    add_static(app, STATIC_PREFIX, str(static), name="site-static")
    app[ERROR_PAGE] = error_page  # answered by the platform's edge: no middleware of our own
