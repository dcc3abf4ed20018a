"""Stream and durable-consumer specifications, shared by the setup step and the services.

The setup step (``python -m indexium_ops setup``) creates/updates these; services
only bind to them. Keep ``docs/messaging.md`` in step with this module and the
per-stream contract modules.
"""

from __future__ import annotations

import msgspec
from nats.js import api


class StreamSpec(msgspec.Struct, frozen=True):
    name: str
    subjects: tuple[str, ...]
    description: str
    max_age_s: float  # how long messages are kept when no limit discards them first
    duplicate_window_s: float = 120.0  # JetStream's Nats-Msg-Id de-duplication window
    max_msg_size: int = 1024 * 1024
    max_bytes: int = -1

    def config(self, *, replicas: int) -> api.StreamConfig:
        return api.StreamConfig(
            name=self.name,
            description=self.description,
            subjects=list(self.subjects),
            retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE,
            num_replicas=replicas,
            max_age=self.max_age_s,
            duplicate_window=self.duplicate_window_s,
            max_msg_size=self.max_msg_size,
            max_bytes=self.max_bytes,
            discard=api.DiscardPolicy.OLD,
        )


class ConsumerSpec(msgspec.Struct, frozen=True):
    stream: str
    durable: str
    filter_subjects: tuple[str, ...]
    description: str
    ack_wait_s: float  # redelivery if neither acked nor heartbeated (in_progress) for this long
    max_deliver: int  # JetStream's hard ceiling; handlers count real attempts themselves
    max_ack_pending: int  # in-flight messages across all replicas of the consumer

    def config(self) -> api.ConsumerConfig:
        return api.ConsumerConfig(
            durable_name=self.durable,
            description=self.description,
            deliver_policy=api.DeliverPolicy.ALL,
            ack_policy=api.AckPolicy.EXPLICIT,
            ack_wait=self.ack_wait_s,
            max_deliver=self.max_deliver,
            max_ack_pending=self.max_ack_pending,
            filter_subjects=list(self.filter_subjects),
        )


class BucketSpec(msgspec.Struct, frozen=True):
    """A JetStream key-value bucket (a stream underneath) created by the setup step."""

    name: str
    description: str
    ttl_s: float  # every key expires this long after its last write
    history: int = 1

    def config(self, *, replicas: int) -> api.KeyValueConfig:
        return api.KeyValueConfig(
            bucket=self.name,
            description=self.description,
            history=self.history,
            ttl=self.ttl_s,
            storage=api.StorageType.FILE,
            replicas=replicas,
        )


class ObjectStoreSpec(msgspec.Struct, frozen=True):
    """A JetStream object store bucket (a stream underneath) created by the setup step."""

    name: str
    description: str
    max_bytes: int = -1

    def config(self, *, replicas: int) -> api.ObjectStoreConfig:
        return api.ObjectStoreConfig(bucket=self.name, description=self.description, max_bytes=self.max_bytes,
                                     storage=api.StorageType.FILE, replicas=replicas)
