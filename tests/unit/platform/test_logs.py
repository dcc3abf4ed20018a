"""The canonical line's fast JSON path writes what structlog would write."""

from __future__ import annotations

import io
import json
import re
import time

import pytest
import structlog

from indexium_platform import logs


class _Stderr(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


@pytest.fixture
def stderr():
    """A non-TTY stream to configure logs with, and its bytes."""
    raw = io.BytesIO()
    yield raw, _Stderr(raw, encoding="utf-8", write_through=True)
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


def lines(raw: io.BytesIO) -> list[dict]:
    return [json.loads(line) for line in raw.getvalue().splitlines()]


def test_canonical_json_line_has_the_shape_of_a_structlog_line(stderr):
    raw, stream = stderr
    logs.configure("svc", fmt="auto", level="info", stream=stream)
    structlog.contextvars.bind_contextvars(request_id="r-1")
    logs.get("mod.a").info("request", route="/x", status=200)
    logs.canonical("mod.a").info("request", route="/x", status=200)
    via_structlog, fast = lines(raw)
    stamp = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
    assert stamp.match(fast["timestamp"]), fast["timestamp"]
    assert time.strftime("%Y-%m-%dT%H:%M", time.gmtime()) <= fast["timestamp"][:16]  # UTC, now
    assert fast.pop("timestamp")[:16] == via_structlog.pop("timestamp")[:16]
    assert fast == via_structlog == {"event": "request", "route": "/x", "status": 200, "level": "info",
                                     "service": "svc", "request_id": "r-1", "logger_name": "mod.a"}


def test_canonical_line_honours_the_level_and_the_console_format(stderr):
    raw, stream = stderr
    logs.configure("svc", fmt="json", level="warning", stream=stream)
    logs.canonical("m").info("request", status=200)
    assert raw.getvalue() == b""
    logs.configure("svc", fmt="console", level="info", stream=stream)
    logs.canonical("m").info("request", status=201)
    text = raw.getvalue().decode()
    assert "request" in text and "status=201" in text and not text.startswith("{")
