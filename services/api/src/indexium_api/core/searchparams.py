"""A search's query parameters read into a ``SearchQuery``: the site's search page (``/``,
``site/pages.py``) and the search feed (``/feeds/search.atom``, ``feeds/routes.py``) parse a
search the same way, with the same bounds (a bad value a 400 naming it).
"""

from __future__ import annotations

from aiohttp import web

from indexium_jar import formats
from indexium_platform.web import ApiError
from indexium_search import sqlpath

from . import params

PAGE_SIZE = 20
MAX_PAGE = 500  # 10,000 hits: the API's own deepest offset
SORT_LABELS = {"relevance": "Relevance", "downloads": "Downloads", "active_servers": "Active servers",
               "updated": "Recently updated"}
ENVIRONMENT_LABELS = {"client": "Client", "server": "Server"}



def search_query(request: web.Request) -> tuple[sqlpath.SearchQuery, int]:
    q = params.text(request, "q")
    page = params.integer(request, "page", default=1, low=1, high=MAX_PAGE)
    sort = params.choice(request, "sort", tuple(SORT_LABELS))
    env = params.text(request, "environment", max_len=16) or None  # "" = any
    if env is not None and env not in ENVIRONMENT_LABELS:
        raise ApiError(400, "invalid_parameter", "environment must be client or server.")
    project_type = params.text(request, "type", max_len=32) or None  # "" = any
    if project_type is not None and project_type not in formats.PROJECT_TYPES:
        raise ApiError(400, "invalid_parameter", f"type must be one of: {', '.join(formats.PROJECT_TYPES)}.")
    sq = sqlpath.SearchQuery(
        q=" ".join(q.split()) or None if q else None,
        game_versions=tuple(v for v in params.texts(request, "game_version") if v),
        loaders=tuple(v for v in params.texts(request, "loader", max_len=32) if v),
        categories=params.categories(request),
        environment=env, project_type=project_type, sort=sort, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE,
    )
    return sq, page
