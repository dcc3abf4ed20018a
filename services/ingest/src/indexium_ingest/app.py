"""The ingest app factory: webhooks in, JetStream out. Needs NATS only (no PostgreSQL)."""

from __future__ import annotations

from aiohttp import web

from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from . import redeliver, routes
from .deliveries import DeliveryLog
from .metrics import IngestMetrics
from .settings import Settings

NAME = "ingest"


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    # The body limit is enforced by the handler (413 with our envelope), so let aiohttp read more.
    app = base_app(NAME, metrics, client_max_size=settings.max_body_bytes + 1)
    app[routes.SETTINGS] = settings
    app[routes.METRICS] = IngestMetrics(metrics)

    async def nats_ctx(res: Resources) -> None:
        app[routes.JS] = (await res.nats(settings.nats_url)).jetstream()
        app[routes.DELIVERIES] = DeliveryLog(app[routes.JS])

    app.cleanup_ctx.append(cleanup_ctx(nats_ctx))
    if settings.github_app() is not None:  # failed-delivery reconciler: needs the App's JWT
        app.cleanup_ctx.append(redeliver.cleanup_ctx(settings, metrics))
    routes.setup(app)
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
