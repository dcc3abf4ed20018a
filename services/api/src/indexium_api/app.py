"""The API app factory: public JSON for launchers and the web UI, read from PostgreSQL."""

from __future__ import annotations

from aiohttp import web

from indexium_db.pool import create_pool, ping
from indexium_platform import natsutil
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import add_readiness_check, base_app, serve

from . import routes
from .settings import Settings

NAME = "api"


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    app = base_app(NAME, metrics)
    app[routes.SETTINGS] = settings

    async def resources(app: web.Application):
        pool = await create_pool(settings.read_url, max_size=20)
        app[routes.READ_POOL] = pool
        nc = await natsutil.connect(settings.nats_url, name=f"indexium-{NAME}")
        add_readiness_check(app, "postgres", lambda: ping(pool))
        add_readiness_check(app, "nats", natsutil.connected_check(nc))
        yield
        await natsutil.close(nc)
        await pool.close()

    app.cleanup_ctx.append(resources)
    routes.setup(app)
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
