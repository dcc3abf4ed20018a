"""``POST /csp-report``: browsers report what our Content-Security-Policy blocked (security.py).

A violation on our pages means someone tried to run something there (or a browser extension
injected it): it is counted in ``indexium_api_csp_violations_total{directive}``, the directive
from a fixed set, and logged without the report's free text. Anyone can post here, so the route
is bounded: a body of at most :data:`BODY_MAX` bytes, at most :data:`REPORTS_PER_BODY` reports
read from it, and a token bucket for the whole replica (:data:`RATE_PER_S`, burst
:data:`BURST`) beyond which a report is answered 429 unread and counted as ``limited``, so a
flood costs a counter increment per request and cannot grow the log or the label set.

Both formats are read: ``report-uri``'s ``application/csp-report`` (one
``{"csp-report": {...}}``) and the Reporting API's ``application/reports+json`` (a list of
``{"type": "csp-violation", "body": {...}}``).
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import msgspec
from aiohttp import web

from indexium_platform import logs
from indexium_platform.web import ApiError, BodyError, read_request_body

from ..core.state import API
from .security import REPORT_PATH

log = logs.get(__name__)
BODY_MAX = 64 * 1024  # a report is ~1 KiB; the Reporting API batches a few
REPORTS_PER_BODY = 20
RATE_PER_S = 20.0
BURST = 100.0
# The label values: CSP3's directives that can be violated on our pages, and "other".
DIRECTIVES = frozenset({
    "default-src", "script-src", "script-src-elem", "script-src-attr", "style-src", "style-src-elem",
    "style-src-attr", "img-src", "connect-src", "font-src", "media-src", "object-src", "frame-src",
    "child-src", "worker-src", "manifest-src", "form-action", "frame-ancestors", "base-uri",
    "navigate-to", "require-trusted-types-for", "trusted-types",
})
_TYPES = ("application/csp-report", "application/reports+json", "application/json")
_decode = msgspec.json.Decoder()


class Bucket:
    """A token bucket: ``take()`` is True while the rate holds (monotonic clock)."""

    def __init__(self, rate_per_s: float, burst: float, clock=time.monotonic):
        self.rate, self.burst, self.clock = rate_per_s, burst, clock
        self.tokens, self.at = burst, clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


BUCKET = web.AppKey("csp_report_bucket", Bucket)


def directive_of(body: object) -> str | None:
    """The violated directive of one report body (either format), a label value; None when
    the body is not a report."""
    if not isinstance(body, dict):
        return None
    name = body.get("effectiveDirective") or body.get("effective-directive") or body.get("violated-directive")
    if not isinstance(name, str):
        return None
    name = name.strip().split(" ", 1)[0].lower()  # CSP2 browsers send the whole directive
    return name if name in DIRECTIVES else "other"


def bodies_of(document: object) -> list[object]:
    if isinstance(document, dict) and "csp-report" in document:
        return [document["csp-report"]]
    if isinstance(document, list):
        return [r.get("body") for r in document[:REPORTS_PER_BODY]
                if isinstance(r, dict) and r.get("type") == "csp-violation"]
    return []


def _blocked_kind(body: dict) -> str:
    """What was blocked, as a bounded word for the log (never the URL itself)."""
    blocked = body.get("blockedURL") or body.get("blocked-uri") or ""
    if not isinstance(blocked, str):
        return "other"
    if blocked in ("inline", "eval", "wasm-eval", "trusted-types-policy", "trusted-types-sink"):
        return blocked
    scheme = urlsplit(blocked[:64]).scheme.lower()
    return scheme if scheme in ("http", "https", "data", "blob", "javascript") else "other"


def _page_of(body: dict) -> str:
    document = body.get("documentURL") or body.get("document-uri") or ""
    return urlsplit(document).path[:128] if isinstance(document, str) else ""


async def report(request: web.Request) -> web.Response:
    metrics = request.app[API].metrics
    if not request.app[BUCKET].take():
        metrics.csp_reports.labels("limited").inc()
        raise ApiError(429, "rate_limited", "Too many reports just now; retry in 1 s.", headers={"Retry-After": "1"})
    if request.content_type not in _TYPES:
        metrics.csp_reports.labels("malformed").inc()
        raise ApiError(415, "unsupported_media_type", f"Content-Type must be one of: {', '.join(_TYPES)}.")
    try:
        raw = await read_request_body(request, limit=BODY_MAX)
    except BodyError as exc:
        metrics.csp_reports.labels("too_large" if exc.reason == "too_large" else "malformed").inc()
        raise
    try:
        bodies = bodies_of(_decode.decode(raw))
    except msgspec.DecodeError:
        bodies = []
    counted = 0
    for body in bodies:
        directive = directive_of(body)
        if directive is None:
            continue
        counted += 1
        metrics.csp_violations.labels(directive).inc()
        log.info("csp_violation", directive=directive, blocked=_blocked_kind(body), page=_page_of(body),
                 disposition=str(body.get("disposition", "enforce"))[:16])
    metrics.csp_reports.labels("counted" if counted else "malformed").inc()
    if not counted:
        raise ApiError(400, "invalid_body", "The body holds no CSP violation report.")
    return web.Response(status=204)


def setup(app: web.Application) -> None:
    app[BUCKET] = Bucket(RATE_PER_S, BURST)
    # Not added with add_page (core/site.py): its errors are the JSON envelope, not pages.
    app.router.add_post(REPORT_PATH, report, name="csp-report")
