"""The scan stage's app factory: the ``VERSIONS/scan`` pull consumer plus /healthz, /readyz, /metrics."""

from __future__ import annotations

import asyncio
import contextlib
from concurrent.futures import ThreadPoolExecutor

from aiohttp import web

from indexium_jar.http.policy import DownloadPolicy
from indexium_platform.consumer import PullConsumer
from indexium_platform.jobs import JobLedger
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from .archive import ScanLimits
from .job import VersionScanner
from .metrics import ScanMetrics
from .pipeline import ScanContext
from .settings import Settings
from .worker import CONSUMER, Worker

NAME = "scan"
GAUGE_REFRESH_S = 30.0


def limits(settings: Settings) -> ScanLimits:
    return ScanLimits(max_class_bytes=settings.max_class_bytes, max_nesting=settings.max_nesting,
                      max_inflated=settings.max_inflated_bytes, threshold=settings.threshold,
                      inflate_threads=settings.inflate_threads)


@contextlib.contextmanager
def executors(settings: Settings):
    parse = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="scan-parse")
    hashing = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="scan-hash")
    try:
        yield parse, hashing
    finally:
        parse.shutdown(wait=True, cancel_futures=True)
        hashing.shutdown(wait=True, cancel_futures=True)


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    scan_metrics = ScanMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(res: Resources) -> None:
        pool = await res.postgres(settings.database_url, max_size=max(2, settings.concurrency + 1))
        js = (await res.nats(settings.nats_url)).jetstream()
        parse, hashing = res.enter(executors(settings))
        session = res.http(headers={"User-Agent": "Indexium-Scan"})
        policy = DownloadPolicy(allowed_hosts=frozenset(settings.download_hosts),
                                timeout=settings.http_timeout_s)
        ctx = ScanContext(session=session, policy=policy, parse_executor=parse,
                          hash_executor=hashing, limits=limits(settings), max_bytes=settings.max_bytes)
        ledger = JobLedger(pool, js, CONSUMER, max_attempts=settings.max_attempts,
                           retry_base_s=settings.retry_base_s, outage_retry_s=settings.outage_retry_s)
        worker = Worker(VersionScanner(pool, ctx, scan_metrics), ledger, js, scan_metrics)
        consumer = PullConsumer(js, CONSUMER, worker.handle, concurrency=settings.concurrency,
                                grace_s=settings.shutdown_grace_s)
        gauge = asyncio.create_task(_refresh_quarantine_gauge(pool, scan_metrics))
        await res.consumer(consumer)
        res.on_close(_cancel, gauge)

    app.cleanup_ctx.append(cleanup_ctx(resources))
    return app


async def _cancel(task: asyncio.Task) -> None:
    task.cancel()


async def _refresh_quarantine_gauge(pool, metrics: ScanMetrics, every_s: float = GAUGE_REFRESH_S) -> None:
    """Operators release versions from another process: re-read the quarantine size now and then."""
    while True:
        with contextlib.suppress(Exception):  # only a gauge
            await metrics.refresh_quarantined(pool)
        await asyncio.sleep(every_s)


def main() -> None:
    serve(NAME, Settings, create_app)
