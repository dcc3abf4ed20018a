"""Giving up on a message: a ``dead_letters`` row (the operators' queue) and a DEADLETTER copy.

The caller terminates the message only when this returns True: if even the row cannot
be written, the message is kept (nak) rather than silently dropped.
"""

from __future__ import annotations

import contextlib

import asyncpg
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from indexium_contracts import deadletter
from indexium_db.queries import deadletters
from indexium_platform import logs

log = logs.get(__name__)
MAX_ERROR_CHARS = 500


async def give_up(pool: asyncpg.Pool, js: JetStreamContext, consumer: str, msg: Msg,
                  category: str, error: str) -> bool:
    meta = msg.metadata
    msg_id = (msg.headers or {}).get("Nats-Msg-Id")
    error = error[:MAX_ERROR_CHARS]
    try:
        async with pool.acquire() as conn:
            await deadletters.insert(
                conn, consumer=consumer, subject=msg.subject, msg_id=msg_id,
                stream_sequence=meta.sequence.stream, category=category, error=error,
                attempts=meta.num_delivered, payload=msg.data)
    except Exception as exc:
        log.warning("dead_letter_failed", consumer=consumer, error=str(exc))
        return False
    # The row is the working queue; the stream copy is for replay tooling, so best effort.
    with contextlib.suppress(Exception):
        await js.publish(deadletter.subject_for(consumer), deadletter.encoder.encode(deadletter.DeadLetter(
            consumer=consumer, subject=msg.subject, stream_sequence=meta.sequence.stream,
            attempts=meta.num_delivered, category=category, error=error, payload=msg.data,
            msg_id=msg_id)))
    log.warning("message_dead_lettered", consumer=consumer, category=category,
                stream_seq=meta.sequence.stream)
    return True
