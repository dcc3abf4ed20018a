"""Indexer metrics (all prefixed indexium_indexer_)."""

from indexium_platform.metrics import ServiceMetrics


class IndexerMetrics:
    def __init__(self, base: ServiceMetrics):
        # outcome: indexed|hidden|ignored|retry|outage|dead_lettered
        self.jobs = base.counter("jobs_total", "Release jobs by outcome.", ("outcome",))
        self.dead_letters = base.counter(
            "dead_letters_total", "Jobs dead-lettered, by reason category.", ("category",)
        )
        self.job_seconds = base.histogram("job_duration_seconds", "Time to handle one release job.")
        self.range_requests = base.histogram(
            "range_requests_per_job", "HTTP requests made to read a release's jars.",
            buckets=(1, 2, 3, 4, 6, 8, 12, 16, 32),
        )
        self.bytes_fetched = base.counter("bytes_fetched_total", "Bytes fetched from asset hosts.")
        # code: the jar's error code (entry_too_large, asset_not_found, ...) or its first manifest problem
        self.jars_skipped = base.counter("jars_skipped_total", "Jars of an indexed release left out of its version.",
                                         ("code",))
        self.webhook_to_indexed = base.histogram(
            "webhook_to_indexed_seconds",
            "From ingest accepting the webhook to the version committed (the freshness target).",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300),
        )
