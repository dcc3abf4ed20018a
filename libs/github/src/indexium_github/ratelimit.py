"""What GitHub's rate-limit headers say, and how long to wait. Pure; no I/O.

Primary limit: ``X-RateLimit-Remaining`` / ``X-RateLimit-Reset`` (epoch seconds) per
credential — the App's JWT has its own bucket, each installation token its own. When
the remaining quota is spent GitHub answers 403 (or 429) with remaining 0 until the reset.
Secondary limits (too many concurrent requests, too many mutations): 403/429 with a
``Retry-After``, or with neither header, in which case GitHub's advice is to wait at
least a minute and back off exponentially.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

RESET_SLACK_S = 1.0  # our clock and GitHub's disagree by up to a second or so
SECONDARY_BASE_S = 60.0
SECONDARY_MAX_S = 15 * 60.0


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


@dataclass
class Bucket:
    """The quota of one credential, as last reported by GitHub."""

    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None
    blocked_until: float = 0.0  # set by Retry-After and secondary limits
    secondary_strikes: int = 0

    def observe(self, headers: Mapping[str, str]) -> None:
        remaining = _int(headers.get("X-RateLimit-Remaining"))
        if remaining is None:
            return
        self.remaining = remaining
        self.limit = _int(headers.get("X-RateLimit-Limit")) or self.limit
        reset = _int(headers.get("X-RateLimit-Reset"))
        if reset is not None:
            self.reset_at = float(reset)

    def wait_before(self, now: float, reserve: int = 0) -> tuple[float, str]:
        """Seconds to wait before the next request may be sent, and why ("" = go now).

        ``reserve``: the caller leaves this much quota to others (background work keeps
        a reserve so webhook-driven work never finds the bucket empty).
        """
        if self.blocked_until > now:
            return self.blocked_until - now, "secondary"
        if (self.remaining is not None and self.remaining <= reserve
                and self.reset_at is not None and self.reset_at + RESET_SLACK_S > now):
            return self.reset_at + RESET_SLACK_S - now, "primary" if self.remaining <= 0 else "reserve"
        return 0.0, ""

    def after_success(self) -> None:
        self.secondary_strikes = 0


def limit_wait(status: int, headers: Mapping[str, str], message: str, now: float,
               bucket: Bucket) -> tuple[float, str] | None:
    """How long a 403/429 asks us to wait, or None when it is a plain refusal (permissions)."""
    if status not in (403, 429):
        return None
    retry_after = _int(headers.get("Retry-After"))
    if retry_after is not None:
        bucket.blocked_until = now + retry_after
        return float(retry_after), "secondary" if "secondary" in message.lower() else "retry_after"
    if headers.get("X-RateLimit-Remaining") == "0":
        bucket.observe(headers)
        reset = bucket.reset_at if bucket.reset_at is not None else now + SECONDARY_BASE_S
        return max(reset + RESET_SLACK_S - now, RESET_SLACK_S), "primary"
    if status == 429 or "rate limit" in message.lower():
        wait = min(SECONDARY_BASE_S * 2 ** bucket.secondary_strikes, SECONDARY_MAX_S)
        bucket.secondary_strikes += 1
        bucket.blocked_until = now + wait
        return wait, "secondary"
    return None
