"""API settings, decoded once at start-up (INDEXIUM_API_* beside the common variables).

docs/api.md lists every variable with its default and the reason for it.
"""

import msgspec

from indexium_notify.signing import MIN_KEY_BYTES
from indexium_notify.targets import TargetPolicy
from indexium_platform import clientaddr
from indexium_platform.settings import Common


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=8080, name="PORT")
    # A read replica for every query when set; DATABASE_URL otherwise.
    database_read_url: str | None = msgspec.field(default=None, name="DATABASE_READ_URL")
    max_limit: int = msgspec.field(default=100, name="INDEXIUM_API_MAX_LIMIT")
    default_limit: int = msgspec.field(default=20, name="INDEXIUM_API_DEFAULT_LIMIT")
    # Deep pages cost a sort of everything before them; 10,000 is Elasticsearch's default window.
    max_offset: int = msgspec.field(default=10_000, name="INDEXIUM_API_MAX_OFFSET")
    max_bulk_hashes: int = msgspec.field(default=1000, name="INDEXIUM_API_MAX_BULK_HASHES")

    # Cache: the owner's 60 s for search results and mod cards.
    cache_ttl_s: float = msgspec.field(default=60.0, name="INDEXIUM_API_CACHE_TTL_SECONDS")
    # After the TTL an entry is still served for this long while one request refreshes it.
    cache_stale_s: float = msgspec.field(default=30.0, name="INDEXIUM_API_CACHE_STALE_SECONDS")
    # PostgreSQL unreachable: any entry this young (even invalidated) beats a 503.
    cache_stale_if_error_s: float = msgspec.field(default=3600.0, name="INDEXIUM_API_CACHE_STALE_IF_ERROR_SECONDS")
    # 64: a replica's whole RSS target is 200 MB at 100,000 mods (issue 38): ~60 MB the process,
    # ~60-80 MB its search index from a snapshot, the rest the cache (bench/README.md).
    cache_max_mb: int = msgspec.field(default=64, name="INDEXIUM_API_CACHE_MAX_MB")
    # With a read replica, invalidate once more this long after an event (replication lag).
    replica_lag_grace_s: float = msgspec.field(default=1.0, name="INDEXIUM_API_REPLICA_LAG_GRACE_SECONDS")
    # Cache-Control max-age for clients and CDNs; 0 = revalidate every time (cheap 304s), so a
    # new release is visible to launchers as soon as the API sees it.
    client_max_age_s: int = msgspec.field(default=0, name="INDEXIUM_API_CLIENT_MAX_AGE_SECONDS")

    # Search from this replica's in-memory index (docs/api.md, search); off: PostgreSQL alone.
    search_index: bool = msgspec.field(default=True, name="INDEXIUM_API_SEARCH_INDEX")
    # A whole reload this often: downloads move, and the index's popularity order with them.
    search_index_refresh_s: float = msgspec.field(default=600.0, name="INDEXIUM_API_SEARCH_INDEX_REFRESH_SECONDS")
    # Mods written lately and not as the index holds them are re-read this often (a dropped event).
    search_index_catch_up_s: float = msgspec.field(default=30.0, name="INDEXIUM_API_SEARCH_INDEX_CATCH_UP_SECONDS")
    # A page of hits read from PostgreSQL with `listed` and the facets re-checked (one round trip
    # a search), instead of the index's own copies, which follow the same events as the cache.
    search_index_recheck: bool = msgspec.field(default=False, name="INDEXIUM_API_SEARCH_INDEX_RECHECK")
    # Start (and refresh) the index from the search snapshot in NATS's object store (written by
    # `python -m indexium_ops search-snapshot`), kept on this node in the directory below; with
    # none to use, or off, the index is built from PostgreSQL.
    search_snapshot: bool = msgspec.field(default=True, name="INDEXIUM_API_SEARCH_SNAPSHOT")
    # Node-local (a hostPath or emptyDir in Kubernetes, never a network filesystem): replicas on
    # one node share its file's pages. Empty: <temp dir>/indexium-search-snapshot.
    search_snapshot_dir: str = msgspec.field(default="", name="INDEXIUM_API_SEARCH_SNAPSHOT_DIR")
    # The start-up load waits this long at most; then the API serves without the index.
    search_index_load_timeout_s: float = msgspec.field(default=30.0,
                                                       name="INDEXIUM_API_SEARCH_INDEX_LOAD_TIMEOUT_SECONDS")

    # Database: fail fast instead of queueing behind a dead server.
    db_pool_size: int = msgspec.field(default=20, name="INDEXIUM_API_DB_POOL_SIZE")
    db_connect_timeout_s: float = msgspec.field(default=2.0, name="INDEXIUM_API_DB_CONNECT_TIMEOUT_SECONDS")
    db_statement_timeout_s: float = msgspec.field(default=5.0, name="INDEXIUM_API_DB_STATEMENT_TIMEOUT_SECONDS")
    # After a connection failure, uncached requests get 503 without trying for this long.
    db_breaker_s: float = msgspec.field(default=1.0, name="INDEXIUM_API_DB_BREAKER_SECONDS")
    retry_after_s: int = msgspec.field(default=5, name="INDEXIUM_API_RETRY_AFTER_SECONDS")

    # Rate limit per client address per minute on the JSON routes (the site's and /auth/*'s below);
    # 0 turns every budget off. Bulk routes count once. At most BURST at once.
    rate_limit_per_minute: int = msgspec.field(default=1200, name="INDEXIUM_API_RATE_LIMIT_PER_MINUTE")
    rate_limit_burst: int = msgspec.field(default=120, name="INDEXIUM_API_RATE_LIMIT_BURST")
    # /auth/* (sign-in writes a row and sends the browser to GitHub) has its own, much smaller
    # budget, half of it at once; 0 turns it off.
    rate_limit_auth_per_minute: int = msgspec.field(default=20, name="INDEXIUM_API_RATE_LIMIT_AUTH_PER_MINUTE")
    # The web site's pages and static files (people, and polite crawlers), a fifth of it at once;
    # 0 turns it off.
    rate_limit_site_per_minute: int = msgspec.field(default=300, name="INDEXIUM_API_RATE_LIMIT_SITE_PER_MINUTE")
    # Uncached requests (cache misses, bulk lookups, sign-ins) one client may have in flight at
    # once; its next waits up to CLIENT_WAIT_SECONDS for one of them, then 429. 0 turns it off.
    client_max_in_flight: int = msgspec.field(default=4, name="INDEXIUM_API_CLIENT_MAX_IN_FLIGHT")
    client_wait_s: float = msgspec.field(default=2.0, name="INDEXIUM_API_CLIENT_WAIT_SECONDS")
    # Proxies (CIDRs) whose X-Forwarded-For is believed; none by default. A request from one
    # of them is limited by the forwarded client address, or not at all when none is given.
    trusted_proxies: tuple[str, ...] = msgspec.field(default=(), name="INDEXIUM_API_TRUSTED_PROXIES")

    # The web site (docs/web.md). Sign-in is on only with both OAuth credentials.
    public_url: str = msgspec.field(default="http://127.0.0.1:8080", name="INDEXIUM_PUBLIC_URL")
    github_url: str = msgspec.field(default="https://github.com", name="INDEXIUM_GITHUB_URL")
    github_api_url: str = msgspec.field(default="https://api.github.com", name="INDEXIUM_GITHUB_API_URL")
    github_client_id: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_CLIENT_ID")
    github_client_secret: str | None = msgspec.field(default=None, name="INDEXIUM_GITHUB_CLIENT_SECRET")
    github_app_slug: str = msgspec.field(default="indexium", name="INDEXIUM_GITHUB_APP_SLUG")
    session_secret: str | None = msgspec.field(default=None, name="INDEXIUM_SESSION_SECRET")
    admin_logins: tuple[str, ...] = msgspec.field(default=(), name="INDEXIUM_ADMIN_LOGINS")

    # Webhook subscriptions (/api/v1/subscriptions, docs/notifications.md). The key derives every
    # subscription's signing secret; the notify role has the same. Unset: the routes answer 503.
    notify_secret_key: str | None = msgspec.field(default=None, name="INDEXIUM_NOTIFY_SECRET_KEY")
    # The target policy, as the notify role applies it (tests and intranets only: off by default).
    notify_allow_http: bool = msgspec.field(default=False, name="INDEXIUM_NOTIFY_ALLOW_HTTP")
    notify_allowed_targets: tuple[str, ...] = msgspec.field(default=(), name="INDEXIUM_NOTIFY_ALLOWED_TARGETS")
    notify_nameserver: str | None = msgspec.field(default=None, name="INDEXIUM_NOTIFY_NAMESERVER")
    notify_max_subscriptions: int = msgspec.field(default=25, name="INDEXIUM_NOTIFY_MAX_SUBSCRIPTIONS_PER_USER")
    # Shown with the subscriptions; the notify role enforces it (the same variable).
    notify_max_deliveries_per_hour: int = msgspec.field(default=500, name="INDEXIUM_NOTIFY_MAX_DELIVERIES_PER_HOUR")
    # A resumed or redelivered delivery is retried this long (the notify role's window for a new one).
    notify_give_up_s: float = msgspec.field(default=86400.0, name="INDEXIUM_NOTIFY_GIVE_UP_SECONDS")
    max_api_tokens: int = msgspec.field(default=10, name="INDEXIUM_API_MAX_TOKENS_PER_USER")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.notify_secret_key is not None and len(self.notify_secret_key.encode()) < MIN_KEY_BYTES:
            raise ValueError(f"INDEXIUM_NOTIFY_SECRET_KEY must be at least {MIN_KEY_BYTES} bytes")
        if min(self.notify_max_subscriptions, self.notify_max_deliveries_per_hour, self.max_api_tokens) < 1 \
                or self.notify_give_up_s <= 0:
            raise ValueError("INDEXIUM_NOTIFY_MAX_*, INDEXIUM_API_MAX_TOKENS_PER_USER and "
                             "INDEXIUM_NOTIFY_GIVE_UP_SECONDS must be positive")
        self.notify_policy()  # a bad CIDR or name server stops start-up here
        if not 1 <= self.default_limit <= self.max_limit:
            raise ValueError("INDEXIUM_API_DEFAULT_LIMIT must be between 1 and INDEXIUM_API_MAX_LIMIT")
        if self.cache_ttl_s < 0 or self.cache_stale_s < 0 or self.cache_max_mb < 1:
            raise ValueError("INDEXIUM_API_CACHE_* must not be negative (CACHE_MAX_MB at least 1)")
        if min(self.rate_limit_per_minute, self.rate_limit_auth_per_minute, self.rate_limit_site_per_minute) < 0 \
                or self.db_pool_size < 1:
            raise ValueError("INDEXIUM_API_RATE_LIMIT_PER_MINUTE, _AUTH_PER_MINUTE and _SITE_PER_MINUTE >= 0, "
                             "INDEXIUM_API_DB_POOL_SIZE >= 1")
        if self.rate_limit_burst < 1:
            raise ValueError("INDEXIUM_API_RATE_LIMIT_BURST must be at least 1")
        if self.client_max_in_flight < 0 or self.client_wait_s < 0:
            raise ValueError("INDEXIUM_API_CLIENT_MAX_IN_FLIGHT and INDEXIUM_API_CLIENT_WAIT_SECONDS must not be negative")
        if min(self.search_index_refresh_s, self.search_index_load_timeout_s, self.search_index_catch_up_s) <= 0:
            raise ValueError("INDEXIUM_API_SEARCH_INDEX_*_SECONDS must be positive")
        clientaddr.check_networks("INDEXIUM_API_TRUSTED_PROXIES", self.trusted_proxies)

        if bool(self.github_client_id) != bool(self.github_client_secret):
            raise ValueError("INDEXIUM_GITHUB_CLIENT_ID and INDEXIUM_GITHUB_CLIENT_SECRET go together")
        if self.sign_in_configured and len((self.session_secret or "").encode()) < 32:
            raise ValueError("INDEXIUM_SESSION_SECRET: required (at least 32 bytes) when sign-in is configured")
        for name, url in (("INDEXIUM_PUBLIC_URL", self.public_url), ("INDEXIUM_GITHUB_URL", self.github_url),
                          ("INDEXIUM_GITHUB_API_URL", self.github_api_url)):
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{name}: expected an http(s) URL")

    def notify_policy(self) -> TargetPolicy:
        return TargetPolicy(allow_http=self.notify_allow_http, allowed=self.notify_allowed_targets,
                            nameserver=self.notify_nameserver)

    @property
    def sign_in_configured(self) -> bool:
        return bool(self.github_client_id and self.github_client_secret)

    @property
    def read_url(self) -> str:
        return self.database_read_url or self.database_url
