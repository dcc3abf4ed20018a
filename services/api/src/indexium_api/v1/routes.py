"""Public catalogue routes under /api/v1: search, mod cards, versions, icons, tags."""

from __future__ import annotations

from aiohttp import web

from indexium_db.queries import catalog as catalog_q
from indexium_search import sqlpath
from indexium_jar import gameversions
from indexium_jar import formats
from indexium_platform.web import error_response

from indexium_contracts.slugs import is_slug
from ..core import params, search_index
from . import build
from ..core.cache import Key
from ..core.respond import GLOBAL, Cached, browse_total, cached, hit, mod_tag, no_mod, not_found, parsed_once
from ..core.state import API

BASE = build.BASE
TAGS_TTL_S = 3600.0  # static tables: the shipped loader list and Minecraft version table
ICON_CACHE_CONTROL = "public, max-age=3600"


def _slug(request: web.Request) -> str | None:
    slug = request.match_info["slug"]
    return slug if is_slug(slug) else None  # cannot exist: 404 without a query


def _search_query(request: web.Request) -> sqlpath.SearchQuery:
    s = request.app[API].settings
    q = params.text(request, "q")
    return sqlpath.SearchQuery(
        q=" ".join(q.split()) if q else None,
        game_versions=params.texts(request, "game_version"),
        loaders=params.texts(request, "loader", max_len=32),
        limit=params.integer(request, "limit", default=s.default_limit, low=1, high=s.max_limit),
        offset=params.integer(request, "offset", default=0, low=0, high=s.max_offset),
        sort=params.choice(request, "sort", sqlpath.SORTS),
        environment=params.choice(request, "environment", sqlpath.ENVIRONMENTS),
        categories=params.categories(request),
        author=params.text(request, "author", max_len=64),
        project_type=params.choice(request, "type", formats.PROJECT_TYPES),
    )


def _search(request: web.Request) -> tuple[sqlpath.SearchQuery, Key]:
    sq = _search_query(request)
    return sq, Key("search", sq)


async def search_mods(request: web.Request) -> web.Response:
    api = request.app[API]
    sq, key = parsed_once(request, "v1", _search, api)
    if (answer := hit(request, key, (GLOBAL,), api=api)) is not None:
        return answer

    async def compute():
        total = await browse_total(api, sq)
        with api.metrics.search_seconds.time():
            index = await search_index.settled(api)  # (before the connection: the wait holds none)
            rows, total = await api.db.run(search_index.search, api, sq, total, index=index)
        return 200, build.search(rows, total, sq.limit, sq.offset)

    return await cached(request, key, (GLOBAL,), compute)


async def get_mod(request: web.Request) -> web.Response:
    api = request.app[API]
    slug = _slug(request)
    if slug is None:
        return _missing_mod(request)

    async def compute():
        row = await api.db.run(catalog_q.mod_by_slug, slug, readme=True)
        return (200, build.mod(row)) if row else no_mod(slug)

    return await cached(request, ("mod", slug), (mod_tag(slug),), compute)


async def list_versions(request: web.Request) -> web.Response:
    api = request.app[API]
    filters = {
        "game_versions": params.texts(request, "game_version"),
        "loaders": params.texts(request, "loader", max_len=32),
        "version_types": params.choices(request, "version_type", catalog_q.VERSION_TYPES),
    }
    slug = _slug(request)
    if slug is None:
        return _missing_mod(request)

    async def compute():
        mod, rows = await _mod_by_slug_with(api, slug, lambda conn, mod_id: catalog_q.versions_of(conn, mod_id, **filters))
        if mod is None:
            return no_mod(slug)
        return 200, [build.version(v) for v in rows]

    key = ("versions", slug, *filters.values())
    return await cached(request, key, (mod_tag(slug),), compute)


async def get_version(request: web.Request) -> web.Response:
    api = request.app[API]
    number = params.clean("version_number", request.match_info["version_number"], 128)
    slug = _slug(request)
    if slug is None:
        return _missing_mod(request)

    async def compute():
        mod, version = await _mod_by_slug_with(api, slug, lambda conn, mod_id: catalog_q.version_by_number(conn, mod_id, number))
        if mod is None:
            return no_mod(slug)
        if version is None:
            return not_found(f"Mod '{slug}' has no public version '{number}'.")
        return 200, build.version(version)

    return await cached(request, ("version", slug, number), (mod_tag(slug),), compute)


async def get_icon(request: web.Request) -> web.Response:
    api = request.app[API]
    slug = _slug(request)
    if slug is None:  # cannot exist: answered without the cache (one key for every bad slug would mix them)
        return _missing_mod(request)

    async def compute():
        row = await api.db.run(catalog_q.icon, slug)
        if row is None:
            return not_found(f"No icon for mod '{slug}'.")
        return Cached(200, bytes(row["data"]), row["etag"], row["content_type"])

    return await cached(request, ("icon", slug), (mod_tag(slug),), compute, cache_control=ICON_CACHE_CONTROL)


async def _mod_by_slug_with(api, slug: str, then):
    """The listed mod's row and ``then(conn, mod_id)``, on one connection; (None, None) when
    there is no such mod."""
    async def query(conn):
        row = await catalog_q.mod_by_slug(conn, slug)
        return row, (await then(conn, row["id"]) if row is not None else None)

    return await api.db.run(query)


def _missing_mod(request: web.Request) -> web.Response:
    return error_response(404, "not_found", f"No mod with slug '{request.match_info['slug'][:64]}'.")


async def tag_loaders(request: web.Request) -> web.Response:
    async def compute():
        return 200, [build.loader_tag(name) for name in formats.LOADERS]

    return await cached(request, ("tags", "loaders"), (), compute, ttl=TAGS_TTL_S)


async def tag_game_versions(request: web.Request) -> web.Response:
    async def compute():
        return 200, [build.game_version(v) for v in gameversions.default_table().versions]

    return await cached(request, ("tags", "game-versions"), (), compute, ttl=TAGS_TTL_S)


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get(f"{BASE}/mods", search_mods)
    r.add_get(f"{BASE}/mods/{{slug}}", get_mod)
    r.add_get(f"{BASE}/mods/{{slug}}/versions", list_versions)
    r.add_get(f"{BASE}/mods/{{slug}}/versions/{{version_number:.+}}", get_version)
    r.add_get(f"{BASE}/mods/{{slug}}/icon", get_icon)
    r.add_get(f"{BASE}/tags/loaders", tag_loaders)
    r.add_get(f"{BASE}/tags/game-versions", tag_game_versions)
