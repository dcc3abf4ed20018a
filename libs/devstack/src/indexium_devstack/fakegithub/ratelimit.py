"""Primary ("core") and secondary rate limits, as GitHub's REST API reports them."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

DOCS_PRIMARY = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
    "#about-primary-rate-limits"
)
DOCS_SECONDARY = (
    "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
    "#about-secondary-rate-limits"
)


@dataclass
class RateLimiter:
    """One ``core`` bucket shared by every caller of the fake API.

    ``remaining`` goes back to ``limit`` once ``reset_at`` (epoch seconds) has passed,
    with a fresh window of ``window`` seconds.
    """

    limit: int = 5000
    window: float = 3600.0
    clock: object = time.time
    remaining: int = field(init=False)
    reset_at: float = field(init=False)
    exceeded_status: int = 403
    secondary_pending: int = 0
    secondary_retry_after: int = 60
    secondary_status: int = 403

    def __post_init__(self) -> None:
        self.remaining = self.limit
        self.reset_at = self.clock() + self.window

    def set(
        self,
        limit: int,
        remaining: int | None = None,
        reset_in_seconds: float = 3600.0,
        *,
        status: int | None = None,
    ) -> None:
        self.limit = limit
        self.remaining = limit if remaining is None else remaining
        self.window = max(reset_in_seconds, 1.0)
        self.reset_at = self.clock() + reset_in_seconds
        if status is not None:
            self.exceeded_status = status

    def _roll(self) -> None:
        if self.clock() >= self.reset_at:
            self.remaining = self.limit
            self.reset_at = self.clock() + self.window

    @property
    def exhausted(self) -> bool:
        self._roll()
        return self.remaining <= 0

    def consume(self) -> None:
        self._roll()
        if self.remaining > 0:
            self.remaining -= 1

    def take_secondary(self) -> bool:
        if self.secondary_pending > 0:
            self.secondary_pending -= 1
            return True
        return False

    def headers(self) -> dict[str, str]:
        self._roll()
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.remaining, 0)),
            "X-RateLimit-Used": str(self.limit - max(self.remaining, 0)),
            "X-RateLimit-Reset": str(int(math.ceil(self.reset_at))),
            "X-RateLimit-Resource": "core",
        }

    def snapshot(self) -> dict:
        self._roll()
        return {
            "limit": self.limit,
            "remaining": max(self.remaining, 0),
            "reset": int(math.ceil(self.reset_at)),
            "used": self.limit - max(self.remaining, 0),
            "resource": "core",
        }
