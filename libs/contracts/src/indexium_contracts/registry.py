"""Every stream, durable consumer and key-value bucket the setup step manages."""

from . import deadletter, ingest, telemetry, versions

STREAMS = (ingest.STREAM, versions.STREAM, deadletter.STREAM, telemetry.STREAM)
CONSUMERS = (ingest.INDEXER, telemetry.WRITER)
BUCKETS = (ingest.DELIVERIES,)
