"""The API app factory: public JSON for launchers and the web UI, read from PostgreSQL.

Request path: the platform edge around every route (metrics, canonical log line, error envelope) -> rate limit
-> handler -> per-replica cache (invalidated over NATS) -> read database. The process is
ready without PostgreSQL or NATS: it serves what it has cached and answers 503 otherwise,
so a database outage never takes every replica out of the load balancer at once.
"""

from __future__ import annotations

from aiohttp import web

from indexium_platform import heap, snapshotfetch
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from . import prefetch, v2
from .core import db, edge, respond
from .core.cache import Cache
from .core.inflight import InFlight
from .core.invalidation import Invalidator
from .core.metrics import ApiMetrics
from .core.ratelimit import ClientKeys, RateLimiter, Tarpit
from .core.search_index import LiveIndex
from .settings import Settings
from .core.state import API, Api
from .feeds import routes as feeds
from .openapi import document as openapi
from .site import mount as site
from .v1 import analytics, files, players, routes, subscriptions

NAME = "api"
# A request over its client's rate limit is answered 429 after this pause (ratelimit.Tarpit): a
# flood that sends its next request when its last was answered gets one a second a connection.
# At most 512 refusals of one client and 4,096 in all are held (~40 KB each with its connection:
# a flood of 400 connections, all held, took the bench's API from 184 to 201 MB): ~160 MB at most;
# past that the 429 goes at once and closes the connection.
REFUSAL_PAUSE_S, REFUSALS_HELD_PER_CLIENT, REFUSALS_HELD = 1.0, 512, 4096


def create_app(settings: Settings) -> web.Application:
    base_metrics = ServiceMetrics(NAME)
    app = base_app(NAME, base_metrics)
    metrics = ApiMetrics(base_metrics)
    cache = Cache(max_bytes=settings.cache_max_mb * 1024 * 1024, stale_s=settings.cache_stale_s,
                  stale_if_error_s=settings.cache_stale_if_error_s, sizeof=respond.sizeof)
    metrics.cache_entries.set_function(lambda: len(cache))
    metrics.cache_bytes.set_function(lambda: cache.bytes)
    per_minute = settings.rate_limit_per_minute
    # (0 there turns every budget off, the site's and /auth/*'s too: "no rate limit", as it always meant.)
    auth, pages = ((settings.rate_limit_auth_per_minute, settings.rate_limit_site_per_minute) if per_minute
                   else (0, 0))
    api = Api(settings=settings, cache=cache, metrics=metrics, keys=ClientKeys(settings.trusted_proxies),
              # (A burst is never more than a minute's worth: the limit says what a minute allows.)
              limiter=RateLimiter(per_minute, min(settings.rate_limit_burst, per_minute)) if per_minute else None,
              auth_limiter=RateLimiter(auth, max(1, auth // 2)) if auth else None,
              site_limiter=RateLimiter(pages, max(1, pages // 5)) if pages else None,
              in_flight=InFlight(settings.client_max_in_flight, settings.client_wait_s)
              if settings.client_max_in_flight else None,
              tarpit=Tarpit(REFUSAL_PAUSE_S, per_client=REFUSALS_HELD_PER_CLIENT, total=REFUSALS_HELD))
    app[API] = api

    async def database(res: Resources) -> None:
        pool = await db.create_pool(settings)  # read-only, and the API starts without it (db.py)
        res.on_close(pool.close)
        api.db = db.ReadDatabase(pool, settings, on_state=lambda up: metrics.db_up.set(1 if up else 0),
                                 on_busy=metrics.db_pool_busy.inc)
        if settings.search_index:
            index_pool = await db.create_pool(settings, size=db.INDEX_POOL_SIZE, application_name="indexium-api-index")
            res.on_close(index_pool.close)
            api.index_db = db.ReadDatabase(index_pool, settings)

    async def search_index(res: Resources) -> None:
        # Before serving: the first searches come from the index, not a cold SQL path.
        live = LiveIndex(api, refresh_s=settings.search_index_refresh_s,
                         load_timeout_s=settings.search_index_load_timeout_s,
                         catch_up_s=settings.search_index_catch_up_s,
                         recheck=settings.search_index_recheck, snapshot=_snapshot_fetcher(settings))
        api.search_index = live
        await live.start()
        res.on_close(live.stop)

    # The process's one NATS connection, on the app state (Api.bus): the site publishes through it.
    api.bus = invalidator = Invalidator(api, settings.nats_url)

    async def invalidation(res: Resources) -> None:
        if api.search_index is not None:
            api.search_index.following = invalidator.following
        await invalidator.start()
        res.on_close(invalidator.stop)

    app.cleanup_ctx.append(cleanup_ctx(database))
    if settings.search_index:
        app.cleanup_ctx.append(cleanup_ctx(search_index))
    app.cleanup_ctx.append(cleanup_ctx(invalidation))
    routes.setup(app)
    files.setup(app)
    players.setup(app)  # resolve, pack export, upgrade check (docs/players.md)
    v2.setup(app)
    analytics.setup(app)  # analytics and badge routes (telemetry's counts)
    subscriptions.setup(app)  # a signed-in user's webhook subscriptions and API tokens
    feeds.setup(app)  # Atom feeds of new versions (feeds.py)
    openapi.setup(app, settings)
    site.setup(app)  # the web site's pages at / (site/, docs/web.md)
    edge.setup(app)
    return app


def _snapshot_fetcher(settings: Settings):
    """The search snapshot's fetch on this node (indexium_platform.snapshotfetch), or None: off, or no NATS."""
    if not settings.search_snapshot or not settings.nats_url:
        return None
    directory = prefetch.directory(settings.search_snapshot_dir)
    return lambda: snapshotfetch.fetch(settings.nats_url, directory)


def main() -> None:
    heap.enable()  # the search index: the collector paused while it loads, then frozen (heap.py)
    serve(NAME, Settings, create_app)
