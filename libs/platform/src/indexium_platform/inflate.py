"""Inflate a request body ourselves: one gzip or deflate layer, bounded output, truncation refused.

aiohttp's own request decompression is off in every service (``base_app``): its decoder
accepts a gzip stream whose trailer (CRC-32 and length) is cut off, answers an encoding
it cannot decode (``br`` without Brotli, ``zstd``) with its own plain-text 400 before any
handler runs, and inflates before a handler could check anything (a webhook signature,
say). Here inflation is incremental with a hard output cap, so a gzip bomb costs at most
``limit`` bytes of output, and a stream must end where its framing says it ends.
"""

from __future__ import annotations

import zlib

_GZIP = 16 + zlib.MAX_WBITS
_ZLIB = zlib.MAX_WBITS
_RAW_DEFLATE = -zlib.MAX_WBITS

# Content-Encoding values we inflate, by the layer name as sent.
ENCODINGS = {"gzip": "gzip", "x-gzip": "gzip", "deflate": "deflate"}


class BadStream(Exception):
    """The body does not inflate: corrupt, truncated, or followed by more data."""


class TooLarge(Exception):
    """The inflated body would be larger than the limit."""


def layers(values: list[str]) -> list[str]:
    """The Content-Encoding layers as sent (lower-cased), ``identity`` left out."""
    found = [p.strip().lower() for value in values for p in value.split(",")]
    return [p for p in found if p and p != "identity"]


class Inflater:
    """Feed compressed chunks, then :meth:`finish`; ``limit`` caps the output in bytes."""

    def __init__(self, encoding: str, limit: int):
        if encoding not in ("gzip", "deflate"):
            raise ValueError(f"not an encoding we inflate: {encoding!r}")
        self._encoding, self._limit = encoding, limit
        self._decoder = zlib.decompressobj(_GZIP) if encoding == "gzip" else None
        self._out = bytearray()

    def feed(self, data: bytes) -> None:
        if self._decoder is None:
            # RFC 9110's deflate is the zlib format, but some clients send raw deflate (as
            # aiohttp's own decoder allows): a zlib stream starts with CM = 8 in its low nibble.
            self._decoder = zlib.decompressobj(_ZLIB if data[:1] and data[0] & 0x0F == 8 else _RAW_DEFLATE)
        decoder = self._decoder
        while data:
            if decoder.eof:
                raise BadStream("has data after the end of its compressed stream")
            try:
                # max_length caps this call's output at one byte past the limit (never 0: unlimited).
                self._out += decoder.decompress(data, self._limit - len(self._out) + 1)
            except zlib.error:
                raise BadStream(f"is not valid {self._encoding} data") from None
            if len(self._out) > self._limit:
                raise TooLarge(self._limit)
            # What the cap left unread, then anything after the end of the stream.
            data = decoder.unconsumed_tail or decoder.unused_data

    def finish(self) -> bytes:
        """The whole inflated body; a stream that did not reach its end is truncated."""
        if self._decoder is None or not self._decoder.eof:
            raise BadStream(f"is truncated (the {self._encoding} stream does not end)")
        return bytes(self._out)
