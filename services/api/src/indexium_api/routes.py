"""Public routes under /api/v1."""

from __future__ import annotations

import asyncpg
from aiohttp import web

from indexium_db.queries import catalog
from indexium_platform.web import ApiError, json_response

from . import params, views
from .settings import Settings

BASE = "/api/v1"
READ_POOL = web.AppKey("read_pool", asyncpg.Pool)
SETTINGS = web.AppKey("settings", Settings)


def _not_found(slug: str) -> ApiError:
    return ApiError(404, "not_found", f"No mod with slug '{slug}'.")


async def search_mods(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    sq = catalog.SearchQuery(
        q=params.text(request, "q"),
        game_version=params.text(request, "game_version", max_len=64),
        loader=params.text(request, "loader", max_len=32),
        limit=params.integer(request, "limit", default=settings.default_limit, low=1, high=settings.max_limit),
        offset=params.integer(request, "offset", default=0, low=0, high=100_000),
    )
    async with request.app[READ_POOL].acquire() as conn:
        rows, total = await catalog.search(conn, sq)
    return json_response({
        "hits": [views.hit(r) for r in rows], "total": total, "limit": sq.limit, "offset": sq.offset,
    })


async def get_mod(request: web.Request) -> web.Response:
    slug = request.match_info["slug"]
    async with request.app[READ_POOL].acquire() as conn:
        row = await catalog.mod_by_slug(conn, slug)
    if row is None:
        raise _not_found(slug)
    return json_response(views.mod(row, BASE))


async def list_versions(request: web.Request) -> web.Response:
    slug = request.match_info["slug"]
    async with request.app[READ_POOL].acquire() as conn:
        row = await catalog.mod_by_slug(conn, slug)
        if row is None:
            raise _not_found(slug)
        versions = await catalog.versions_of(conn, row["id"])
    return json_response([views.version(v) for v in versions])


async def get_icon(request: web.Request) -> web.Response:
    slug = request.match_info["slug"]
    async with request.app[READ_POOL].acquire() as conn:
        row = await catalog.icon(conn, slug)
    if row is None:
        raise ApiError(404, "not_found", f"No icon for mod '{slug}'.")
    headers = {"ETag": row["etag"], "Cache-Control": "public, max-age=3600"}
    if request.headers.get("If-None-Match") == row["etag"]:
        return web.Response(status=304, headers=headers)
    return web.Response(body=row["data"], content_type=row["content_type"], headers=headers)


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get(f"{BASE}/mods", search_mods)
    r.add_get(f"{BASE}/mods/{{slug}}", get_mod)
    r.add_get(f"{BASE}/mods/{{slug}}/versions", list_versions)
    r.add_get(f"{BASE}/mods/{{slug}}/icon", get_icon)
