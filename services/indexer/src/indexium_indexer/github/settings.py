"""Settings of the GitHub role, decoded once at start-up."""

from __future__ import annotations

import msgspec

from indexium_github import AppConfig, load_private_key
from indexium_platform.settings import Common

from indexium_github.assets import DOWNLOAD_HOSTS

MAX_REREADS = 20  # steps of the re-read schedule: each may cost a request (a 304 costs no quota)


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8085, name="PORT")  # health, readiness and metrics only
    app_id: int = msgspec.field(name="INDEXIUM_GITHUB_APP_ID")
    private_key: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_APP_PRIVATE_KEY")
    private_key_path: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH")
    github_api_url: str = msgspec.field(default="https://api.github.com", name="INDEXIUM_GITHUB_API_URL")
    # Onboarding events handled at once by one process.
    concurrency: int = msgspec.field(default=4, name="INDEXIUM_GITHUB_CONCURRENCY")
    # Releases sent to the indexer per second per installation by backfill and reconciliation.
    backfill_rate: float = msgspec.field(default=2.0, name="INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND")
    # Backfills running at once in one process (each on a different installation).
    backfill_workers: int = msgspec.field(default=2, name="INDEXIUM_GITHUB_BACKFILL_WORKERS")
    backfill_poll_s: float = msgspec.field(default=10.0, name="INDEXIUM_GITHUB_BACKFILL_POLL_SECONDS")
    # A backfill whose replica died is taken over after this long without progress.
    backfill_lease_s: float = msgspec.field(default=120.0, name="INDEXIUM_GITHUB_BACKFILL_LEASE_SECONDS")
    # Seconds between reconciliation passes; 0 turns them off.
    reconcile_interval_s: float = msgspec.field(default=6 * 3600.0, name="INDEXIUM_GITHUB_RECONCILE_INTERVAL_SECONDS")
    # Quota per installation that reconciliation leaves to webhook-driven work.
    reconcile_reserve: int = msgspec.field(default=500, name="INDEXIUM_GITHUB_RECONCILE_RESERVE")
    # Longer waits for GitHub's quota are not waited out in place: the event is nak'ed / the
    # backfill deferred until the reset.
    max_wait_s: float = msgspec.field(default=120.0, name="INDEXIUM_GITHUB_MAX_WAIT_SECONDS")
    # GitHub asks for a second between mutating requests (token minting only, here).
    mutation_interval_s: float = msgspec.field(default=1.0, name="INDEXIUM_GITHUB_MUTATION_INTERVAL_SECONDS")
    max_attempts: int = msgspec.field(default=5, name="INDEXIUM_GITHUB_MAX_ATTEMPTS")
    retry_base_s: float = msgspec.field(default=5.0, name="INDEXIUM_GITHUB_RETRY_BASE_SECONDS")
    outage_retry_s: float = msgspec.field(default=5.0, name="INDEXIUM_GITHUB_OUTAGE_RETRY_SECONDS")
    # A release published with no mod jar (or fewer than the repository's recent releases had) is
    # read again this many seconds after its event arrived, until the jars are there (watch.py,
    # reread.py); empty turns re-reads off. Unchanged answers are 304s, which cost no quota.
    reread_schedule_s: tuple[float, ...] = msgspec.field(
        default=(15.0, 30.0, 60.0, 120.0, 180.0, 240.0, 300.0, 600.0, 1800.0),
        name="INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS")
    # How often an idle process looks for a re-read that fell due (a release it saw itself
    # wakes it at once; the next due time shortens the wait).
    reread_poll_s: float = msgspec.field(default=5.0, name="INDEXIUM_GITHUB_REREAD_POLL_SECONDS")
    # Reading the latest release's jar when the default branch has no manifest.
    download_hosts: tuple[str, ...] = msgspec.field(default=DOWNLOAD_HOSTS, name="INDEXIUM_DOWNLOAD_HOSTS")
    http_timeout_s: float = msgspec.field(default=15.0, name="INDEXIUM_HTTP_TIMEOUT_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if load_private_key(self.private_key, self.private_key_path) is None:
            raise ValueError("INDEXIUM_GITHUB_APP_PRIVATE_KEY or INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH is required")
        if self.concurrency < 1 or self.backfill_workers < 1 or self.max_attempts < 1:
            raise ValueError("INDEXIUM_GITHUB_CONCURRENCY, _BACKFILL_WORKERS and _MAX_ATTEMPTS must be at least 1")
        if self.backfill_rate <= 0 or self.reconcile_interval_s < 0:
            raise ValueError("INDEXIUM_GITHUB_BACKFILL_RELEASES_PER_SECOND must be positive, "
                             "INDEXIUM_GITHUB_RECONCILE_INTERVAL_SECONDS not negative")
        steps = self.reread_schedule_s
        if (len(steps) > MAX_REREADS or any(s <= 0 for s in steps) or list(steps) != sorted(set(steps))
                or (steps and steps[-1] > 86400)):
            raise ValueError(f"INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS must be at most {MAX_REREADS} "
                             "increasing positive seconds, the last within a day")
        if self.reread_poll_s <= 0:
            raise ValueError("INDEXIUM_GITHUB_REREAD_POLL_SECONDS must be positive")

    def app_config(self) -> AppConfig:
        key = load_private_key(self.private_key, self.private_key_path)
        assert key is not None  # checked in __post_init__
        return AppConfig(app_id=self.app_id, private_key=key, api_url=self.github_api_url)
