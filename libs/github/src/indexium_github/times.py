"""GitHub's timestamps (ISO 8601 with a ``Z``), as aware datetimes."""

from __future__ import annotations

from datetime import datetime


def parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None
