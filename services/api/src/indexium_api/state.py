"""Everything a request handler needs, as one typed app value (no globals)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from indexium_db.queries.catalog import Corrections

from .cache import Cache
from .db import ReadDatabase
from .metrics import ApiMetrics
from .ratelimit import ClientKeys, RateLimiter
from .settings import Settings


@dataclass
class Api:
    settings: Settings
    cache: Cache
    metrics: ApiMetrics
    keys: ClientKeys
    limiter: RateLimiter | None
    db: ReadDatabase | None = field(default=None)  # set by the pool's cleanup_ctx
    parsed_searches: dict = field(default_factory=dict)  # (surface, raw query string) -> parsed search
    corrections: Corrections = field(default_factory=Corrections)  # typo -> catalogue word, this process
    search_index: Any = None  # search_index.LiveIndex when INDEXIUM_API_SEARCH_INDEX is on


API = web.AppKey("api", Api)
