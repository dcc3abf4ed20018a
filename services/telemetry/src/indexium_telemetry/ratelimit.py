"""One accepted ping per server per window, across replicas: NATS KV create-if-absent with a TTL.

The key is the server hash (already salted), the value the acceptance time; the
entry's own TTL closes the window, so nothing has to clean up. JetStream orders the
creates, so of two replicas racing for the same server exactly one wins. Why NATS
and not a PostgreSQL row: the accept path then depends on NATS alone (it publishes
there anyway), needs no cleanup job and no vacuum of short-lived rows.

The create is the message KeyValue.create sends (on the key's subject, expecting no message
there yet, with the window as its TTL), published through the process's JetStreamPublisher.
A key already there is asked again through KeyValue.create itself: it tells a key purged by
``release`` (a tombstone: the window is open again) from one still held.
"""

from __future__ import annotations

import asyncio
import math
import struct
from datetime import datetime

import nats.js.errors
from nats.js.kv import KeyValue

from .jspub import JetStreamPublisher

_VALUE = struct.Struct(">d")  # acceptance time, epoch seconds


class RateLimited(Exception):
    def __init__(self, retry_after_s: int):
        super().__init__(f"retry after {retry_after_s}s")
        self.retry_after_s = retry_after_s


class RateLimiter:
    def __init__(self, kv: KeyValue, bucket: str, window_s: int, *, publisher: JetStreamPublisher,
                 timeout_s: float = 2.0):
        self._kv, self._window, self._timeout = kv, window_s, timeout_s
        self._publisher, self._subject = publisher, f"$KV.{bucket}."
        self._create_headers = {"Nats-Expected-Last-Subject-Sequence": "0", "Nats-TTL": str(int(window_s))}

    async def acquire(self, server_hash: bytes, now: datetime) -> str:
        """Open this server's window or raise RateLimited; returns the key (see ``release``)."""
        key = server_hash.hex()
        value = _VALUE.pack(now.timestamp())
        try:
            # The publisher's timeout is INDEXIUM_TELEMETRY_PUBLISH_TIMEOUT_SECONDS (``app``).
            # (nats-py only reads the headers: one dict serves every create.)
            await self._publisher.publish(self._subject + key, value, self._create_headers)
            return key
        except nats.js.errors.APIError as exc:
            # 10071 / 10164: a message is there already (what KeyValue.create looks for too).
            if exc.err_code not in (10071, 10164):
                raise
        try:
            await self._kv.create(key, value, msg_ttl=self._window)  # held, or purged: reopened
            return key
        except nats.js.errors.KeyWrongLastSequenceError:
            raise RateLimited(await self._retry_after(key, now)) from None

    async def _retry_after(self, key: str, now: datetime) -> int:
        try:
            entry = await asyncio.wait_for(self._kv.get(key), self._timeout)
            (accepted_at,) = _VALUE.unpack(entry.value)
            left = accepted_at + self._window - now.timestamp()
        except Exception:  # expired meanwhile, or unreadable: the full window is a safe answer
            left = self._window
        return max(1, min(self._window, math.ceil(left)))

    async def release(self, key: str) -> None:
        """Undo ``acquire`` when the ping could not be queued, so the server may retry at once."""
        await asyncio.wait_for(self._kv.purge(key), self._timeout)
