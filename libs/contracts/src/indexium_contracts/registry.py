"""Every stream, durable consumer and key-value bucket the setup step manages."""

from . import deadletter, ingest, onboarding, telemetry, versions

STREAMS = (ingest.STREAM, versions.STREAM, deadletter.STREAM, telemetry.STREAM)
CONSUMERS = (ingest.INDEXER, telemetry.WRITER, onboarding.GITHUB, onboarding.GITHUB_RELEASES, versions.SCAN)
BUCKETS = (ingest.DELIVERIES, onboarding.REDELIVERY_LOCK, onboarding.REDELIVERED, *telemetry.BUCKETS)
