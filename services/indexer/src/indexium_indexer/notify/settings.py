"""Notify-role settings, decoded once at start-up (docs/notifications.md lists each)."""

import msgspec

from indexium_notify.signing import MIN_KEY_BYTES
from indexium_notify.targets import TargetPolicy
from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8086, name="PORT")  # health, readiness and metrics only
    # Links in the payloads: the site's mod pages and icons, GitHub's release pages.
    public_url: str = msgspec.field(default="http://127.0.0.1:8080", name="INDEXIUM_PUBLIC_URL")
    github_url: str = msgspec.field(default="https://github.com", name="INDEXIUM_GITHUB_URL")
    # Derives every subscription's signing secret (indexium_notify.signing); the API has the same.
    secret_key: str = msgspec.field(name="INDEXIUM_NOTIFY_SECRET_KEY")
    # Targets: https only and public addresses only, unless an operator says otherwise (tests,
    # intranets): http allowed, host names or CIDRs exempt from the public-address rule, a DNS
    # server of its own. The API reads the same three.
    allow_http: bool = msgspec.field(default=False, name="INDEXIUM_NOTIFY_ALLOW_HTTP")
    allowed_targets: tuple[str, ...] = msgspec.field(default=(), name="INDEXIUM_NOTIFY_ALLOWED_TARGETS")
    nameserver: str | None = msgspec.field(default=None, name="INDEXIUM_NOTIFY_NAMESERVER")
    # POSTs in flight per process, and how long one may take (connect to last byte).
    concurrency: int = msgspec.field(default=16, name="INDEXIUM_NOTIFY_CONCURRENCY")
    timeout_s: float = msgspec.field(default=10.0, name="INDEXIUM_NOTIFY_TIMEOUT_SECONDS")
    # The outbox is read this often for retries falling due (new deliveries go at once).
    poll_s: float = msgspec.field(default=1.0, name="INDEXIUM_NOTIFY_POLL_SECONDS")
    # A claimed delivery is another replica's to send after this long (a replica killed mid-POST).
    lease_s: float = msgspec.field(default=60.0, name="INDEXIUM_NOTIFY_LEASE_SECONDS")
    retry_base_s: float = msgspec.field(default=10.0, name="INDEXIUM_NOTIFY_RETRY_BASE_SECONDS")
    retry_max_s: float = msgspec.field(default=3600.0, name="INDEXIUM_NOTIFY_RETRY_MAX_SECONDS")
    give_up_s: float = msgspec.field(default=86400.0, name="INDEXIUM_NOTIFY_GIVE_UP_SECONDS")
    pause_after_failures: int = msgspec.field(default=50, name="INDEXIUM_NOTIFY_PAUSE_AFTER_FAILURES")
    pause_after_s: float = msgspec.field(default=86400.0, name="INDEXIUM_NOTIFY_PAUSE_AFTER_SECONDS")
    max_deliveries_per_hour: int = msgspec.field(default=500, name="INDEXIUM_NOTIFY_MAX_DELIVERIES_PER_HOUR")
    log_rows: int = msgspec.field(default=200, name="INDEXIUM_NOTIFY_LOG_ROWS")
    keep_deliveries: int = msgspec.field(default=1000, name="INDEXIUM_NOTIFY_KEEP_DELIVERIES")
    # Tests only: the role's clock runs this many times faster than the wall clock, so the
    # 24 hours of retries before a pause pass in seconds. One replica only (each starts its own).
    clock_speed: float = msgspec.field(default=1.0, name="INDEXIUM_NOTIFY_CLOCK_SPEED")
    # The consumer's own job (matching in one transaction): attempts and backoff for its failures.
    max_attempts: int = msgspec.field(default=5, name="INDEXIUM_NOTIFY_MAX_ATTEMPTS")
    job_retry_base_s: float = msgspec.field(default=2.0, name="INDEXIUM_NOTIFY_JOB_RETRY_BASE_SECONDS")
    outage_retry_s: float = msgspec.field(default=5.0, name="INDEXIUM_NOTIFY_OUTAGE_RETRY_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.secret_key.encode()) < MIN_KEY_BYTES:
            raise ValueError(f"INDEXIUM_NOTIFY_SECRET_KEY must be at least {MIN_KEY_BYTES} bytes")
        if self.concurrency < 1 or self.max_attempts < 1 or self.pause_after_failures < 1 or self.log_rows < 1 \
                or self.keep_deliveries < 1 or self.max_deliveries_per_hour < 1:
            raise ValueError("INDEXIUM_NOTIFY_CONCURRENCY, _MAX_ATTEMPTS, _PAUSE_AFTER_FAILURES, _LOG_ROWS, "
                             "_KEEP_DELIVERIES and _MAX_DELIVERIES_PER_HOUR must be at least 1")
        if min(self.timeout_s, self.poll_s, self.lease_s, self.retry_base_s, self.retry_max_s, self.give_up_s,
               self.pause_after_s, self.clock_speed) <= 0:
            raise ValueError("INDEXIUM_NOTIFY_*_SECONDS and INDEXIUM_NOTIFY_CLOCK_SPEED must be positive")
        if self.lease_s <= self.timeout_s:
            raise ValueError("INDEXIUM_NOTIFY_LEASE_SECONDS must be longer than INDEXIUM_NOTIFY_TIMEOUT_SECONDS")
        self.policy()  # a bad CIDR or name server stops start-up here

    def policy(self) -> TargetPolicy:
        return TargetPolicy(allow_http=self.allow_http, allowed=self.allowed_targets, nameserver=self.nameserver,
                            timeout_s=min(5.0, self.timeout_s))
