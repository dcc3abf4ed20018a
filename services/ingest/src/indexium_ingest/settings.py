"""Ingest settings, decoded once at start-up."""

import msgspec

from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8081, name="PORT")
    # Comma-separated: any one verifies, so a secret can be rotated with two overlapping.
    webhook_secrets: tuple[str, ...] = msgspec.field(name="INDEXIUM_WEBHOOK_SECRET")
    # GitHub caps webhook payloads at 25 MB; larger bodies are refused with 413.
    max_body_bytes: int = msgspec.field(default=25 * 1024 * 1024, name="INDEXIUM_WEBHOOK_MAX_BYTES")
    # How long to wait for JetStream's PubAck before answering 503.
    publish_timeout_s: float = msgspec.field(default=5.0, name="INDEXIUM_PUBLISH_TIMEOUT_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.webhook_secrets:
            raise ValueError("INDEXIUM_WEBHOOK_SECRET must name at least one secret")
