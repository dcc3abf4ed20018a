"""Prometheus helpers: one registry per process, names prefixed ``indexium_<service>_``.

Labels are bounded: route *templates*, known HTTP methods (else ``other``), status
codes, reason codes — never a slug, URL, id or anything else a client chooses.
"""

from __future__ import annotations

import bisect
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from . import heap

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# The method label: RFC 9110's methods and PATCH; any other token a client sends (aiohttp
# accepts any) is "other", so a client cannot mint label values (a new series each).
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})


class RequestMetrics(Collector):
    """``<prefix>_http_requests_total{route,method,status}`` and
    ``<prefix>_http_request_duration_seconds{route,method}``: the same families a Counter and a
    Histogram would export, but counted in plain numbers on the request path (one dict look-up
    and three additions) and turned into samples only when scraped. prometheus_client's own
    children take a lock and walk the buckets on every request, which is most of what metrics
    cost a cache hit. Observed from the event loop's thread; scraped from the same thread."""

    def __init__(self, prefix: str, buckets: tuple[float, ...] = ()) -> None:
        self._prefix = prefix
        self._bounds = tuple(buckets or LATENCY_BUCKETS)
        self._created = time.time()
        # (route, method, status) -> [count, sum of seconds, count per bucket (the last: +Inf)]
        self._series: dict[tuple[str, str, int], list] = {}

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        if method not in HTTP_METHODS:
            method = "other"
        series = self._series.get((route, method, status))
        if series is None:
            series = self._series[(route, method, status)] = [0, 0.0, [0] * (len(self._bounds) + 1)]
        series[0] += 1
        series[1] += seconds
        series[2][bisect.bisect_left(self._bounds, seconds)] += 1

    def collect(self):
        requests = CounterMetricFamily(
            f"{self._prefix}_http_requests",
            "HTTP requests served, by route template, method and status code.",
            labels=["route", "method", "status"])
        latency = HistogramMetricFamily(
            f"{self._prefix}_http_request_duration_seconds", "HTTP request latency by route template.",
            labels=["route", "method"])
        by_route: dict[tuple[str, str], list] = {}
        for (route, method, status), (count, total, buckets) in tuple(self._series.items()):
            requests.add_metric([route, method, str(status)], count, created=self._created)
            merged = by_route.setdefault((route, method), [0.0, [0] * len(buckets)])
            merged[0] += total
            merged[1] = [a + b for a, b in zip(merged[1], buckets)]
        for (route, method), (total, buckets) in by_route.items():
            latency.add_metric([route, method], _cumulative(self._bounds, buckets), total)
        yield requests
        yield latency


class Count:
    """One labelled series of :class:`PlainCounter`: ``inc()`` is an addition, no lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0

    def inc(self, amount: int = 1) -> None:
        self.value += amount


class PlainCounter(Collector):
    """``<name>_total{labels}``, exported as a prometheus_client Counter would export it, for
    counters on the request path: a child is a plain number (:class:`Count`), where a Counter's
    child takes a lock and checks its arguments on every ``inc()``. Counted and scraped on the
    event loop's thread, like :class:`RequestMetrics`."""

    def __init__(self, name: str, doc: str, labels: tuple[str, ...]) -> None:
        self._name, self._doc, self._labels = name, doc, list(labels)
        self._created = time.time()
        self._series: dict[tuple[str, ...], Count] = {}

    def labels(self, *values: str) -> Count:
        """The child for these label values, created once: callers keep it."""
        child = self._series.get(values)
        if child is None:
            if len(values) != len(self._labels):
                raise ValueError(f"{self._name}: expected labels {self._labels}, got {values}")
            child = self._series[values] = Count()
        return child

    def collect(self):
        family = CounterMetricFamily(self._name, self._doc, labels=self._labels)
        for values, child in tuple(self._series.items()):
            family.add_metric(list(values), child.value, created=self._created)
        yield family


def _le(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(float(bound))


def _cumulative(bounds: tuple[float, ...], counts) -> list[tuple[str, int]]:
    """Per-bucket counts (the last: over every bound) as a histogram's cumulative ``le`` buckets."""
    out, running = [], 0
    for bound, n in zip((*bounds, float("inf")), counts):
        running += n
        out.append((_le(bound), running))
    return out


class GcPauses(Collector):
    """``<prefix>_gc_pause_seconds{generation}``: the cyclic collector's passes as
    :func:`heap.passes` timed them (nothing until :func:`heap.watch` runs; ``web.serve`` runs it)."""

    def __init__(self, prefix: str) -> None:
        self._name = f"{prefix}_gc_pause_seconds"

    def collect(self):
        family = HistogramMetricFamily(
            self._name, "Cyclic garbage collector passes: the whole process stops for each. "
            "Generation 2 is a full pass.", labels=["generation"])
        if heap.watching():
            for generation, (_, total, buckets) in heap.passes().items():
                family.add_metric([str(generation)], _cumulative(heap.PAUSE_BUCKETS, buckets), total)
        yield family


class ServiceMetrics:
    """The metrics every service exports; services add their own on ``registry``."""

    def __init__(self, service: str, registry: CollectorRegistry | None = None):
        self.service = service
        self.registry = registry or CollectorRegistry(auto_describe=True)
        p = f"indexium_{service}"
        self.requests = RequestMetrics(p)
        self.registry.register(self.requests)
        self.registry.register(GcPauses(p))
        self.ready = Gauge(
            f"{p}_ready", "1 when the service's NATS and PostgreSQL connections are usable.",
            registry=self.registry,
        )

    def name(self, suffix: str) -> str:
        return f"indexium_{self.service}_{suffix}"

    def counter(self, suffix: str, doc: str, labels: tuple[str, ...] = ()) -> Counter:
        return Counter(self.name(suffix), doc, list(labels), registry=self.registry)

    def plain_counter(self, suffix: str, doc: str, labels: tuple[str, ...]) -> PlainCounter:
        """A labelled counter for the request path (:class:`PlainCounter`); ``suffix`` without
        ``_total``, as for :meth:`counter`."""
        counter = PlainCounter(self.name(suffix.removesuffix("_total")), doc, labels)
        self.registry.register(counter)
        return counter

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
