"""Long-window dedupe: every delivery stored on INGEST is remembered in a NATS KV bucket.

JetStream's own duplicate window (2 minutes) catches a burst of repeats; GitHub's
manual or API redeliveries come hours later with the same X-GitHub-Delivery, and
this record catches those. Order matters: look up, publish, then remember — so a
delivery we failed to store (503) is never remembered and its redelivery goes
through. The database upsert stays the last line of defence.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError
from nats.js.kv import KeyValue

from indexium_contracts import ingest, onboarding
from indexium_platform import logs

log = logs.get(__name__)
_KEY_OK = re.compile(r"^[-_=a-zA-Z0-9]{1,128}$")


def key_for(delivery_id: str) -> str:
    # GitHub's ids are UUIDs; anything else is hashed into a valid KV key.
    return delivery_id if _KEY_OK.match(delivery_id) else "h_" + hashlib.sha256(delivery_id.encode()).hexdigest()


class DeliveryLog:
    def __init__(self, js: JetStreamContext, *, timeout_s: float = 0.5):
        self._js = js
        self._kv: KeyValue | None = None
        self._redelivered: KeyValue | None = None
        # A look-up is advice, not a gate: when NATS is slow or away, give up quickly and
        # let the publish (which has its own timeout) decide between 202 and 503.
        self._timeout_s = timeout_s

    async def _bucket(self) -> KeyValue:
        if self._kv is None:  # bound lazily: the setup step may run after this replica started
            self._kv = await self._js.key_value(ingest.DELIVERIES.name)
        return self._kv

    async def seen(self, delivery_id: str) -> bool:
        """True only when we know it was stored; any doubt lets the publish decide."""
        try:
            await asyncio.wait_for(self._get(delivery_id), self._timeout_s)
            return True
        except KeyNotFoundError:
            return False
        except Exception as exc:
            log.warning("delivery_log_unavailable", error=str(exc) or type(exc).__name__)
            return False

    async def first_delivered_at(self, delivery_id: str) -> float | None:
        """When GitHub first tried a delivery our reconciler asked it to redeliver (epoch
        seconds), else None. Events are ordered by their time: a failed ``suspend`` sent again
        after the ``unsuspend`` that followed it must count as the older one."""
        try:
            if self._redelivered is None:
                self._redelivered = await self._js.key_value(onboarding.REDELIVERED.name)
            entry = await asyncio.wait_for(self._redelivered.get(key_for(delivery_id)), self._timeout_s)
        except KeyNotFoundError:
            return None
        except Exception as exc:
            log.warning("redelivery_log_unavailable", error=str(exc) or type(exc).__name__)
            return None
        first = json.loads(entry.value or b"{}").get("first_at")
        return float(first) if first else None

    async def _get(self, delivery_id: str) -> None:
        await (await self._bucket()).get(key_for(delivery_id))

    async def _put(self, delivery_id: str, stream_seq: int) -> None:
        await (await self._bucket()).put(key_for(delivery_id), str(stream_seq).encode())

    async def remember(self, delivery_id: str, stream_seq: int) -> None:
        try:
            await asyncio.wait_for(self._put(delivery_id, stream_seq), self._timeout_s * 4)
        except Exception as exc:  # the message is stored; losing this record only weakens dedupe
            log.warning("delivery_log_write_failed", error=str(exc) or type(exc).__name__)
