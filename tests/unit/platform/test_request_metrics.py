"""The request metrics counted in plain numbers export what prometheus_client's Counter and
Histogram export for the same observations."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from indexium_platform.metrics import LATENCY_BUCKETS, ServiceMetrics


def samples(text: bytes) -> dict:
    out = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            if s.name.endswith("_created"):
                continue
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_request_metrics_match_a_counter_and_a_histogram():
    ours = ServiceMetrics("svc")
    reference = CollectorRegistry()
    counter = Counter("indexium_svc_http_requests_total", "x", ["route", "method", "status"], registry=reference)
    histogram = Histogram("indexium_svc_http_request_duration_seconds", "x", ["route", "method"],
                          buckets=LATENCY_BUCKETS, registry=reference)
    observations = [("/a", "GET", 200, 0.0004), ("/a", "GET", 200, 0.001), ("/a", "GET", 404, 0.0031),
                    ("/a", "POST", 200, 2.5), ("/b/{slug}", "GET", 500, 11.0), ("/a", "GET", 200, 0.0)]
    for route, method, status, seconds in observations:
        ours.requests.observe(route, method, status, seconds)
        counter.labels(route, method, str(status)).inc()
        histogram.labels(route, method).observe(seconds)
    mine = {k: v for k, v in samples(ours.render()[0]).items() if "http_request" in k[0]}
    assert mine == samples(generate_latest(reference))
    assert mine[("indexium_svc_http_request_duration_seconds_bucket",
                 (("le", "0.001"), ("method", "GET"), ("route", "/a")))] == 3  # le: at most the bound


def test_a_method_the_client_made_up_is_counted_as_other():
    ours = ServiceMetrics("svc")
    for i in range(50):
        ours.requests.observe("unmatched", f"BREW{i}", 405, 0.001)
    ours.requests.observe("unmatched", "get", 405, 0.001)  # methods are case-sensitive (RFC 9110)
    ours.requests.observe("/a", "GET", 200, 0.001)
    ours.requests.observe("/a", "PATCH", 200, 0.001)
    methods = {dict(labels)["method"]: value for (name, labels), value in samples(ours.render()[0]).items()
               if name == "indexium_svc_http_requests_total"}
    assert methods == {"other": 51, "GET": 1, "PATCH": 1}


def test_plain_counter_matches_a_counter():
    ours = ServiceMetrics("svc")
    reference = CollectorRegistry()
    counter = Counter("indexium_svc_cache_requests_total", "x", ["route", "result"], registry=reference)
    plain = ours.plain_counter("cache_requests_total", "x", ("route", "result"))
    hit = plain.labels("/a", "hit")
    assert plain.labels("/a", "hit") is hit  # one child per label values
    for route, result, n in [("/a", "hit", 3), ("/a", "miss", 1), ("/b/{slug}", "hit", 2)]:
        for _ in range(n):
            (hit if (route, result) == ("/a", "hit") else plain.labels(route, result)).inc()
            counter.labels(route, result).inc()
    ours_samples = {k: v for k, v in samples(ours.render()[0]).items() if k[0].startswith("indexium_svc_cache")}
    assert ours_samples == samples(generate_latest(reference))
    with pytest.raises(ValueError):
        plain.labels("/a")
