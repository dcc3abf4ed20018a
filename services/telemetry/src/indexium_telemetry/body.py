"""Read a ping body: plain or gzip JSON, never more than the limit *after* inflating.

aiohttp's own request decompression is switched off for this app (see app.py), so
the bytes here are what the client sent and this module owns the whole policy:
one gzip layer at most, inflated incrementally with a hard output cap (a gzip bomb
costs us at most ``limit`` bytes of output), truncated or trailing data refused.
"""

from __future__ import annotations

import zlib

from aiohttp import web

from indexium_platform.web import UNREADABLE_BODY, ApiError, unreadable_body

_READ_CHUNK = 16 * 1024
# Deflate expands at most ~1032:1, but a valid compressed ping is never bigger than the
# plain limit plus gzip framing, so the compressed size is capped at the same limit.
_GZIP = 16 + zlib.MAX_WBITS


def encoding_of(request: web.Request) -> str:
    """'identity' or 'gzip'; anything else (br, deflate, 'gzip, gzip', ...) is a 415."""
    raw = request.headers.getall("Content-Encoding", [])
    layers = [p.strip().lower() for value in raw for p in value.split(",") if p.strip()]
    layers = [p for p in layers if p != "identity"]
    if not layers:
        return "identity"
    if layers == ["gzip"] or layers == ["x-gzip"]:
        return "gzip"
    raise ApiError(415, "unsupported_encoding",
                   "Content-Encoding must be gzip (one layer) or absent.")


def check_content_type(request: web.Request) -> None:
    # Absent or octet-stream is taken as JSON (HTTP libraries add the latter to raw bytes).
    ctype = request.headers.get("Content-Type")
    # The raw media type: aiohttp reads an unparsable header (";;;") as octet-stream.
    if ctype is not None and ctype.split(";", 1)[0].strip().lower() not in ("application/json",
                                                                           "application/octet-stream"):
        raise ApiError(415, "unsupported_media_type", "Content-Type must be application/json.")


def _too_large(limit: int) -> ApiError:
    return ApiError(413, "payload_too_large", f"A ping is limited to {limit} bytes of JSON.")


def _inflate(inflater, data: bytes, out: bytearray, limit: int) -> None:
    while data:
        if inflater.eof:
            raise ApiError(400, "bad_gzip", "Data follows the end of the gzip stream.")
        try:
            # max_length caps this call's output at one byte past the limit (never 0: unlimited).
            out += inflater.decompress(data, limit - len(out) + 1)
        except zlib.error:
            raise ApiError(400, "bad_gzip", "The gzip body is corrupt.") from None
        if len(out) > limit:
            raise _too_large(limit)
        # What the cap left unread, then anything after the end of the gzip member.
        data = inflater.unconsumed_tail or inflater.unused_data


async def read_ping_body(request: web.Request, limit: int) -> bytes:
    encoding = encoding_of(request)
    check_content_type(request)
    if request.content_length is not None and request.content_length > limit:
        raise _too_large(limit)
    inflater = zlib.decompressobj(_GZIP) if encoding == "gzip" else None
    received = 0
    out = bytearray()
    try:
        async for chunk in request.content.iter_chunked(_READ_CHUNK):
            received += len(chunk)
            if received > limit:
                raise _too_large(limit)
            if inflater is None:
                out += chunk
                continue
            _inflate(inflater, chunk, out, limit)
    except UNREADABLE_BODY:  # a broken chunked encoding, say
        raise unreadable_body(request, "could not be read") from None
    if inflater is not None and not inflater.eof:
        raise ApiError(400, "bad_gzip", "The gzip body is truncated.")
    return bytes(out)
