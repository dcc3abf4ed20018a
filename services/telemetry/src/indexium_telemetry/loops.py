"""Background loops as cleanup_ctx-friendly tasks: run a step every N seconds until stopped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from indexium_platform import logs

log = logs.get(__name__)


class Periodic:
    """Runs ``step`` now and then every ``every_s``; a failing step is logged, never fatal,
    and retried after ``retry_s`` (sooner than the period, so a start-up outage heals fast)."""

    def __init__(self, name: str, step: Callable[[], Awaitable[object]], every_s: float,
                 retry_s: float | None = None, *, wait_first: float = 0.0):
        self.name, self._step, self._every = name, step, every_s
        self._wait_first = wait_first
        self._retry = min(every_s, retry_s) if retry_s else every_s
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def _run(self) -> None:
        if self._wait_first:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=self._wait_first)
        while not self._stop.is_set():
            pause = self._every
            try:
                await self._step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("loop_step_failed", loop=self.name, error=str(exc) or type(exc).__name__)
                pause = self._retry
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=pause)

    async def stop(self, grace_s: float) -> None:
        """Let a running step finish within the grace period, then cancel it."""
        self._stop.set()
        if self._task is None:
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=grace_s)
        except (asyncio.TimeoutError, Exception):
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
