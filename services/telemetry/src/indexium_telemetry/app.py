"""The telemetry app factory: one process, three roles (INDEXIUM_TELEMETRY_ROLES).

- ``http``: POST /api/v1/analytics/submit -> JetStream (plus the salt loop, and the catalogue:
  following the VERSIONS stream's events, re-read whole periodically as a safety net);
- ``writer``: TELEMETRY -> mod_telemetry_pings in batches;
- ``aggregator``: hourly partitions, retention and mod_daily_stats (one at a time cluster-wide).

Follow one ping: routes.submit -> contracts.telemetry.PING -> writer.PingWriter.write ->
queries.telemetry.insert_pings -> aggregator.Aggregator.run_once -> mod_daily_stats.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web

from indexium_contracts import telemetry
from indexium_platform import logs
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from . import routes
from .aggregator import Aggregator
from .buckets import bind_or_create
from .catalogue import ModCatalogue
from .follow import CatalogueFollower
from .jspub import JetStreamPublisher
from .loops import Periodic
from .metrics import TelemetryMetrics
from .newservers import ClientNetwork, NewServerCap
from .ratelimit import RateLimiter
from .salt import Clock, DailySalt
from .settings import Settings
from .writer import PingWriter

log = logs.get(__name__)
NAME = "telemetry"
SALT_MAINTENANCE_S = 30.0
AGGREGATOR = web.AppKey("aggregator", Aggregator)
WRITER = web.AppKey("writer", PingWriter)
# The http role holds ~30 tracked objects per ping in flight (its request, tasks, futures, the
# decoded ping): with CPython's default of 700 a young collection ran every ~16 pings at 64
# in flight. Above what a few hundred pings in flight hold (platform.web.collect_less).
YOUNG_GC_THRESHOLD = 10_000


def utc_now() -> datetime:
    return datetime.now(UTC)


def _flag(value):
    async def check() -> bool:
        return bool(value())
    return check


def create_app(settings: Settings, *, clock: Clock = utc_now) -> web.Application:
    metrics = ServiceMetrics(NAME)
    tmetrics = TelemetryMetrics(metrics)
    # auto_decompress off: body.py reads the body with the platform's one reader
    # (read_request_body: gzip inflated bounded while inflating, so a gzip bomb costs nothing, a
    # truncated stream told apart, the whole body within INDEXIUM_HTTP_BODY_TIMEOUT_SECONDS),
    # which aiohttp's own decoder cannot do.
    app = base_app(NAME, metrics, client_max_size=settings.max_body_bytes + 1,
                   handler_args={"auto_decompress": False})
    app[routes.SETTINGS] = settings
    app[routes.METRICS] = tmetrics
    app[routes.CATALOGUE] = catalogue = ModCatalogue()
    app[routes.NETWORK] = ClientNetwork(settings.trusted_proxies)
    app[routes.NEW_SERVERS] = NewServerCap(settings.new_servers_per_prefix_hour)
    if settings.has("http"):
        routes.setup(app)

    async def resources(res: Resources) -> None:
        pool = await res.postgres(settings.database_url, max_size=settings.db_pool_size)
        loops: list[Periodic] = []
        if settings.has("http") or settings.has("writer"):
            nc = await res.nats(settings.nats_url)
            js = nc.jetstream()
        if settings.has("http"):
            kv = settings.kv_replicas
            salt = DailySalt(await bind_or_create(js, telemetry.SALTS, replicas=kv), clock,
                             timeout_s=settings.publish_timeout_s)
            publisher = JetStreamPublisher(nc, settings.publish_timeout_s)
            await publisher.start()
            app[routes.JS], app[routes.PUBLISHER], app[routes.SALT] = js, publisher, salt
            # The rate-limit bucket's own requests (a key already there) time out on their own
            # after the publish timeout too.
            limit_js = nc.jetstream(timeout=settings.publish_timeout_s)
            app[routes.LIMITER] = RateLimiter(
                await bind_or_create(limit_js, telemetry.RATE_LIMIT, replicas=kv), telemetry.RATE_LIMIT.name,
                settings.rate_limit_s, publisher=publisher, timeout_s=settings.publish_timeout_s)

            async def reload_catalogue() -> None:
                tmetrics.catalogue_mods.set(await catalogue.reload(pool))

            # Follow the catalogue's events from before the first load (none falls in between):
            # a mod is known as soon as it is searchable. The periodic re-read is the safety net.
            follower = CatalogueFollower(nc, pool, catalogue, reload_catalogue, tmetrics)
            await follower.start()
            res.on_close(follower.stop)
            # Load once before serving so the first pings are counted.
            first_load_ok = True
            try:
                await reload_catalogue()
            except Exception as exc:
                first_load_ok = False
                log.warning("catalogue_load_failed", error=str(exc) or type(exc).__name__)
            loops.append(Periodic("catalogue", reload_catalogue, settings.catalogue_refresh_s, 2.0,
                                  wait_first=settings.catalogue_refresh_s if first_load_ok else 0))
            loops.append(Periodic("salt", salt.maintain, SALT_MAINTENANCE_S))
            res.ready("catalogue", _flag(lambda: catalogue.loaded))
        if settings.has("writer"):
            writer = PingWriter(js, pool, tmetrics, batch=settings.writer_batch,
                                wait_s=settings.writer_wait_s)
            app[WRITER] = writer
            res.ready("writer", _flag(lambda: writer.bound))
            await writer.start()
            res.on_close(writer.stop)
        if settings.has("aggregator"):
            aggregator = Aggregator(pool, tmetrics, clock, retention_days=settings.retention_days,
                                    ahead_days=settings.partitions_ahead_days,
                                    qualifying_span_s=settings.qualifying_span_s)
            app[AGGREGATOR] = aggregator
            loops.append(Periodic("aggregator", aggregator.run_once, settings.aggregate_every_s, 60.0))
        for loop in loops:
            loop.start()
            res.on_close(loop.stop, settings.shutdown_grace_s)

    app.cleanup_ctx.append(cleanup_ctx(resources))
    return app


def main() -> None:
    serve(NAME, Settings, create_app, young_gc_threshold=YOUNG_GC_THRESHOLD)
