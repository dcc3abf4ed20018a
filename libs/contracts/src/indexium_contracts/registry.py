"""Every stream and durable consumer the setup step manages."""

from . import deadletter, ingest, versions

STREAMS = (ingest.STREAM, versions.STREAM, deadletter.STREAM)
CONSUMERS = (ingest.INDEXER,)
