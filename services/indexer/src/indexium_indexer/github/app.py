"""The GitHub role's app factory: the App's event consumer, the release watch's consumer,
backfill, reconciliation and re-read loops, plus /healthz, /readyz and /metrics (port 8085).
``python -m indexium_indexer.github``."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from aiohttp import web

from indexium_contracts import ingest
from indexium_github import ClientMetrics, GitHubClient
from indexium_jar.http.remote import DownloadPolicy
from indexium_platform.consumer import PullConsumer
from indexium_platform.jobs import JobLedger
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from .backfill import Backfiller
from .metrics import GithubMetrics
from .onboarding import Onboarding
from .probe import Prober
from .reconcile import Reconciler
from .reread import Rereader
from .settings import Settings
from .sync import Pacer, ReleaseSync
from .watch import CONSUMER as RELEASES_CONSUMER, ReleaseWatch
from .worker import CONSUMER, Worker

NAME = "github"
CLIENT = web.AppKey("github_client", GitHubClient)
BACKFILLER = web.AppKey("backfiller", Backfiller)
RECONCILER = web.AppKey("reconciler", Reconciler)
REREADER = web.AppKey("rereader", Rereader)
ONBOARDING = web.AppKey("onboarding", Onboarding)


def create_app(settings: Settings, *, client_options: dict | None = None) -> web.Application:
    """``client_options``: extra keyword arguments for the GitHub client (tests pass a clock)."""
    metrics = ServiceMetrics(NAME)
    gh_metrics = GithubMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(res: Resources) -> None:
        pool = await res.postgres(settings.database_url, max_size=max(4, settings.concurrency + 3))
        js = (await res.nats(settings.nats_url)).jetstream()
        session = res.http(timeout=aiohttp.ClientTimeout(total=settings.http_timeout_s))
        client = GitHubClient(session, settings.app_config(), metrics=ClientMetrics(metrics),
                              max_wait_s=settings.max_wait_s, mutation_interval_s=settings.mutation_interval_s,
                              user_agent="Indexium-GitHub-App", **(client_options or {}))
        policy = DownloadPolicy(allowed_hosts=frozenset(settings.download_hosts),
                                timeout=settings.http_timeout_s)
        wake = asyncio.Event()
        onboarding = Onboarding(pool, client, Prober(client, session, policy), gh_metrics, wake, js)
        sync = ReleaseSync(pool, client, js, Pacer(settings.backfill_rate),
                           on_sent=lambda source: gh_metrics.releases_sent.labels(source).inc())
        backfiller = Backfiller(pool, sync, settings, gh_metrics, wake, onboarding.readmes)
        reconciler = Reconciler(pool, sync, client, settings, gh_metrics, onboarding)
        ledger = JobLedger(pool, js, CONSUMER, max_attempts=settings.max_attempts,
                           retry_base_s=settings.retry_base_s, outage_retry_s=settings.outage_retry_s,
                           about=ingest.about_message)
        worker = Worker(onboarding, pool, ledger, gh_metrics)
        rereader = Rereader(pool, client, sync, settings, gh_metrics)
        watch = ReleaseWatch(pool, settings.reread_schedule_s, gh_metrics, outage_retry_s=settings.outage_retry_s,
                             on_scheduled=rereader.wake.set)
        app[CLIENT], app[BACKFILLER], app[RECONCILER], app[ONBOARDING] = client, backfiller, reconciler, onboarding
        app[REREADER] = rereader
        stop, loops = asyncio.Event(), []
        # At shutdown: the loops are told to stop, in-flight events finish or are nak'ed, then
        # the loops get the grace period to finish.
        res.on_close(_finish, loops, settings.shutdown_grace_s)
        await res.consumer(PullConsumer(js, CONSUMER, worker.handle, concurrency=settings.concurrency,
                                        grace_s=settings.shutdown_grace_s))
        # Releases published before their jars: watched on their own consumer, re-read by a loop.
        await res.consumer(PullConsumer(js, RELEASES_CONSUMER, watch.handle, concurrency=settings.concurrency,
                                        grace_s=settings.shutdown_grace_s))
        loops += [asyncio.create_task(backfiller.run(stop), name="github:backfill"),
                  asyncio.create_task(reconciler.run(stop), name="github:reconcile"),
                  asyncio.create_task(rereader.run(stop), name="github:reread")]
        res.on_close(_set, stop)

    app.cleanup_ctx.append(cleanup_ctx(resources))
    return app


async def _set(event: asyncio.Event) -> None:
    event.set()


async def _finish(loops: list[asyncio.Task], grace_s: float) -> None:
    if not loops:
        return
    done, pending = await asyncio.wait(loops, timeout=grace_s)
    for task in pending:
        task.cancel()  # a backfill's lease expires and another replica resumes it
    with contextlib.suppress(Exception):
        await asyncio.gather(*loops, return_exceptions=True)


def main() -> None:
    serve(NAME, Settings, create_app)
