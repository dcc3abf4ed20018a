"""Stream TELEMETRY: pings accepted by the telemetry service, one message per accepted ping.

Published by the telemetry HTTP handler *after* validation, mod resolution, hashing
and the rate limit, with ``Nats-Msg-Id`` = ``ping_id``; the 202 is sent only after
the PubAck. Consumed by the telemetry writer (batched inserts into
``mod_telemetry_pings``). The raw ``server_uuid`` never enters the stream: only
``server_hash`` (sha256 of the uuid and the day's salt) does, and no client address.

Two JetStream key-value buckets belong to the same pipeline (memory storage, so the
salt never touches a disk): ``telemetry_salts`` (one random salt per UTC day, each
entry expiring when its day ends) and ``telemetry_ratelimit`` (one key per server
hash, expiring after the rate-limit window; created with create-if-absent).
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, time, timedelta

import msgspec
from nats.js import api

from .streams import BucketSpec, ConsumerSpec, StreamSpec

SUBJECT_PREFIX = "indexium.telemetry"
PING = f"{SUBJECT_PREFIX}.ping"

STREAM = StreamSpec(
    name="TELEMETRY",
    subjects=(f"{SUBJECT_PREFIX}.>",),
    description="Telemetry pings accepted (hashed server id, resolved mods, no address)",
    max_age_s=3 * 24 * 3600,  # three days for the writer to recover from a PostgreSQL outage
    duplicate_window_s=120.0,
    # A ping body is at most 64 KiB of JSON; the event (ids and short strings) is smaller.
    max_msg_size=256 * 1024,
    # Bounded disk: past 2 GiB of backlog the oldest pings go (counts are samples, not ledgers).
    max_bytes=2 * 1024**3,
)

WRITER = ConsumerSpec(
    stream=STREAM.name,
    durable="telemetry-writer",
    filter_subjects=(PING,),
    description="Telemetry writer: batched, idempotent inserts into mod_telemetry_pings",
    ack_wait_s=30.0,  # a batch commits in milliseconds; 30 s covers a slow PostgreSQL
    # No ceiling: a PostgreSQL outage must not drop pings (the writer naks with a delay);
    # poison messages are dead-lettered and terminated by the writer itself.
    max_deliver=-1,
    max_ack_pending=8192,  # room for several writer replicas each holding a full batch
)


class MemoryBucketSpec(BucketSpec, frozen=True):
    """A key-value bucket in memory storage: what it holds never reaches a disk (nor a backup).

    Created by the setup step like every bucket in ``registry.BUCKETS``. ``ttl_s`` is only
    a backstop here: entries carry their own, shorter TTL (``msg_ttl``).
    """

    def config(self, *, replicas: int) -> api.KeyValueConfig:
        config = super().config(replicas=replicas)
        config.storage = api.StorageType.MEMORY
        return config


SALTS = MemoryBucketSpec(
    name="telemetry_salts",
    description="One random salt per UTC day; each entry expires when its day ends",
    ttl_s=48 * 3600,
)
RATE_LIMIT = MemoryBucketSpec(
    name="telemetry_ratelimit",
    description="One key per server hash while its rate-limit window is open",
    ttl_s=3600,  # the window itself is each entry's TTL, at most one hour (settings check it)
)
BUCKETS = (SALTS, RATE_LIMIT)


def utc_day(ts: datetime) -> date:
    """The one time bucket of telemetry: the UTC calendar day of an instant.

    A ping belongs to the UTC day of its ``received_at`` (set by our HTTP handler,
    never by the client); salts, partitions and daily stats all use this function.
    """
    if ts.tzinfo is None:
        raise ValueError("utc_day needs an aware datetime")
    return ts.astimezone(UTC).date()


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """[start, end) of a UTC day: 00:00:00 UTC of the day to 00:00:00 UTC of the next."""
    start = datetime.combine(day, time(0), tzinfo=UTC)
    return start, start + timedelta(days=1)


class ModUse(msgspec.Struct, frozen=True, array_like=True):
    mod_id: uuid.UUID
    version: str | None = None


class PingAccepted(msgspec.Struct, frozen=True, tag_field="type", tag="telemetry_ping.v1"):
    ping_id: uuid.UUID
    received_at: str  # RFC 3339 UTC, set by the HTTP handler; decides the UTC day
    server_hash: bytes  # sha256(server_uuid + daily salt), 32 bytes
    mods: list[ModUse]  # known mods only, de-duplicated
    game_version: str
    loader: str
    java_version: str  # the major version only ("8", "17", "21")
    os: str
    arch: str
    core_count: int
    player_count: int | None = None
    online_mode: bool | None = None


TelemetryEvent = PingAccepted

encoder = msgspec.msgpack.Encoder()
decoder = msgspec.msgpack.Decoder(TelemetryEvent)
