"""The canonical line's fast JSON path writes what structlog would write."""

from __future__ import annotations

import asyncio
import calendar
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


def test_request_line_is_the_info_line_assembled_from_parts(stderr):
    raw, stream = stderr
    logs.configure("svc", fmt="json", level="info", stream=stream)
    structlog.contextvars.bind_contextvars(request_id='r-"2"\\', stream_seq=7, status="bound",
                                           github_event="a\udcff")
    line = logs.canonical("indexium_platform.web")
    for _ in range(2):  # the second time from the cached start of the line
        line.info("request", method="GET", route="/api/v1/mods", status=200, duration_ms=0.35)
        line.request("GET", "/api/v1/mods", 200, 0.35)
    line.request("POST", "/x", 404, 12.0)
    info, fast, info2, fast2, other = lines(raw)
    for a, b in ((info, fast), (info2, fast2)):
        assert a.pop("timestamp")[:16] == b.pop("timestamp")[:16]
        assert a == b == {"method": "GET", "route": "/api/v1/mods", "status": 200, "duration_ms": 0.35,
                          "event": "request", "logger_name": "indexium_platform.web", "service": "svc",
                          "request_id": 'r-"2"\\', "stream_seq": 7, "github_event": "a\\udcff",
                          "level": "info"}
    assert (other["method"], other["route"], other["status"], other["duration_ms"]) == ("POST", "/x", 404, 12.0)
    structlog.contextvars.unbind_contextvars("request_id", "stream_seq", "status", "github_event")
    line.request("GET", "/y", 200, 1.5)
    assert set(lines(raw)[-1]) == {"method", "route", "status", "duration_ms", "event", "logger_name", "service",
                                   "level", "timestamp"}


def test_request_line_at_warning_level_or_in_console_mode(stderr):
    raw, stream = stderr
    logs.configure("svc", fmt="json", level="warning", stream=stream)
    logs.canonical("m").request("GET", "/x", 200, 1.0)
    assert raw.getvalue() == b""
    logs.configure("svc", fmt="console", level="info", stream=stream)
    logs.canonical("m").request("GET", "/x", 201, 1.0)
    assert "status=201" in raw.getvalue().decode()


async def test_lines_in_one_loop_iteration_are_written_together_and_in_order(stderr):
    raw, stream = stderr
    logs.configure("svc", fmt="json", level="info", stream=stream)
    writes = []
    real_write = raw.write
    raw.write = lambda data: writes.append(data) or real_write(data)
    line = logs.canonical("m")
    line.request("GET", "/a", 200, 1.0)
    line.request("GET", "/b", 200, 1.0)
    assert raw.getvalue() == b""  # held until the loop iteration ends
    logs.get("m").warning("other")  # any other line writes the held ones first
    line.request("GET", "/c", 200, 1.0)
    assert [entry.get("route", entry["event"]) for entry in lines(raw)] == ["/a", "/b", "other"]
    await asyncio.sleep(0)
    assert [entry.get("route", entry["event"]) for entry in lines(raw)] == ["/a", "/b", "other", "/c"]
    assert len(writes) == 3  # /a and /b in one write
    for i in range(logs.PENDING_MAX + 1):  # a burst is not held without bound
        line.request("GET", f"/{i}", 200, 1.0)
    assert len(lines(raw)) == 4 + logs.PENDING_MAX
    logs.flush()
    assert len(lines(raw)) == 5 + logs.PENDING_MAX


async def test_a_held_request_line_has_the_context_and_time_of_its_request(stderr):
    """Request lines are held as their parts and formatted when written: what is bound and the
    time must be the request's, not the write's."""
    raw, stream = stderr
    logs.configure("svc", fmt="json", level="info", stream=stream)
    line = logs.canonical("m")
    structlog.contextvars.bind_contextvars(request_id="first")
    line.request("GET", "/a", 200, 1.25)
    structlog.contextvars.bind_contextvars(request_id="second", extra=3)
    before_second = time.time()
    line.request("GET", "/b", 201, 2.0)
    structlog.contextvars.unbind_contextvars("request_id", "extra")
    time.sleep(0.01)
    written_after = time.time()
    assert raw.getvalue() == b""  # both still held
    await asyncio.sleep(0)
    first, second = lines(raw)
    assert first["request_id"] == "first" and "extra" not in first and first["duration_ms"] == 1.25
    assert second["request_id"] == "second" and second["extra"] == 3 and second["status"] == 201
    stamp = time.strptime(second["timestamp"][:19], "%Y-%m-%dT%H:%M:%S")
    micros = int(second["timestamp"][20:26])
    when = calendar.timegm(stamp) + micros / 1e6
    assert before_second - 0.001 <= when < written_after - 0.005  # the request's time, not the write's
