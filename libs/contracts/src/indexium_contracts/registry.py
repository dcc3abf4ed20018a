"""Every stream, durable consumer and key-value bucket the setup step manages."""

from . import deadletter, ingest, onboarding, searchsnapshot, telemetry, versions

STREAMS = (ingest.STREAM, versions.STREAM, deadletter.STREAM, telemetry.STREAM)
CONSUMERS = (ingest.INDEXER, telemetry.WRITER, onboarding.GITHUB, onboarding.GITHUB_RELEASES, versions.SCAN,
             versions.NOTIFY)
BUCKETS = (ingest.DELIVERIES, onboarding.REDELIVERY_LOCK, onboarding.REDELIVERED, *telemetry.BUCKETS)
OBJECT_STORES = (searchsnapshot.BUCKET,)


def consumer_of(subject: str):
    """The durable consumer that reads a subject's messages (a subject goes to one consumer):
    whom a publisher waits on (the site's "Check again" asks JetStream whether it has a reader)."""
    (spec,) = [c for c in CONSUMERS if subject in c.filter_subjects]
    return spec
