"""JetStream publishes, many in flight, each awaited until JetStream acknowledges it (its PubAck).

What ``JetStreamContext.publish`` does, for less per message: it is ``nc.request``, which
makes a reply token from ``os.urandom``, a done callback, and ``asyncio.wait_for``'s own
waiter future and timer for every message, then decodes the PubAck into a dataclass. Here
one reply subscription (made once, at start) carries every PubAck, a token is a counter, and
each publish waits on one future. Per accepted ping (two publishes: the rate-limit key and
the ping) that halved the client's CPU under load. It stays only while a bench shows it:
``python bench/telemetry/jspub.py`` publishes the same messages through both paths in
alternating slices; on 2026-12-05 (load 2.9, 64 in flight) ours took 0.58x nats-py's client
CPU per publish (22.5 against 38.7 µs) and 0.58x its wall time. Should nats-py's own path
come within noise of it, delete this module and use ``JetStreamContext.publish``.

No timer per publish either (a TimerHandle made, pushed on the loop's heap and cancelled
again for nearly every message): the timeout is the same for every publish and tokens are
issued in order, so one ticker, running while publishes are waiting, notes every tenth of
the timeout how far the counter has got, and fails every publish still waiting that was
issued before a note older than the timeout. A publish thus times out after between one
and 1.2 timeouts.

A publish returns only once its PubAck is in, raises ``nats.js.errors.APIError`` (its
subclass for the code, as nats-py does) for an answer with an error,
``NoStreamResponseError`` when no stream takes the subject, and ``nats.errors.TimeoutError``
when no answer came within the timeout: then the message may or may not be stored, exactly
as with ``JetStreamContext.publish``.
"""

from __future__ import annotations

import asyncio
import collections

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.client import Client

_STATUS, _NO_RESPONDERS = "Status", "503"
_reply = msgspec.json.Decoder(dict)
TICKS_PER_TIMEOUT = 10


class JetStreamPublisher:
    def __init__(self, nc: Client, timeout_s: float):
        self._nc, self._timeout = nc, timeout_s
        # token -> its waiter, in the order issued (a dict keeps insertion order).
        self._waiting: dict[str, asyncio.Future] = {}
        self._issued = 0  # the last token's number
        self._inbox = ""
        # (loop time, the last token issued by then), one a tick while publishes wait.
        self._marks: collections.deque[tuple[float, int]] = collections.deque()
        self._ticker: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        self._inbox = self._nc.new_inbox() + "."
        await self._nc.subscribe(self._inbox + "*", cb=self._on_reply)

    @property
    def in_flight(self) -> int:
        """Publishes waiting for their PubAck (for tests)."""
        return len(self._waiting)

    async def _on_reply(self, msg) -> None:
        waiter = self._waiting.pop(msg.subject[len(self._inbox):], None)
        if waiter is not None and not waiter.done():
            waiter.set_result(msg)

    def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        marks, waiting = self._marks, self._waiting
        marks.append((now, self._issued))
        while marks and marks[0][0] <= now - self._timeout:
            # Every token up to this one was issued a whole timeout ago at least.
            _, last = marks.popleft()
            while waiting:
                token = next(iter(waiting))
                if int(token, 16) > last:
                    break
                waiter = waiting.pop(token)
                if not waiter.done():
                    waiter.set_exception(nats.errors.TimeoutError())
        if waiting:
            self._ticker = loop.call_later(self._timeout / TICKS_PER_TIMEOUT, self._tick)
        else:
            marks.clear()  # nothing left to time out
            self._ticker = None

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> dict:
        """The PubAck as JetStream sent it: ``{"stream": ..., "seq": ..., ["duplicate": true]}``."""
        if not self._inbox:
            raise RuntimeError("JetStreamPublisher.start was not called")
        self._issued = issued = self._issued + 1
        token = f"{issued:x}"
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiting[token] = waiter
        if self._ticker is None:
            self._ticker = loop.call_later(self._timeout / TICKS_PER_TIMEOUT, self._tick)
        try:
            await self._nc.publish(subject, payload, reply=self._inbox + token, headers=headers)
            msg = await waiter
        finally:
            self._waiting.pop(token, None)
        if msg.headers and msg.headers.get(_STATUS) == _NO_RESPONDERS:
            raise nats.js.errors.NoStreamResponseError
        ack = _reply.decode(msg.data)
        if "error" in ack:
            raise nats.js.errors.APIError.from_error(ack["error"])
        return ack
