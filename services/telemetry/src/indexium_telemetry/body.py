"""Read a ping body: plain or gzip JSON, never more than the limit *after* inflating.

The platform's ``read_request_body`` reads and inflates it, as it does every POST body of
every service (one gzip layer at most, bounded output, truncated or trailing data refused,
the whole body within ``INDEXIUM_HTTP_BODY_TIMEOUT_SECONDS``); this module only answers in
telemetry's own error codes, which clients of the ping protocol already know
(docs/telemetry.md): ``unsupported_encoding``, ``bad_gzip``, a 413 that speaks of pings.
"""

from __future__ import annotations

from aiohttp import web

from indexium_platform.web import ApiError, BodyError, read_request_body


def check_content_type(request: web.Request) -> None:
    # Absent or octet-stream is taken as JSON (HTTP libraries add the latter to raw bytes).
    ctype = request.headers.get("Content-Type")
    # The raw media type: aiohttp reads an unparsable header (";;;") as octet-stream.
    if ctype is not None and ctype.split(";", 1)[0].strip().lower() not in ("application/json",
                                                                           "application/octet-stream"):
        raise ApiError(415, "unsupported_media_type", "Content-Type must be application/json.")


def _in_ping_terms(exc: BodyError, limit: int) -> ApiError:
    if exc.reason == "encoding":
        return ApiError(415, "unsupported_encoding", "Content-Encoding must be gzip (one layer) or absent.")
    if exc.reason == "too_large":
        return ApiError(413, "payload_too_large", f"A ping is limited to {limit} bytes of JSON.")
    if exc.reason == "stream":
        return ApiError(400, "bad_gzip", f"The gzip body {exc.detail}.", close_connection=True)
    return exc  # request_timeout (408), invalid_body (400): the platform's codes, as everywhere


async def read_ping_body(request: web.Request, limit: int) -> bytes:
    check_content_type(request)
    try:
        return await read_request_body(request, limit, encodings=("gzip",))
    except BodyError as exc:
        raise _in_ping_terms(exc, limit) from None
