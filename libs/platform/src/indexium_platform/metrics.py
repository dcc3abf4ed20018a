"""Prometheus helpers: one registry per process, names prefixed ``indexium_<service>_``.

Labels are bounded: route *templates*, status classes, reason codes — never a
slug, URL or id.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class ServiceMetrics:
    """The metrics every service exports; services add their own on ``registry``."""

    def __init__(self, service: str, registry: CollectorRegistry | None = None):
        self.service = service
        self.registry = registry or CollectorRegistry(auto_describe=True)
        p = f"indexium_{service}"
        self.http_requests = Counter(
            f"{p}_http_requests_total",
            "HTTP requests served, by route template, method and status code.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.http_latency = Histogram(
            f"{p}_http_request_duration_seconds",
            "HTTP request latency by route template.",
            ["route", "method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ready = Gauge(
            f"{p}_ready", "1 when the service's NATS and PostgreSQL connections are usable.",
            registry=self.registry,
        )

    def name(self, suffix: str) -> str:
        return f"indexium_{self.service}_{suffix}"

    def counter(self, suffix: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(self.name(suffix), doc, list(labels), registry=self.registry)

    def gauge(self, suffix: str, doc: str, labels: tuple[str, ...] = ()) -> Gauge:
        return Gauge(self.name(suffix), doc, list(labels), registry=self.registry)

    def histogram(
        self, suffix: str, doc: str, labels: tuple[str, ...] = (), buckets=LATENCY_BUCKETS
    ) -> Histogram:
        return Histogram(
            self.name(suffix), doc, list(labels), buckets=buckets, registry=self.registry
        )

    def render(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
