"""structlog configured once: JSON in production, pretty on a TTY.

Our own log calls go straight through structlog (a filtering bound logger writing
bytes), which costs a few microseconds per line: every request and message gets a
canonical line, so this is on the hot path. stdlib loggers (aiohttp, asyncpg, nats)
are routed through the same processors so every line has one shape. Context bound
with ``bind_contextvars`` (request or message ids) lands on every line logged while
handling that request/message.
"""

from __future__ import annotations

import logging
import sys

import msgspec
import structlog

_json = msgspec.json.Encoder()


def _render_json(_, __, event_dict: dict) -> bytes:
    return _json.encode(event_dict)


def configure(service: str, *, fmt: str = "auto", level: str = "info") -> None:
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    shared: list = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if use_json:
        renderer, factory = _render_json, structlog.BytesLoggerFactory(sys.stderr.buffer)
        # No locals in tracebacks: they could carry secrets or request data into the logs.
        exc = [structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False))]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
        factory, exc = structlog.PrintLoggerFactory(sys.stderr), []
    numeric = logging.getLevelName(level.upper())
    structlog.configure(
        processors=[*shared, structlog.processors.StackInfoRenderer(), *exc, renderer],
        logger_factory=factory,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        cache_logger_on_first_use=True,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer() if use_json else renderer,
        ],
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # aiohttp's access log writes the client address; we log our own canonical line instead.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(service=service)


def get(name: str | None = None):
    return structlog.get_logger(logger_name=name) if name else structlog.get_logger()
