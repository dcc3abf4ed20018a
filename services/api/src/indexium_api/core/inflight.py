"""A per-client cap on concurrent uncached work: one client's cache misses cannot hold every
database connection.

Each client (the rate limit's key: an address, an IPv6 /64) may have at most ``cap``
requests doing uncached work at once: computing a cache miss, a bulk lookup, a signed-in
page's session read, a sign-in. Its next one waits, in order, for one of its own to finish,
for at most ``wait_s``, and at most ``cap * QUEUE_PER_SLOT`` of them wait; past either it is
refused with :class:`Busy` (a 429 with Retry-After). Waiting briefly rather than refusing
at once lets a launcher's or a browser's short burst through unharmed; the bound on the
wait and the queue is what keeps a flood from parking requests here instead.

Cache hits never come here, and neither does a miss that finds a computation of its key
already in flight (single-flight: it waits for that one and costs the database nothing).
Other clients never wait for this client's slots: their misses only ever wait for the
database pool itself. The table holds only clients with work in flight or waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

QUEUE_PER_SLOT = 4


class Busy(Exception):
    """The client already has its cap of uncached requests in flight, and its queue is full
    or its wait ran out."""

    def __init__(self, cap: int, retry_after_s: int):
        super().__init__(f"more than {cap} uncached requests at once")
        self.cap, self.retry_after_s = cap, retry_after_s


class InFlight:
    def __init__(self, cap: int, wait_s: float):
        self.cap, self.wait_s = cap, wait_s
        self._running: dict[str, int] = {}  # client -> its requests holding a slot
        self._waiting: dict[str, deque[asyncio.Future]] = {}  # client -> its requests waiting, oldest first

    async def acquire(self, key: str) -> None:
        """Take one of ``key``'s slots, waiting for one in order (Busy past the wait or queue);
        every successful acquire is followed by one :meth:`release`."""
        running = self._running.get(key, 0)
        if running < self.cap:
            self._running[key] = running + 1
        else:
            await self._wait(key)  # returns holding a slot handed over by a finishing request

    @contextlib.asynccontextmanager
    async def slot(self, key: str) -> AsyncIterator[None]:
        """Hold one of ``key``'s slots while the block runs."""
        await self.acquire(key)
        try:
            yield
        finally:
            self.release(key)

    async def _wait(self, key: str) -> None:
        queue = self._waiting.get(key)
        if queue is None:
            queue = self._waiting[key] = deque()
        if len(queue) >= self.cap * QUEUE_PER_SLOT:
            raise Busy(self.cap, 1)
        turn = asyncio.get_running_loop().create_future()
        queue.append(turn)
        try:
            async with asyncio.timeout(self.wait_s):
                await turn
        except BaseException as exc:  # timed out, or the client hung up
            if turn.done() and not turn.cancelled():
                self.release(key)  # a slot was handed over just as the wait ended: pass it on
            else:
                turn.cancel()
                with contextlib.suppress(ValueError):  # (a release may have skipped it already)
                    queue.remove(turn)
                if not queue and self._waiting.get(key) is queue:
                    del self._waiting[key]
            if isinstance(exc, TimeoutError):
                raise Busy(self.cap, 1) from None
            raise

    def release(self, key: str) -> None:
        queue = self._waiting.get(key)
        while queue:
            turn = queue.popleft()
            if not turn.done():
                turn.set_result(None)  # the slot passes to the oldest waiter: the count stays
                return
        if queue is not None:
            del self._waiting[key]
        running = self._running[key] - 1
        if running:
            self._running[key] = running
        else:
            del self._running[key]

    def running(self, key: str) -> int:
        return self._running.get(key, 0)

    def __len__(self) -> int:
        """Clients with work in flight or waiting."""
        return len(self._running.keys() | self._waiting.keys())
