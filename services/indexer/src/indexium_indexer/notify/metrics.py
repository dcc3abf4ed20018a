"""Notify-role metrics (all prefixed indexium_notify_; labels bounded: outcomes, formats)."""

from indexium_platform.metrics import ServiceMetrics

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class NotifyMetrics:
    def __init__(self, base: ServiceMetrics):
        # outcome: matched|not_public|retry|outage|dead_lettered
        self.jobs = base.counter("jobs_total", "Version events handled, by outcome.", ("outcome",))
        self.enqueued = base.counter("deliveries_enqueued_total", "Deliveries written to the outbox.")
        # outcome: ok|http_error|network|timeout|refused|deferred|cancelled|lost
        self.attempts = base.counter("attempts_total", "Delivery attempts by outcome and format.",
                                     ("outcome", "format"))
        self.latency = base.histogram("attempt_duration_seconds", "POST to a subscriber, connect to answer.",
                                      buckets=LATENCY_BUCKETS)
        self.paused = base.counter("subscriptions_paused_total", "Subscriptions paused after failing.")
        self.given_up = base.counter("deliveries_given_up_total", "Deliveries past their 24-hour window.")
