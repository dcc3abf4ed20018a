"""One shape for what a service opens at start and closes at shutdown.

Every service's app factory opens the same kinds of thing — a PostgreSQL pool, a NATS
connection, an HTTP client session, a durable pull consumer — registers a readiness check
for each, and closes them in the reverse order. ``cleanup_ctx(open_)`` is that shape as an
aiohttp cleanup context: ``open_`` receives a :class:`Resources` and opens what the service
needs through it; at shutdown (or when ``open_`` fails half-way) everything opened is closed
last-opened first. Each service keeps its own contexts; only this shape is shared.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import aiohttp
import asyncpg
from aiohttp import web
from nats.aio.client import Client

from indexium_db.pool import create_pool, ping

from . import natsutil
from .consumer import PullConsumer
from .web import SERVICE, ReadinessCheck, add_readiness_check

T = TypeVar("T")


class Resources:
    def __init__(self, app: web.Application, stack: contextlib.AsyncExitStack):
        self.app, self._stack = app, stack
        self._consumers = 0

    async def postgres(self, dsn: str, **pool_options: Any) -> asyncpg.Pool:
        # Each backend named after its role in pg_stat_activity, as the NATS connection is: which
        # role holds PostgreSQL's processes (and their memory) is then one query away.
        server_settings = {"application_name": f"indexium-{self.app[SERVICE]}",
                           **(pool_options.pop("server_settings", None) or {})}
        pool = await create_pool(dsn, server_settings=server_settings, **pool_options)
        self._stack.push_async_callback(pool.close)
        self.ready("postgres", lambda: ping(pool))
        return pool

    async def nats(self, url: str) -> Client:
        nc = await natsutil.connect(url, name=f"indexium-{self.app[SERVICE]}")
        self._stack.push_async_callback(natsutil.close, nc)
        self.ready("nats", natsutil.connected_check(nc))
        return nc

    def http(self, **session_options: Any) -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(**session_options)
        self._stack.push_async_callback(session.close)
        return session

    async def consumer(self, consumer: PullConsumer) -> PullConsumer:
        """Start it; at shutdown it finishes or naks in-flight jobs before what they use closes.
        Its readiness check is ``consumer``; a process's second one is ``consumer:<durable>``."""
        self.ready("consumer" if not self._consumers else f"consumer:{consumer.durable}", consumer.ready_check())
        self._consumers += 1
        await consumer.start()
        self._stack.push_async_callback(consumer.stop)
        return consumer

    def enter(self, cm: contextlib.AbstractContextManager[T]) -> T:
        return self._stack.enter_context(cm)

    def on_close(self, callback: Callable[..., Awaitable[Any]], *args: Any) -> None:
        """Run ``await callback(*args)`` at shutdown, before whatever was opened until now closes."""
        self._stack.push_async_callback(callback, *args)

    def ready(self, name: str, check: ReadinessCheck) -> None:
        add_readiness_check(self.app, name, check)


def cleanup_ctx(open_: Callable[[Resources], Awaitable[None]]):
    """An aiohttp cleanup context: ``app.cleanup_ctx.append(cleanup_ctx(open_))``."""

    async def ctx(app: web.Application) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            await open_(Resources(app, stack))
            yield

    return ctx
