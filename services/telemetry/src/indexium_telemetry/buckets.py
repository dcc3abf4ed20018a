"""Bind the telemetry key-value buckets; create them only if the setup step has not.

The setup step creates both (``registry.BUCKETS``). They hold nothing that must
survive (a day's salt, 15-minute windows), so a service started against a NATS
where they are missing (a fresh dev server, a setup predating them) creates them
with the same config rather than refusing to start. Binding first means a bucket
an operator tuned (e.g. more replicas) is used as it is, not fought over.
"""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from indexium_contracts.streams import BucketSpec


async def bind_or_create(js: JetStreamContext, spec: BucketSpec, *, replicas: int) -> KeyValue:
    try:
        return await js.key_value(spec.name)
    except BucketNotFoundError:
        try:
            return await js.create_key_value(spec.config(replicas=replicas))
        except Exception:
            # Another replica created it between our two calls: bind to theirs.
            return await js.key_value(spec.name)
