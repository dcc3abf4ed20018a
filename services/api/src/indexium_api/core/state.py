"""Everything a request handler needs, as one typed app value (no globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from indexium_search.sqlpath import Corrections

from .cache import Cache
from .db import ReadDatabase
from .inflight import InFlight
from .metrics import ApiMetrics
from .ratelimit import ClientKeys, RateLimiter, Tarpit
from ..settings import Settings


@dataclass
class Api:
    settings: Settings
    cache: Cache
    metrics: ApiMetrics
    keys: ClientKeys
    limiter: RateLimiter | None  # the JSON routes (and unknown paths); the site's and /auth/*'s below
    auth_limiter: RateLimiter | None = field(default=None)  # /auth/*: sign-ins
    site_limiter: RateLimiter | None = field(default=None)  # the web site's other routes: pages for people
    in_flight: InFlight | None = field(default=None)  # uncached work per client (inflight.py)
    tarpit: Tarpit | None = field(default=None)  # refusals answered after a pause (ratelimit.py)
    db: ReadDatabase | None = field(default=None)  # set by the pool's cleanup_ctx
    # The search index's own (db.INDEX_POOL_SIZE connections), so its re-reads never queue behind
    # the requests that a stale index sends to PostgreSQL; None without an index.
    index_db: ReadDatabase | None = field(default=None)
    parsed_searches: dict = field(default_factory=dict)  # (surface, raw query string) -> parsed search
    corrections: Corrections = field(default_factory=Corrections)  # typo -> catalogue word, this process
    search_index: Any = None  # search_index.LiveIndex when INDEXIUM_API_SEARCH_INDEX is on
    # The process's one NATS connection (invalidation.Invalidator, made by create_app): it follows
    # the catalogue's events, and the site publishes through it ("Check again", review decisions).
    bus: Any = None
    # The web site's routes (site.add_page): their errors are pages, and they count against the
    # site's budget (edge.py). A set of resources, looked up per request.
    site_pages: set = field(default_factory=set)
    client_cache_control: str = field(init=False)  # Cache-Control of cached answers (respond.py)

    def __post_init__(self) -> None:
        max_age = self.settings.client_max_age_s
        self.client_cache_control = (f"public, max-age={max_age}" if max_age > 0
                                     else "public, max-age=0, must-revalidate")


API = web.AppKey("api", Api)
# The request's client (ratelimit.ClientKeys' key, None for a trusted proxy naming no client), noted
# by the rate limit's hook, or by the request's first miss (respond.uncached) when the limit is off.
CLIENT = web.RequestKey("client", str)
