"""Ingest metrics (all prefixed indexium_ingest_)."""

from indexium_platform.metrics import ServiceMetrics


class IngestMetrics:
    def __init__(self, base: ServiceMetrics):
        # outcome: accepted|duplicate|ignored|pong|bad_signature|malformed|too_large|unavailable
        self.webhooks = base.counter(
            "webhooks_total", "Webhook deliveries by GitHub event and outcome.", ("event", "outcome")
        )
