"""The telemetry app factory. Its tables exist (migration 0001); the ping pipeline comes next."""

from __future__ import annotations

from aiohttp import web

from indexium_db.pool import create_pool, ping
from indexium_platform import natsutil
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import add_readiness_check, base_app, serve

from .settings import Settings

NAME = "telemetry"


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    app = base_app(NAME, metrics)

    async def resources(app: web.Application):
        pool = await create_pool(settings.database_url, max_size=10)
        nc = await natsutil.connect(settings.nats_url, name=f"indexium-{NAME}")
        add_readiness_check(app, "postgres", lambda: ping(pool))
        add_readiness_check(app, "nats", natsutil.connected_check(nc))
        yield
        await natsutil.close(nc)
        await pool.close()

    app.cleanup_ctx.append(resources)
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
