"""The notify role's app factory: the ``VERSIONS/notify`` pull consumer (matching), the outbox
sender (delivering), plus /healthz, /readyz, /metrics. ``python -m indexium_indexer.notify``."""

from __future__ import annotations

from aiohttp import web

from indexium_platform.consumer import PullConsumer
from indexium_platform.jobs import JobLedger
from indexium_platform.lifecycle import Resources, cleanup_ctx
from indexium_platform.metrics import ServiceMetrics
from indexium_platform.web import base_app, serve

from .clock import Clock
from .metrics import NotifyMetrics
from .sender import Sender, session
from .settings import Settings
from .worker import CONSUMER, Worker

NAME = "notify"
MATCH_CONCURRENCY = 4  # version events matched at once: each is one short transaction


def create_app(settings: Settings) -> web.Application:
    metrics = ServiceMetrics(NAME)
    notify_metrics = NotifyMetrics(metrics)
    app = base_app(NAME, metrics)

    async def resources(res: Resources) -> None:
        pool = await res.postgres(settings.database_url,
                                  max_size=max(4, settings.concurrency // 2 + MATCH_CONCURRENCY))
        js = (await res.nats(settings.nats_url)).jetstream()
        clock = Clock(settings.clock_speed)
        policy = settings.policy()
        http = session(policy, settings)
        res.on_close(http.close)
        sender = Sender(pool, http, policy, clock, settings, notify_metrics)
        await sender.start()
        res.on_close(sender.stop)
        res.ready("sender", sender.ready_check())
        ledger = JobLedger(pool, js, CONSUMER, max_attempts=settings.max_attempts,
                           retry_base_s=settings.job_retry_base_s, outage_retry_s=settings.outage_retry_s)
        worker = Worker(pool, ledger, clock, give_up_s=settings.give_up_s, metrics=notify_metrics,
                        wake=sender.wake)
        await res.consumer(PullConsumer(js, CONSUMER, worker.handle, concurrency=MATCH_CONCURRENCY,
                                        grace_s=settings.shutdown_grace_s))

    app.cleanup_ctx.append(cleanup_ctx(resources))
    return app


def main() -> None:
    serve(NAME, Settings, create_app)
