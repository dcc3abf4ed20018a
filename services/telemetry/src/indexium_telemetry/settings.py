"""Telemetry settings, decoded once at start-up."""

import msgspec

from indexium_platform import clientaddr
from indexium_platform.settings import Common

ROLES = ("http", "writer", "aggregator")


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8082, name="PORT")
    # Which parts this process runs; each scales on its own (e.g. many "http", one "aggregator").
    # /healthz, /readyz and /metrics are served whatever the roles.
    roles: tuple[str, ...] = msgspec.field(default=ROLES, name="INDEXIUM_TELEMETRY_ROLES")
    # Decompressed JSON is refused past this size (checked while inflating).
    max_body_bytes: int = msgspec.field(default=64 * 1024, name="INDEXIUM_TELEMETRY_MAX_BODY_BYTES")
    # One accepted ping per server per window, across every replica.
    rate_limit_s: int = msgspec.field(default=900, name="INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS")
    # How long to wait for JetStream (PubAck, key-value) before answering 503.
    publish_timeout_s: float = msgspec.field(default=2.0, name="INDEXIUM_TELEMETRY_PUBLISH_TIMEOUT_SECONDS")
    # How often the in-memory slug -> mod id map is re-read whole: the safety net for events
    # missed (follow.py learns a mod from its event within milliseconds). Each re-read costs
    # PostgreSQL 1-5 s at 100,000 mods (docs/telemetry.md, "The catalogue follows the events").
    catalogue_refresh_s: float = msgspec.field(
        default=600.0, name="INDEXIUM_TELEMETRY_CATALOGUE_REFRESH_SECONDS")
    # Writer: pings per INSERT, and how long a partial batch may wait for more.
    writer_batch: int = msgspec.field(default=500, name="INDEXIUM_TELEMETRY_WRITER_BATCH")
    writer_wait_s: float = msgspec.field(default=1.0, name="INDEXIUM_TELEMETRY_WRITER_WAIT_SECONDS")
    # Aggregator: how often a run starts (hourly: counts are served per day, so a day's figure is at
    # most an hour behind for 24 short runs a day), retention, partitions ahead.
    aggregate_every_s: float = msgspec.field(
        default=3600.0, name="INDEXIUM_TELEMETRY_AGGREGATE_INTERVAL_SECONDS")
    retention_days: int = msgspec.field(default=30, name="INDEXIUM_TELEMETRY_RETENTION_DAYS")
    partitions_ahead_days: int = msgspec.field(default=3, name="INDEXIUM_TELEMETRY_PARTITIONS_AHEAD_DAYS")
    # Replicas of the two key-value buckets when this service must create them itself (the setup
    # step normally does, with INDEXIUM_STREAM_REPLICAS): 3 on a NATS cluster.
    kv_replicas: int = msgspec.field(default=1, name="INDEXIUM_TELEMETRY_KV_REPLICAS")
    db_pool_size: int = msgspec.field(default=5, name="INDEXIUM_TELEMETRY_DB_POOL_SIZE")
    # New server ids one network prefix (/24, /64) may introduce per hour, per replica.
    new_servers_per_prefix_hour: int = msgspec.field(
        default=32, name="INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR")
    # Proxies (CIDRs) whose X-Forwarded-For names the client for that cap; none by default.
    trusted_proxies: tuple[str, ...] = msgspec.field(default=(), name="INDEXIUM_TELEMETRY_TRUSTED_PROXIES")
    # A server counts for a day once its first and last ping of the day are this far apart.
    qualifying_span_s: float = msgspec.field(default=1500.0, name="INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS")

    def __post_init__(self) -> None:
        super().__post_init__()
        unknown = set(self.roles) - set(ROLES)
        if unknown or not self.roles:
            raise ValueError(f"INDEXIUM_TELEMETRY_ROLES must be a non-empty subset of {','.join(ROLES)}")
        if not 1024 <= self.max_body_bytes <= 1024 * 1024:
            raise ValueError("INDEXIUM_TELEMETRY_MAX_BODY_BYTES must be between 1 KiB and 1 MiB")
        if not 1 <= self.rate_limit_s <= 3600:
            # The rate-limit bucket's backstop max age is one hour (contracts.telemetry.RATE_LIMIT).
            raise ValueError("INDEXIUM_TELEMETRY_RATE_LIMIT_SECONDS must be between 1 and 3600")
        if not 1 <= self.writer_batch <= 5000:
            raise ValueError("INDEXIUM_TELEMETRY_WRITER_BATCH must be between 1 and 5000")
        if self.retention_days < 2:
            raise ValueError("INDEXIUM_TELEMETRY_RETENTION_DAYS must be at least 2")
        if self.new_servers_per_prefix_hour < 1:
            raise ValueError("INDEXIUM_TELEMETRY_NEW_SERVERS_PER_PREFIX_HOUR must be at least 1")
        clientaddr.check_networks("INDEXIUM_TELEMETRY_TRUSTED_PROXIES", self.trusted_proxies)
        if not 0 < self.qualifying_span_s < 86400:
            raise ValueError("INDEXIUM_TELEMETRY_QUALIFYING_SPAN_SECONDS must be between 0 and 86400 (exclusive)")
        if self.aggregate_every_s <= 0 or self.catalogue_refresh_s <= 0 or self.writer_wait_s <= 0:
            raise ValueError("telemetry intervals must be positive")

    def has(self, role: str) -> bool:
        return role in self.roles
