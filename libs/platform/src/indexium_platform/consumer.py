"""A durable pull-consumer loop shared by every JetStream worker.

The handler owns the message's fate (ack after commit, nak with delay, or term
after dead-lettering); this loop only fetches, bounds concurrency, heartbeats
long work with ``in_progress()``, and drains on shutdown: stop fetching, let
in-flight handlers finish within the grace period, nak whatever is left so
another replica gets it at once instead of after ``ack_wait``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import nats.errors
import structlog
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts.streams import ConsumerSpec

from . import logs

log = logs.get(__name__)
Handler = Callable[[Msg], Awaitable[None]]


@contextlib.asynccontextmanager
async def heartbeat(msg: Msg, every_s: float):
    """Tell JetStream we are still working, so long jobs are not redelivered mid-way."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(every_s)
            with contextlib.suppress(Exception):
                await msg.in_progress()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class PullConsumer:
    def __init__(
        self,
        js: JetStreamContext,
        spec: ConsumerSpec,
        handler: Handler,
        *,
        concurrency: int,
        grace_s: float,
        fetch_timeout_s: float = 1.0,
    ):
        self._js, self._spec, self._handler = js, spec, handler
        self._grace_s = grace_s
        self._fetch_timeout_s = fetch_timeout_s
        self._stopping = asyncio.Event()
        self._inflight: set[asyncio.Task] = set()
        self._slots = asyncio.Semaphore(concurrency)
        self._task: asyncio.Task | None = None
        self.bound = False

    @property
    def durable(self) -> str:
        return self._spec.durable

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=f"consumer:{self._spec.durable}")

    async def _subscribe(self):
        while not self._stopping.is_set():
            try:
                sub = await self._js.pull_subscribe_bind(self._spec.durable, self._spec.stream)
                self.bound = True
                return sub
            except Exception as exc:  # stream not set up yet, or NATS away: keep trying
                log.warning("consumer_bind_failed", consumer=self._spec.durable, error=str(exc))
                await asyncio.sleep(1.0)
        return None

    async def _run(self) -> None:
        sub = await self._subscribe()
        try:
            while sub is not None and not self._stopping.is_set():
                if not await self._take_slot():  # every handler busy: wait for one, or for stop
                    break
                self._slots.release()
                try:
                    # One at a time: nats-py's fetch of a batch waits for the batch to fill once a
                    # message came through an earlier pull request of ours (one its client gave
                    # up on a moment before the server expired it), up to the whole timeout: an
                    # idle consumer at batch 4 handled 2-3 messages in 40 up to 170 ms late at a
                    # 0.3 s timeout (700 ms at 1 s), none over 6 ms at batch 1. A backlog costs a
                    # pull request per message, a round trip to NATS (well under a millisecond).
                    msgs = await sub.fetch(batch=1, timeout=self._fetch_timeout_s)
                except (asyncio.TimeoutError, nats.errors.TimeoutError):
                    continue
                except Exception as exc:
                    if self._stopping.is_set():
                        break
                    log.warning("consumer_fetch_failed", consumer=self._spec.durable, error=str(exc))
                    await asyncio.sleep(0.5)
                    continue
                for msg in msgs:
                    if not await self._take_slot():
                        await self._nak_quietly(msg)  # stopping: another replica takes it now
                        continue
                    task = asyncio.create_task(self._handle(msg))
                    self._inflight.add(task)
                    task.add_done_callback(self._inflight.discard)
        finally:
            # Always, even when cancelled: a subscription left open makes the connection's
            # drain wait for its queue until the drain timeout (30 s), past the pod's grace.
            if sub is not None:
                with contextlib.suppress(Exception):
                    await sub.unsubscribe()

    async def _take_slot(self) -> bool:
        """A handler slot, or False as soon as the consumer is stopping (never blocks shutdown)."""
        if self._stopping.is_set():
            return False
        acquire = asyncio.ensure_future(self._slots.acquire())
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({acquire, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopping.cancel()
            if not acquire.done():
                acquire.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await acquire
        if not acquire.cancelled() and acquire.done():
            if self._stopping.is_set():
                self._slots.release()
                return False
            return True
        return False

    async def _handle(self, msg: Msg) -> None:
        try:
            await self._handler(msg)
        except asyncio.CancelledError:
            await self._nak_quietly(msg)
            raise
        except Exception:
            # A handler bug or an outage it did not classify: retry soon, elsewhere if need be.
            log.exception("handler_crashed", consumer=self._spec.durable)
            await self._nak_quietly(msg, delay=5.0)
        finally:
            self._slots.release()
            structlog.contextvars.unbind_contextvars("msg_id", "stream_seq")

    @staticmethod
    async def _nak_quietly(msg: Msg, delay: float | None = None) -> None:
        with contextlib.suppress(Exception):
            await msg.nak(delay=delay)

    def ready_check(self):
        """A readiness check: bound to its durable consumer (the setup step created it)."""

        async def check() -> bool:
            return self.bound

        return check

    async def stop(self) -> None:
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, timeout=self._fetch_timeout_s + 2)
        if self._inflight:
            done, pending = await asyncio.wait(set(self._inflight), timeout=self._grace_s)
            for task in pending:
                task.cancel()  # _handle naks on cancellation
            if pending:
                await asyncio.wait(pending, timeout=2)
