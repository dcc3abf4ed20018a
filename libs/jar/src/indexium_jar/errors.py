"""Typed failures of reading a jar, local or over HTTP.

Every failure the jar reader can produce is a :class:`JarReadError` carrying a stable
machine ``code`` and whether trying again later can help (``retryable``, with an
optional server-given ``retry_after`` in seconds). Callers map ``retryable`` to
"nak with delay" and everything else to "term + dead letter"; they never need to
catch ``struct.error``/``zlib.error``/``aiohttp`` exceptions themselves.
The message is safe to show (no URLs with signatures, no internal detail).
"""

from __future__ import annotations

from typing import ClassVar


class JarReadError(Exception):
    code: ClassVar[str] = "jar_read_error"
    default_retryable: ClassVar[bool] = False

    def __init__(
        self, message: str = "", *, retryable: bool | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message or self.code)
        self.message = message or self.code
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, retryable={self.retryable})"
        )


# --- the archive itself ---------------------------------------------------------------------


class CorruptZip(JarReadError):
    code = "corrupt_zip"


class NeedMoreBytes(CorruptZip):
    """The pure parser needs bytes ``[start, end)`` of the file that it was not given.

    A range reader catches it and fetches the missing part. It subclasses
    :class:`CorruptZip` because, when the parser already had the whole file, needing
    bytes that are not there means the archive points outside itself.
    """

    code = "need_more_bytes"

    def __init__(self, start: int, end: int) -> None:
        super().__init__(f"bytes {start}..{end} are needed")
        self.start = start
        self.end = end


class UnsupportedCompression(JarReadError):
    code = "unsupported_compression"


class EncryptedEntry(JarReadError):
    code = "encrypted_entry"


class EntryTooLarge(JarReadError):
    code = "entry_too_large"


class CrcMismatch(JarReadError):
    code = "crc_mismatch"


# --- fetching it ----------------------------------------------------------------------------


class DownloadHostNotAllowed(JarReadError):
    code = "download_host_not_allowed"


class AssetNotFound(JarReadError):
    code = "asset_not_found"


class AssetChanged(JarReadError):
    """The file changed between two requests (size or ETag differ); a fresh attempt may work."""

    code = "asset_changed"
    default_retryable = True


class RangeNotSupportedTooLarge(JarReadError):
    code = "range_not_supported_too_large"


class TooManyRedirects(JarReadError):
    code = "too_many_redirects"


class FetchLimitExceeded(JarReadError):
    code = "fetch_limit_exceeded"


class HttpError(JarReadError):
    """An HTTP status we cannot use. 5xx, 429 and 408 are worth retrying."""

    code = "http_error"

    def __init__(self, status: int, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(
            message or f"HTTP status {status}",
            retryable=status >= 500 or status in (408, 429),
            retry_after=retry_after,
        )
        self.status = status


class NetworkError(JarReadError):
    code = "network_error"
    default_retryable = True


class FetchTimeout(JarReadError):
    code = "timeout"
    default_retryable = True
