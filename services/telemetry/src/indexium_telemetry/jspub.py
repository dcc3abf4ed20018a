"""JetStream publishes, many in flight, each awaited until JetStream acknowledges it (its PubAck).

What ``JetStreamContext.publish`` does, for less per message: it is ``nc.request``, which
makes a reply token from ``os.urandom``, a done callback, and ``asyncio.wait_for``'s own
waiter future and timer for every message, then decodes the PubAck into a dataclass. Here
one reply subscription (made once, at start) carries every PubAck, a token is a counter, and
each publish waits on one future with one timer. Per accepted ping (two publishes: the
rate-limit key and the ping) that halved the client's CPU under load.

A publish returns only once its PubAck is in, raises ``nats.js.errors.APIError`` (its
subclass for the code, as nats-py does) for an answer with an error,
``NoStreamResponseError`` when no stream takes the subject, and ``nats.errors.TimeoutError``
when no answer came within the timeout: then the message may or may not be stored, exactly
as with ``JetStreamContext.publish``.
"""

from __future__ import annotations

import asyncio
import itertools

import msgspec
import nats.errors
import nats.js.errors
from nats.aio.client import Client

_STATUS, _NO_RESPONDERS = "Status", "503"
_reply = msgspec.json.Decoder(dict)


def _expire(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_exception(nats.errors.TimeoutError())


class JetStreamPublisher:
    def __init__(self, nc: Client, timeout_s: float):
        self._nc, self._timeout = nc, timeout_s
        self._waiting: dict[str, asyncio.Future] = {}
        self._tokens = itertools.count(1)
        self._inbox = ""

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

    async def publish(self, subject: str, payload: bytes, headers: dict[str, str] | None = None) -> dict:
        """The PubAck as JetStream sent it: ``{"stream": ..., "seq": ..., ["duplicate": true]}``."""
        if not self._inbox:
            raise RuntimeError("JetStreamPublisher.start was not called")
        token = f"{next(self._tokens):x}"
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiting[token] = waiter
        timer = loop.call_later(self._timeout, _expire, waiter)
        try:
            await self._nc.publish(subject, payload, reply=self._inbox + token, headers=headers)
            msg = await waiter
        finally:
            timer.cancel()
            self._waiting.pop(token, None)
        if msg.headers and msg.headers.get(_STATUS) == _NO_RESPONDERS:
            raise nats.js.errors.NoStreamResponseError
        ack = _reply.decode(msg.data)
        if "error" in ack:
            raise nats.js.errors.APIError.from_error(ack["error"])
        return ack
