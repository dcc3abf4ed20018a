"""Public pages: home/search and a page per mod, cached like the JSON they mirror.

Both are the same for every visitor (nothing on them depends on a session), so they are
entries in the API's cache under the same tags as the JSON: a new release invalidates the
mod's page the moment it invalidates its card.
"""

from __future__ import annotations

from datetime import timedelta

from aiohttp import web

from indexium_content import categories as vocabulary, urls
from indexium_contracts.telemetry import utc_day
from indexium_db.queries import catalog as catalog_q, site as site_q, telemetry as telemetry_q
from indexium_jar import gameversions
from indexium_jar import formats
from indexium_platform.web import ApiError

from .. import params, search_index
from ..analytics import now
from ..respond import GLOBAL, cached, mod_tag
from ..routes import _SLUG
from ..state import API
from . import charts, security
from .render import cached_page

PAGE_SIZE = 20
MAX_PAGE = 500  # 10,000 hits: the API's own deepest offset
RANGES = {"30d": 30, "90d": 90}
SORT_LABELS = {"relevance": "Relevance", "downloads": "Downloads", "active_servers": "Active servers",
               "updated": "Recently updated"}
ENVIRONMENT_LABELS = {"client": "Client", "server": "Server"}
LOADERS = formats.LOADERS
BADGE_PATH = "/api/v1/badges/{slug}/servers.svg"
SEARCH_PARAMS = frozenset({"q", "loader", "game_version", "environment", "category", "sort"})


def _game_versions() -> list[str]:
    return [v.id for v in gameversions.default_table().versions if v.type == "release"][:60]


def search_query(request: web.Request) -> tuple[catalog_q.SearchQuery, int]:
    q = params.text(request, "q")
    page = params.integer(request, "page", default=1, low=1, high=MAX_PAGE)
    sort = params.choice(request, "sort", tuple(SORT_LABELS))
    env = params.text(request, "environment", max_len=16) or None  # "" = any
    if env is not None and env not in ENVIRONMENT_LABELS:
        raise ApiError(400, "invalid_parameter", "environment must be client or server.")
    sq = catalog_q.SearchQuery(
        q=" ".join(q.split()) or None if q else None,
        game_versions=tuple(v for v in params.texts(request, "game_version") if v),
        loaders=tuple(v for v in params.texts(request, "loader", max_len=32) if v),
        categories=params.categories(request),
        environment=env, sort=sort, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE,
    )
    return sq, page


async def home(request: web.Request) -> web.Response:
    api = request.app[API]
    sq, page = search_query(request)

    # What the page's own links carry: the search's parameters as given, nothing else. They are
    # part of the key, so a page cached for one request never shows another's links.
    base = tuple((k, v) for k, v in request.query.items() if k in SEARCH_PARAMS and v)
    searched = bool(base) or page > 1

    async def compute():
        rows, total = await api.db.run(search_index.search, api, sq)
        pages = max(1, -(-total // PAGE_SIZE))
        return cached_page(
            request.app, "home.html", sq=sq, hits=rows, total=total, page=page, pages=min(pages, MAX_PAGE),
            query=base, sorts=SORT_LABELS, environments=ENVIRONMENT_LABELS, loaders=LOADERS,
            categories=vocabulary.CATEGORIES,
            game_versions=_game_versions(), searched=searched,
        )

    return security.public(await cached(request, ("site-search", sq, base, searched), (GLOBAL,), compute))


async def _mod_page_data(conn, slug: str, days: int, today):
    mod = await catalog_q.mod_by_slug(conn, slug)
    if mod is None:
        return None
    versions = await catalog_q.versions_of(conn, mod["id"])
    deps = await site_q.dependencies(conn, mod["id"])
    last = today - timedelta(days=1)
    series = await telemetry_q.daily_servers(conn, mod["id"], last - timedelta(days=days - 1), last)
    latest = await telemetry_q.day_stats(conn, mod["id"], last)
    return mod, versions, deps, series, latest


def mod_context(app: web.Application, mod, versions, deps, series, latest, *, range_key: str) -> dict:
    """What mod.html is rendered with, from the rows _mod_page_data read."""
    slug = mod["slug"]
    days = [(r["day"].isoformat(), r["servers"]) for r in series]
    breakdown = (latest["breakdown"] if latest else None) or {}
    public = app[API].settings.public_url.rstrip("/")
    badge = BADGE_PATH.format(slug=slug)
    return dict(
        mod=mod, versions=versions, deps=deps, range_key=range_key, ranges=RANGES,
        # The stored card through the one URL policy and the vocabulary again: a row written
        # before them shows only what would be written now.
        links=urls.safe_links(mod["links"]), categories=vocabulary.only_categories(mod["categories"]),
        tags=vocabulary.only_tags(mod["tags"]),
        # The repository's page as GitHub named it (catalog.REPO_URL), as /v2's source_url.
        repo_url=urls.allowed(mod["repo_url"]) or (f"https://github.com/{mod['repo_full_name']}"
                                                    if mod["repo_full_name"] else None),
        chart=charts.servers_chart(days, title=f"Active servers per day, last {RANGES[range_key]} days"),
        days=days, by_game_version=charts.bars(list(breakdown.get("game_version", {}).items())),
        by_loader=charts.bars(list(breakdown.get("loader", {}).items())),
        badge_url=f"{public}{badge}", badge_path=badge,
        badge_markdown=f"[![servers]({public}{badge})]({public}/mods/{slug})",
        page_url=f"{public}/mods/{slug}",
    )


async def mod_page(request: web.Request) -> web.Response:
    api = request.app[API]
    slug = request.match_info["slug"]
    range_key = params.choice(request, "range", tuple(RANGES), default="30d")
    if not _SLUG.match(slug):
        raise web.HTTPNotFound()
    app = request.app
    today = utc_day(now())

    async def compute():
        data = await api.db.run(_mod_page_data, slug, RANGES[range_key], today)
        if data is None:
            return cached_page(app, "error.html", 404, status_code=404, title="Mod not found",
                               message=f"No mod called “{slug}” is listed here. It may have been removed, "
                                       "or not indexed yet.")
        return cached_page(app, "mod.html", **mod_context(app, *data, range_key=range_key))

    # Today's date in the key, as the JSON analytics: the chart moves on at midnight, not at the TTL.
    return security.public(await cached(request, ("site-mod", slug, range_key, today), (mod_tag(slug),), compute))


def setup(app: web.Application) -> None:
    app.router.add_get("/", home, name="site-home")
    app.router.add_get("/mods/{slug}", mod_page, name="site-mod")
