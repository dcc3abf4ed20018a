"""Indexer settings, decoded once at start-up."""

import msgspec

from indexium_github.assets import DOWNLOAD_HOSTS
from indexium_platform.settings import Common



class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8083, name="PORT")  # health, readiness and metrics only
    download_hosts: tuple[str, ...] = msgspec.field(
        default=DOWNLOAD_HOSTS, name="INDEXIUM_DOWNLOAD_HOSTS"
    )
    github_api_url: str = msgspec.field(default="https://api.github.com", name="INDEXIUM_GITHUB_API_URL")
    # Jobs handled at once by one process; each is mostly waiting on the CDN.
    concurrency: int = msgspec.field(default=16, name="INDEXIUM_INDEXER_CONCURRENCY")
    # Retries after a first failed try (network, 5xx, 429): 3, with the backoff below 2 + 8 + 32 s,
    # enough to outlast a CDN or GitHub blip, and a jar that is truly broken reaches the dead
    # letters (an operator's view) within a minute; then the job is dead-lettered. Outages of PostgreSQL/NATS do not count.
    max_retries: int = msgspec.field(default=3, name="INDEXIUM_INDEXER_MAX_RETRIES")
    # Delay before attempt n+1 is retry_base * 4**(n-1): 2 s, 8 s, 32 s ...
    retry_base_s: float = msgspec.field(default=2.0, name="INDEXIUM_INDEXER_RETRY_BASE_SECONDS")
    # Delay before retrying after PostgreSQL/NATS was unreachable (no attempt is spent).
    outage_retry_s: float = msgspec.field(default=5.0, name="INDEXIUM_INDEXER_OUTAGE_RETRY_SECONDS")
    # The scan stage (indexium_indexer.scan) makes versions public once every file is clean.
    publish_before_scan: bool = msgspec.field(default=False, name="INDEXIUM_PUBLISH_BEFORE_SCAN")
    http_timeout_s: float = msgspec.field(default=15.0, name="INDEXIUM_HTTP_TIMEOUT_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.concurrency < 1 or self.max_retries < 0:
            raise ValueError("INDEXIUM_INDEXER_CONCURRENCY must be at least 1 and _MAX_RETRIES at least 0")
