"""structlog configured once: JSON in production, pretty on a TTY.

Our own log calls go straight through structlog (a filtering bound logger writing
bytes). stdlib loggers (aiohttp, asyncpg, nats) are routed through the same processors
so every line has one shape. Context bound with ``bind_contextvars`` (request or message
ids) lands on every line logged while handling that request/message.

The canonical line of every request (:func:`canonical`) is the hottest line there is: in
JSON mode it is written by :class:`Canonical` without structlog's bound-logger machinery,
as the same JSON object structlog would write (same keys, bound context merged), in about
7 µs instead of 19 µs per line (measured on the reference machine); in console mode it
goes through structlog like any other line. Inside a running event loop those lines are
written together once per loop iteration (one write system call for every request a busy
iteration finished, instead of one each); any other line flushes them first, so the order
of lines is kept, and a process exiting normally flushes what is left. An HTTP request's line
(:meth:`Canonical.request`) is held as its parts (a snapshot of the context, the time) and
formatted only then, all of an iteration's lines in one loop: about 1 µs of the request's own
path instead of 2-4 µs on a loaded 2-core machine (2026-12-01).
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import datetime
import logging
import re
import sys
import time
from typing import BinaryIO, TextIO

import msgspec

# structlog imports its dev console (structlog.dev) whatever the format, and that imports `rich`
# when it is installed (a dev dependency here, not in the image): ~0.1-0.2 s of every process's
# start for tracebacks only the console renderer on a terminal shows. A process whose standard
# error is not a terminal (a service under `make run`, a replica) imports structlog without it;
# `rich` stays importable for whatever else wants it.
if "rich" not in sys.modules and not sys.stderr.isatty():
    sys.modules["rich"] = None  # type: ignore[assignment]  # (an ImportError for `import rich`)
    try:
        import structlog
    finally:
        del sys.modules["rich"]
else:
    import structlog

_json = msgspec.json.Encoder(enc_hook=repr)


def encode_line(fields: dict) -> bytes:
    """One JSON object; text that is not valid Unicode (a header aiohttp decoded with
    surrogates) is written with escapes instead of failing the line."""
    try:
        return _json.encode(fields)
    except UnicodeEncodeError:
        return _json.encode({k: _escaped(v) for k, v in fields.items()})


def _escaped(value):
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {k: _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escaped(v) for v in value]
    return value


# Canonical lines held for one loop iteration at most; a burst beyond this is written at once.
PENDING_MAX = 256


class _FastJson:
    """Where canonical lines go in JSON mode (None: console mode, or INFO filtered out)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self._second = -1
        self._prefix = ""
        self._prefix_bytes = b""
        # Lines to write, and request lines as their parts (see Canonical.request).
        self._pending: list[bytes | tuple] = []
        self._scheduled = False

    def timestamp(self) -> str:
        """TimeStamper(fmt="iso", utc=True)'s format, the date part formatted once a second."""
        now = time.time()
        second = int(now)
        if second != self._second:
            self._new_second(second)
        return f"{self._prefix}{int((now - second) * 1_000_000):06d}Z"

    def _new_second(self, second: int) -> None:
        self._prefix = datetime.datetime.fromtimestamp(second, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        self._prefix_bytes = self._prefix.encode()
        self._second = second

    def write(self, fields: dict) -> None:
        self.write_line(encode_line(fields) + b"\n")

    def write_line(self, line: bytes | tuple) -> None:
        """Hold a line (or a request line's parts, :meth:`Canonical.request`) until the held
        lines are written."""
        self._pending.append(line)
        if not self._scheduled or len(self._pending) >= PENDING_MAX:
            self.schedule()

    def schedule(self) -> None:
        """After a line was held: write the held lines at the end of this loop iteration, or
        now when there are too many of them or no event loop runs in this thread."""
        if self._scheduled:  # (and PENDING_MAX reached)
            self.flush()
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop in this thread: nothing would flush it later
            self.flush()
            return
        loop.call_soon(self.flush)
        self._scheduled = True

    def flush(self) -> None:
        self._scheduled = False
        if self._pending:
            held, self._pending = self._pending, []
            lines = []
            known = _context_members()
            encode = _json.encode
            for item in held:
                if type(item) is bytes:
                    lines.append(item)
                    continue
                # A request line held as its parts (Canonical.request): formatted here, all of a
                # loop iteration's together, off the request's own path.
                head, duration_ms, tail, context, now = item
                second = int(now)
                if second != self._second:
                    self._new_second(second)
                bound = _context_json(context, known)
                lines.append(b'%s%s%s%s,"level":"info","timestamp":"%s%06dZ"}\n' % (
                    head, encode(duration_ms), tail, bound, self._prefix_bytes,
                    int((now - second) * 1_000_000)))
            self.stream.write(b"".join(lines))
            self.stream.flush()


class _AfterCanonical:
    """The binary stream other JSON lines are written to: held canonical lines go first."""

    def __init__(self, fast: _FastJson) -> None:
        self._fast = fast
        self._stream = fast.stream

    def write(self, data: bytes) -> None:
        self._fast.flush()
        self._stream.write(data)

    def flush(self) -> None:
        self._stream.flush()


class _Handler(logging.StreamHandler):
    """stdlib lines (aiohttp, asyncpg, nats) after any held canonical line, too."""

    def emit(self, record: logging.LogRecord) -> None:
        fast = _fast
        if fast is not None:
            fast.flush()
        super().emit(record)


def flush() -> None:
    """Write the canonical lines still held (at exit; tests reading the stream mid-loop)."""
    if _fast is not None:
        _fast.flush()


atexit.register(flush)


_fast: _FastJson | None = None

# A peer address as aiohttp prints one (not a time of day such as 10:27:37).
_ADDRESS = re.compile(
    r"\b(?:\d{1,3}\.){3}\d{1,3}\b"  # IPv4
    r"|(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"  # IPv6, full
    r"|[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{1,4})*::(?:[0-9a-fA-F]{1,4}:)*[0-9a-fA-F]{0,4})(?![\w:])"  # with ::
)


class _NoClientAddresses(logging.Filter):
    """aiohttp's own lines name the client ("Error handling request from 203.0.113.9", for a
    malformed request): the address is masked before any handler sees the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a record whose arguments do not format: the handler reports it
            return True
        masked = _ADDRESS.sub("<address>", message)
        if masked != message:
            record.msg, record.args = masked, ()
        return True


# Keys the canonical line sets itself: bound context never replaces them (structlog's
# merge_contextvars uses setdefault; add_log_level and TimeStamper overwrite).
_OWN_KEYS = frozenset({"method", "route", "status", "duration_ms", "event", "logger_name", "level", "timestamp"})
_HEADS_MAX = 1024  # (method, route, status) prefixes kept; methods are client-chosen tokens


def _bound_context() -> dict:
    """structlog's bound context variables, as merge_contextvars would merge them: read from
    structlog's own registry of variables (a handful) rather than by walking every variable
    of the context (copy_context), which cost more than the rest of the line."""
    registry = getattr(structlog.contextvars, "_CONTEXT_VARS", None)
    if registry is None:  # a structlog without that registry: its public function
        return structlog.contextvars.get_contextvars()
    out = {}
    for name, var in tuple(registry.items()):
        value = var.get(Ellipsis)
        if value is not Ellipsis:
            out[name[_PREFIX_LEN:]] = value
    return out


_PREFIX_LEN = len(structlog.contextvars.STRUCTLOG_KEY_PREFIX)


def _context_json(context: contextvars.Context, known: tuple | None) -> bytes:
    """The context's bound variables as the members of a JSON object, each after a comma (b""
    if none); keys the canonical line sets itself are left out. ``known``: _context_members(),
    read once for all the lines of a flush (None: a structlog that keeps no registry)."""
    if known is None:
        bound = {k: v for k, v in context.run(_bound_context).items() if k not in _OWN_KEYS}
        return b"," + encode_line(bound)[1:-1] if bound else b""
    parts = []
    get = context.get
    for var, key, last in known:
        value = get(var, Ellipsis)
        if value is Ellipsis:
            continue
        if value is last[0]:  # the same string as on the line before (a service name): its member
            parts.append(last[1])
            continue
        try:
            member = key + _json.encode(value)
        except UnicodeEncodeError:
            member = key + _json.encode(_escaped(value))
        if type(value) is str:  # immutable: safe to reuse while the variable holds this object
            last[0], last[1] = value, member
        parts.append(member)
    return b"".join(parts)


# structlog's own registry of the context variables bind_contextvars creates (None: a structlog
# without one). The same dict for the life of the process: it only ever grows.
_REGISTRY: dict | None = getattr(structlog.contextvars, "_CONTEXT_VARS", None)


# structlog's registry of context variables only grows (one variable per key ever bound):
# (variable, b',"key":', [last value, its member]) for each, rebuilt when it has grown.
_KNOWN: list = [0, ()]


def _known_vars(registry: dict) -> tuple:
    if _KNOWN[0] != len(registry):
        known = []
        for name, var in tuple(registry.items()):
            short = name[_PREFIX_LEN:]
            if short not in _OWN_KEYS:
                known.append((var, b"," + _json.encode(short) + b":", [Ellipsis, b""]))
        _KNOWN[0], _KNOWN[1] = len(registry), tuple(known)
    return _KNOWN[1]


def _context_members() -> tuple | None:
    """(variable, b',"key":', [last value, its member]) for every variable structlog has bound,
    which :func:`_context_json` walks; None with a structlog that keeps no registry."""
    registry = _REGISTRY
    if registry is None:
        return None
    return _KNOWN[1] if _KNOWN[0] == len(registry) else _known_vars(registry)


def context_var(key: str) -> contextvars.ContextVar | None:
    """The context variable ``bind_contextvars(key=...)`` sets, for a caller that binds one key
    around every request: ``var.set(value)`` / ``var.reset(token)`` cost a fraction of
    bind_contextvars / unbind_contextvars. None with a structlog that keeps no such registry."""
    registry = getattr(structlog.contextvars, "_CONTEXT_VARS", None)
    if registry is None:
        return None
    name = structlog.contextvars.STRUCTLOG_KEY_PREFIX + key
    if name not in registry:
        structlog.contextvars.reset_contextvars(**structlog.contextvars.bind_contextvars(**{key: Ellipsis}))
    return registry.get(name)


class Canonical:
    """The one line per request or message: ``canonical(__name__).info("request", ...)``, or
    :meth:`request` for an HTTP request's line."""

    __slots__ = ("_name", "_log", "_heads", "_tail")

    def __init__(self, name: str) -> None:
        self._name = name
        self._log = get(name)
        self._heads: dict[tuple[str, str, int], bytes] = {}
        self._tail = b',"event":"request","logger_name":' + _json.encode(name)

    def info(self, event: str, **fields) -> None:
        fast = _fast
        if fast is None:
            self._log.info(event, **fields)  # console mode, or filtered out by the level
            return
        fields["event"] = event
        fields["logger_name"] = self._name
        structlog.contextvars.merge_contextvars(None, "info", fields)
        fields["level"] = "info"
        fields["timestamp"] = fast.timestamp()
        fast.write(fields)

    def request(self, method: str, route: str, status: int, duration_ms: float) -> None:
        """``info("request", method=..., route=..., status=..., duration_ms=...)``, the same
        JSON object. Every request pays for this, so it only holds the line's parts: the fixed
        start of the line for this method, route and status (encoded once), the duration, the
        context (a snapshot: ``copy_context`` is O(1)) and the time. They are formatted when the
        held lines are written, once per loop iteration, in one go (:meth:`_FastJson.flush`)."""
        fast = _fast
        if fast is None:
            self._log.info("request", method=method, route=route, status=status, duration_ms=duration_ms)
            return
        head = self._heads.get((method, route, status))
        if head is None:
            if len(self._heads) >= _HEADS_MAX:
                self._heads.clear()
            head = self._heads[(method, route, status)] = (
                encode_line({"method": method, "route": route, "status": status})[:-1] + b',"duration_ms":')
        fast.write_line((head, duration_ms, self._tail, contextvars.copy_context(), time.time()))


def canonical(name: str) -> Canonical:
    return Canonical(name)


def _render_json(_, __, event_dict: dict) -> bytes:
    return encode_line(event_dict)


def configure(service: str, *, fmt: str = "auto", level: str = "info", stream: TextIO | None = None) -> None:
    """Logs go to ``stream`` (standard error unless given)."""
    global _fast
    flush()  # lines held for the stream configured before
    out = sys.stderr if stream is None else stream
    use_json = fmt == "json" or (fmt == "auto" and not out.isatty())
    numeric = logging.getLevelName(level.upper())
    _fast = _FastJson(out.buffer) if use_json and numeric <= logging.INFO else None
    shared: list = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if use_json:
        renderer = _render_json
        factory = structlog.BytesLoggerFactory(_AfterCanonical(_fast) if _fast is not None else out.buffer)
        # No locals in tracebacks: they could carry secrets or request data into the logs.
        exc = [structlog.processors.ExceptionRenderer(
            structlog.tracebacks.ExceptionDictTransformer(show_locals=False))]
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=out.isatty())
        factory, exc = structlog.PrintLoggerFactory(out), []
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
    handler = _Handler(out)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # aiohttp's access log writes the client address; we log our own canonical line instead.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    for name in ("aiohttp.server", "aiohttp.web", "aiohttp.internal"):
        target = logging.getLogger(name)
        if not any(isinstance(f, _NoClientAddresses) for f in target.filters):
            target.addFilter(_NoClientAddresses())
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(service=service)


def get(name: str | None = None):
    return structlog.get_logger(logger_name=name) if name else structlog.get_logger()
