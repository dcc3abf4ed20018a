"""The GitHub role's app factory: the App's event consumer, backfill and reconciliation loops,
plus /healthz, /readyz and /metrics (port 8085). ``python -m indexium_indexer.github``."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from aiohttp import web

from indexium_db.pool import create_pool, ping
from indexium_github import ClientMetrics, GitHubClient
from indexium_jar.http.remote import DownloadPolicy
from indexium_platform import natsutil
from indexium_platform.consumer import PullConsumer
from indexium_platform.jobs import JobLedger
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import add_readiness_check, base_app, serve

from .backfill import Backfiller
from .metrics import GithubMetrics
from .onboarding import Onboarding
from .probe import Prober
from .reconcile import Reconciler
from .settings import Settings
from .sync import Pacer, ReleaseSync
from .worker import CONSUMER, Worker

NAME = "github"
CLIENT = web.AppKey("github_client", GitHubClient)
BACKFILLER = web.AppKey("backfiller", Backfiller)
RECONCILER = web.AppKey("reconciler", Reconciler)
ONBOARDING = web.AppKey("onboarding", Onboarding)


def create_app(settings: Settings, *, client_options: dict | None = None) -> web.Application:
    """``client_options``: extra keyword arguments for the GitHub client (tests pass a clock)."""
    metrics = ServiceMetrics(NAME)
    gh_metrics = GithubMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(app: web.Application):
        pool = await create_pool(settings.database_url, max_size=max(4, settings.concurrency + 3))
        nc = await natsutil.connect(settings.nats_url, name=f"indexium-{NAME}")
        js = nc.jetstream()
        session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=settings.http_timeout_s))
        client = GitHubClient(session, settings.app_config(), metrics=ClientMetrics(metrics),
                              max_wait_s=settings.max_wait_s, mutation_interval_s=settings.mutation_interval_s,
                              user_agent="Indexium-GitHub-App", **(client_options or {}))
        policy = DownloadPolicy(allowed_hosts=frozenset(settings.download_hosts),
                                timeout=settings.http_timeout_s)
        wake = asyncio.Event()
        onboarding = Onboarding(pool, client, Prober(client, session, policy), gh_metrics, wake, js)
        sync = ReleaseSync(pool, client, js, Pacer(settings.backfill_rate),
                           on_sent=lambda source: gh_metrics.releases_sent.labels(source).inc())
        backfiller = Backfiller(pool, sync, settings, gh_metrics, wake)
        reconciler = Reconciler(pool, sync, client, settings, gh_metrics, onboarding)
        ledger = JobLedger(pool, js, CONSUMER, max_attempts=settings.max_attempts,
                           retry_base_s=settings.retry_base_s, outage_retry_s=settings.outage_retry_s)
        worker = Worker(onboarding, pool, ledger, gh_metrics)
        consumer = PullConsumer(js, CONSUMER, worker.handle, concurrency=settings.concurrency,
                                grace_s=settings.shutdown_grace_s)
        app[CLIENT], app[BACKFILLER], app[RECONCILER], app[ONBOARDING] = client, backfiller, reconciler, onboarding
        add_readiness_check(app, "postgres", lambda: ping(pool))
        add_readiness_check(app, "nats", natsutil.connected_check(nc))
        add_readiness_check(app, "consumer", consumer.ready_check())
        stop = asyncio.Event()
        await consumer.start()
        loops = [asyncio.create_task(backfiller.run(stop), name="github:backfill"),
                 asyncio.create_task(reconciler.run(stop), name="github:reconcile")]
        yield
        stop.set()
        await consumer.stop()  # finish or nak in-flight events
        done, pending = await asyncio.wait(loops, timeout=settings.shutdown_grace_s)
        for task in pending:
            task.cancel()  # a backfill's lease expires and another replica resumes it
        with contextlib.suppress(Exception):
            await asyncio.gather(*loops, return_exceptions=True)
        await session.close()
        await natsutil.close(nc)
        await pool.close()

    app.cleanup_ctx.append(resources)
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
