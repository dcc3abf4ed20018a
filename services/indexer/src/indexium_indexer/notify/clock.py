"""The notify role's clock: wall time, or (tests: INDEXIUM_NOTIFY_CLOCK_SPEED) wall time run
faster from the moment the process started. Every time that decides a delivery's fate — due,
deadline, failing for 24 hours — is this clock's; durations of the process itself (POST
timeout, lease, polling) are real seconds, turned into the clock's by :meth:`span`."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta


class Clock:
    def __init__(self, speed: float = 1.0):
        self.speed = speed
        self._wall0, self._mono0 = time.time(), time.monotonic()

    def now(self) -> datetime:
        if self.speed == 1.0:
            return datetime.now(UTC)
        return datetime.fromtimestamp(self._wall0 + (time.monotonic() - self._mono0) * self.speed, UTC)

    def span(self, real_seconds: float) -> timedelta:
        """A real duration (a lease) as this clock measures it."""
        return timedelta(seconds=real_seconds * self.speed)


def hour_of(moment: datetime) -> datetime:
    """The UTC hour a moment falls in: the bucket of the per-user hourly delivery limit."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
