"""The indexer app factory: a durable pull consumer plus /healthz, /readyz and /metrics."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from indexium_db.pool import create_pool, ping
from indexium_jar.remote import DownloadPolicy
from indexium_platform import natsutil
from indexium_platform.consumer import PullConsumer
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import add_readiness_check, base_app, serve

from .job import ReleaseIndexer
from .metrics import IndexerMetrics
from .settings import Settings
from .worker import CONSUMER, Worker

NAME = "indexer"


def download_policy(settings: Settings) -> DownloadPolicy:
    return DownloadPolicy(
        allowed_hosts=frozenset(h.lower() for h in settings.download_hosts),
        timeout=settings.http_timeout_s,
    )


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    indexer_metrics = IndexerMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(app: web.Application):
        pool = await create_pool(settings.database_url, max_size=max(4, settings.concurrency // 2))
        nc = await natsutil.connect(settings.nats_url, name=f"indexium-{NAME}")
        js = nc.jetstream()
        session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=settings.http_timeout_s),
            headers={"User-Agent": "Indexium-Indexer"},
        )
        indexer = ReleaseIndexer(pool, session, download_policy(settings),
                                 publish_before_scan=settings.publish_before_scan)
        worker = Worker(indexer, pool, js, settings, indexer_metrics)
        consumer = PullConsumer(js, CONSUMER, worker.handle, concurrency=settings.concurrency,
                                grace_s=settings.shutdown_grace_s)
        add_readiness_check(app, "postgres", lambda: ping(pool))
        add_readiness_check(app, "nats", natsutil.connected_check(nc))
        add_readiness_check(app, "consumer", _bound(consumer))
        await consumer.start()
        yield
        await consumer.stop()  # finish or nak in-flight jobs, then close what they used
        await session.close()
        await natsutil.close(nc)
        await pool.close()

    app.cleanup_ctx.append(resources)
    return app


def _bound(consumer: PullConsumer):
    async def check() -> bool:
        return consumer.bound
    return check


def main() -> None:
    serve(NAME, Settings, create_app)
