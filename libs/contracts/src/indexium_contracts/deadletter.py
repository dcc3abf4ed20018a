"""Stream DEADLETTER: messages a consumer gave up on, kept for operators to inspect and replay.

The same item is also a row in PostgreSQL ``dead_letters`` (the working queue an
operator lists and replays); the stream keeps the original bytes and headers.
"""

from __future__ import annotations

import msgspec

from .streams import StreamSpec

SUBJECT_PREFIX = "indexium.deadletter"

STREAM = StreamSpec(
    name="DEADLETTER",
    subjects=(f"{SUBJECT_PREFIX}.>",),
    description="Messages given up on, with the reason",
    max_age_s=30 * 24 * 3600,
    max_msg_size=1024 * 1024,
)


def subject_for(consumer: str) -> str:
    return f"{SUBJECT_PREFIX}.{consumer}"


class DeadLetter(msgspec.Struct, frozen=True, tag="dead_letter.v1"):
    consumer: str
    subject: str  # where the original message was published
    stream_sequence: int
    attempts: int
    category: str  # machine code, e.g. "corrupt_zip", "retries_exhausted"
    error: str  # safe text of the last error
    payload: bytes  # the original message body
    msg_id: str | None = None  # the original Nats-Msg-Id


encoder = msgspec.msgpack.Encoder()
decoder = msgspec.msgpack.Decoder(DeadLetter)
