"""The indexer app factory: a durable pull consumer plus /healthz, /readyz and /metrics."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from indexium_contracts import ingest
from indexium_db.queries import versions as versions_q
from indexium_jar.gameversions import VersionTable, default_table, table_from
from indexium_jar.http.remote import DownloadPolicy
from indexium_platform import logs
from indexium_platform.consumer import PullConsumer
from indexium_platform.jobs import JobLedger
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from .job import ReleaseIndexer
from .metrics import IndexerMetrics
from .settings import Settings
from .worker import CONSUMER, Worker

NAME = "indexer"
log = logs.get(__name__)


async def load_version_table(pool) -> VersionTable:
    """The Minecraft version table stored by ``indexium_ops minecraft-versions refresh``, or
    the snapshot shipped with indexium_jar when none is stored or it cannot be used.
    Read once at start: restart the indexer after a refresh."""
    try:
        async with pool.acquire() as conn:
            rows = await versions_q.minecraft_versions(conn)
        if rows:
            table = table_from([
                {"id": r["id"], "type": r["type"], "releaseTime": r["release_time"].isoformat(),
                 **({"releaseTarget": r["release_target"]} if r["release_target"] else {})}
                for r in rows
            ])
            log.info("minecraft_versions_loaded", source="database", versions=len(table.versions))
            return table
    except Exception as exc:  # a missing table (migration not applied yet) or bad rows
        log.warning("minecraft_versions_unavailable", error=str(exc) or type(exc).__name__)
    table = default_table()
    log.info("minecraft_versions_loaded", source="snapshot", versions=len(table.versions))
    return table


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    indexer_metrics = IndexerMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(res: Resources) -> None:
        # reset_session=False: the release job, its ledger and the version table keep no
        # session state (only statements and transactions), so the pool's reset query would
        # be one more round trip per job for nothing (indexium_db.pool.create_pool).
        pool = await res.postgres(settings.database_url, max_size=max(4, settings.concurrency // 2),
                                  reset_session=False)
        js = (await res.nats(settings.nats_url)).jetstream()
        session = res.http(timeout=aiohttp.ClientTimeout(total=settings.http_timeout_s),
                           headers={"User-Agent": "Indexium-Indexer"})
        policy = DownloadPolicy(allowed_hosts=frozenset(settings.download_hosts),
                                timeout=settings.http_timeout_s)
        indexer = ReleaseIndexer(pool, session, policy,
                                 publish_before_scan=settings.publish_before_scan,
                                 table=await load_version_table(pool))
        ledger = JobLedger(pool, js, CONSUMER, max_attempts=settings.max_retries + 1,
                           retry_base_s=settings.retry_base_s, outage_retry_s=settings.outage_retry_s,
                           about=ingest.about_message)
        worker = Worker(indexer, ledger, js, indexer_metrics)
        await res.consumer(PullConsumer(js, CONSUMER, worker.handle, concurrency=settings.concurrency,
                                        grace_s=settings.shutdown_grace_s))

    app.cleanup_ctx.append(cleanup_ctx(resources))
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
