"""GitHub App onboarding: the durable consumer of the App's events on the INGEST stream,
and the NATS KV buckets of ingest's failed-delivery reconciler.

The events themselves are ingest's (``ingest.InstallationReceived`` and friends, published
with ``Nats-Msg-Id`` = the delivery id); this module only adds who consumes them. The
release indexer keeps ``indexium.ingest.release``; backfill and reconciliation of the
GitHub role publish ``ReleaseReceived`` there too, with a synthetic delivery id
(``backfill:<release id>:<fingerprint>``), so every release goes through one path.
"""

from __future__ import annotations

from . import ingest
from .streams import BucketSpec, ConsumerSpec

GITHUB = ConsumerSpec(
    stream=ingest.STREAM.name,
    durable="github",
    filter_subjects=(
        ingest.INSTALLATION,
        ingest.INSTALLATION_REPOSITORIES,
        ingest.PUSH,
        ingest.REPOSITORY,
        ingest.CATCH_UP,
    ),
    description="GitHub role: installations, repository changes, pushes, catch-up requests -> registrations and mod cards",
    # Registration reads a few files through the API; heartbeated with in_progress() meanwhile.
    ack_wait_s=60.0,
    max_deliver=-1,  # never dropped by JetStream: rate limits and outages nak without spending attempts
    # Events of one installation are order-sensitive; few in flight keeps them close to order
    # (handlers also skip state older than what they already applied).
    max_ack_pending=32,
)

# The GitHub role watches releases too: one published before its jars were uploaded (release
# tools publish first and upload afterwards; GitHub sends no webhook for an upload) is re-read
# on a short schedule (github_release_rereads). Its own durable consumer, beside the indexer's
# on the same subject: the App's order-sensitive events above are not held up by a flood of
# releases (a backfill publishes hundreds), and the events wait here while no GitHub role runs.
GITHUB_RELEASES = ConsumerSpec(
    stream=ingest.STREAM.name,
    durable="github-releases",
    filter_subjects=(ingest.RELEASE,),
    description="GitHub role: releases published without their jars -> a re-read schedule",
    ack_wait_s=30.0,  # one short transaction per release
    max_deliver=-1,  # an outage naks; nothing else fails a release here (see the role's watch.py)
    max_ack_pending=256,
)

# Ingest's failed-delivery reconciler: NATS KV, since ingest has no PostgreSQL.
# One replica at a time holds the lock key; the bucket's TTL frees it if that replica dies
# (the holder rewrites the key every third of the TTL).
REDELIVERY_LOCK = BucketSpec(
    name="ingest_redelivery_lock",
    description="Which ingest replica runs the failed-delivery reconciler",
    ttl_s=60.0,
)
# guid -> how many times we asked GitHub to redeliver it, and when. GitHub allows
# redelivery for 3 days, so the record outlives that by a day. Whether a delivery was
# stored at all is ingest.DELIVERIES (the long-window dedupe record).
REDELIVERED = BucketSpec(
    name="ingest_redelivered",
    description="Failed GitHub deliveries the reconciler asked GitHub to redeliver",
    ttl_s=4 * 24 * 3600.0,
)
