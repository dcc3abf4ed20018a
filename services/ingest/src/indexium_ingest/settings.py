"""Ingest settings, decoded once at start-up."""

import msgspec

from indexium_github import AppConfig, load_private_key
from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8081, name="PORT")
    # Comma-separated: any one verifies, so a secret can be rotated with two overlapping.
    webhook_secrets: tuple[str, ...] = msgspec.field(name="INDEXIUM_WEBHOOK_SECRET")
    # GitHub caps webhook payloads at 25 MB; larger bodies are refused with 413.
    max_body_bytes: int = msgspec.field(default=25 * 1024 * 1024, name="INDEXIUM_WEBHOOK_MAX_BYTES")
    # How long to wait for JetStream's PubAck before answering 503.
    publish_timeout_s: float = msgspec.field(default=5.0, name="INDEXIUM_PUBLISH_TIMEOUT_SECONDS")
    # The GitHub App (optional here): when set, the failed-delivery reconciler runs (redeliver.py).
    github_app_id: int | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_APP_ID")
    github_private_key: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_APP_PRIVATE_KEY")
    github_private_key_path: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH")
    github_api_url: str = msgspec.field(default="https://api.github.com", name="INDEXIUM_GITHUB_API_URL")
    # Seconds between passes over GitHub's recent deliveries (0 turns the reconciler off).
    redeliver_interval_s: float = msgspec.field(default=300.0, name="INDEXIUM_REDELIVER_INTERVAL_SECONDS")
    # GitHub redelivers deliveries up to 3 days old; older failures are out of reach.
    redeliver_lookback_s: float = msgspec.field(default=3 * 24 * 3600.0 - 600, name="INDEXIUM_REDELIVER_LOOKBACK_SECONDS")
    # Redeliveries asked per delivery at most, and the pause before asking again.
    redeliver_max_requests: int = msgspec.field(default=3, name="INDEXIUM_REDELIVER_MAX_REQUESTS")
    redeliver_spacing_s: float = msgspec.field(default=900.0, name="INDEXIUM_REDELIVER_SPACING_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.webhook_secrets:
            raise ValueError("INDEXIUM_WEBHOOK_SECRET must name at least one secret")
        key = load_private_key(self.github_private_key, self.github_private_key_path)
        if (self.github_app_id is None) != (key is None):
            raise ValueError("INDEXIUM_GITHUB_APP_ID and INDEXIUM_GITHUB_APP_PRIVATE_KEY(_PATH) go together")

    def github_app(self) -> AppConfig | None:
        """The App's credentials, or None when ingest runs without the App."""
        key = load_private_key(self.github_private_key, self.github_private_key_path)
        if self.github_app_id is None or key is None:
            return None
        return AppConfig(app_id=self.github_app_id, private_key=key, api_url=self.github_api_url)
