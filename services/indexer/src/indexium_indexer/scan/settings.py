"""Scan-stage settings, decoded once at start-up."""

import msgspec

from indexium_platform.settings import Common

from indexium_github.assets import DOWNLOAD_HOSTS
from .rules import DEFAULT_THRESHOLD

MiB = 1024 * 1024


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8084, name="PORT")  # health, readiness and metrics only
    download_hosts: tuple[str, ...] = msgspec.field(default=DOWNLOAD_HOSTS, name="INDEXIUM_DOWNLOAD_HOSTS")
    # Largest file streamed; bigger ones fail the scan (and so are quarantined for review).
    max_bytes: int = msgspec.field(default=128 * MiB, name="INDEXIUM_SCAN_MAX_BYTES")
    # Files scanned at once by one process: each uses a parse thread and up to ~1 MiB in flight.
    concurrency: int = msgspec.field(default=2, name="INDEXIUM_SCAN_CONCURRENCY")
    max_attempts: int = msgspec.field(default=3, name="INDEXIUM_SCAN_MAX_ATTEMPTS")
    retry_base_s: float = msgspec.field(default=2.0, name="INDEXIUM_SCAN_RETRY_BASE_SECONDS")
    outage_retry_s: float = msgspec.field(default=5.0, name="INDEXIUM_SCAN_OUTAGE_RETRY_SECONDS")
    # Per request: connecting, and the longest pause between two body reads.
    http_timeout_s: float = msgspec.field(default=15.0, name="INDEXIUM_HTTP_TIMEOUT_SECONDS")
    threshold: int = msgspec.field(default=DEFAULT_THRESHOLD, name="INDEXIUM_SCAN_SUSPICIOUS_SCORE")
    max_nesting: int = msgspec.field(default=4, name="INDEXIUM_SCAN_MAX_NESTING")
    max_class_bytes: int = msgspec.field(default=8 * MiB, name="INDEXIUM_SCAN_MAX_CLASS_BYTES")
    max_inflated_bytes: int = msgspec.field(default=1024 * MiB, name="INDEXIUM_SCAN_MAX_INFLATED_BYTES")
    # Threads that inflate one window of classes (ScanLimits.inflate_threads): the parse thread
    # and helpers it starts for a window of many classes. 1: the parse thread alone.
    inflate_threads: int = msgspec.field(default=2, name="INDEXIUM_SCAN_INFLATE_THREADS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.concurrency < 1 or self.max_attempts < 1 or self.max_bytes < 1 or self.threshold < 1:
            raise ValueError("INDEXIUM_SCAN_CONCURRENCY, _MAX_ATTEMPTS, _MAX_BYTES and _SUSPICIOUS_SCORE "
                             "must be at least 1")
        if not 1 <= self.inflate_threads <= 8:
            raise ValueError("INDEXIUM_SCAN_INFLATE_THREADS must be 1 to 8")
