"""The client's metrics, registered on the calling service's registry.

Names: ``indexium_<service>_<prefix>api_requests_total`` and friends; the GitHub role
uses no prefix (``indexium_github_api_requests_total``), ingest ``github_``. Labels are
bounded: an operation name chosen in code, a status class, a credential kind.
"""

from __future__ import annotations

from indexium_platform.metrics import ServiceMetrics


class ClientMetrics:
    def __init__(self, base: ServiceMetrics, prefix: str = ""):
        # status: 2xx | 304 | 401 | 403 | 404 | 422 | 429 | 4xx | 5xx | error
        self.requests = base.counter(
            f"{prefix}api_requests_total", "GitHub API requests by operation and status class.",
            ("op", "status"),
        )
        # auth: app | installation (the last value GitHub reported for that kind of credential)
        self.remaining = base.gauge(
            f"{prefix}rate_limit_remaining", "Remaining GitHub API quota, as last reported.", ("auth",)
        )
        self.limit = base.gauge(
            f"{prefix}rate_limit_limit", "GitHub API quota per hour, as last reported.", ("auth",)
        )
        # reason: primary | reserve | secondary | retry_after
        self.waits = base.counter(
            f"{prefix}rate_limit_waits_total", "Times a request waited for GitHub's quota.", ("reason",)
        )
        self.wait_seconds = base.counter(
            f"{prefix}rate_limit_wait_seconds_total", "Seconds spent waiting for GitHub's quota."
        )
        self.tokens = base.counter(f"{prefix}installation_tokens_minted_total",
                                   "Installation access tokens minted.")


def status_class(status: int) -> str:
    if status == 0:
        return "error"
    if 200 <= status < 300:
        return "2xx"
    if status in (304, 401, 403, 404, 422, 429):
        return str(status)
    return "4xx" if status < 500 else "5xx"
