"""GET routes of /v2: search, projects, versions, tags. Query logic is libs/db's (catalog,
modrinth); this module only reads parameters and shapes answers (build.py, shapes.py).

Caching is /api/v1's: an answer about one mod asked by slug is tagged with that mod, so the
same version events drop v1 and v2 entries alike; answers asked by id (the slug is unknown
until the query ran) and listings are tagged ``global``, which every version event drops.
"""

from __future__ import annotations

from aiohttp import web

from indexium_content import categories as vocabulary
from indexium_db.queries import modrinth as modrinth_q
from indexium_search import indexed, sqlpath
from indexium_jar import formats
from indexium_platform.web import error_response

from indexium_contracts.slugs import is_slug
from ..core import params, search_index
from ..core.cache import Key
from ..core.respond import GLOBAL, browse_total, cached, hit, mod_tag, not_found, parsed_once
from ..core.state import API
from . import build, licenses
from . import params as v2params
from .shapes import CategoryTag, DependencyList, LoaderTag, ProjectIdentifier, SearchResults

TAGS_TTL_S = 3600.0
# Modrinth's sort names -> ours. Nobody follows anything here, so "follows" is by downloads.
INDEXES = {"relevance": "relevance", "downloads": "downloads", "follows": "downloads", "newest": "newest",
           "updated": "updated"}
MAX_SEARCH_LIMIT = 100
DEFAULT_SEARCH_LIMIT = 10


def origin(request: web.Request) -> str:
    """Our public base URL (INDEXIUM_PUBLIC_URL): icon URLs must be absolute for a launcher to
    fetch them. Never the request's scheme and Host: behind TLS termination the scheme is
    http, and a Host the client chose would be written into answers (and an upstream cache
    that does not vary on Host would hand them to everyone)."""
    return request.app[API].settings.public_url.rstrip("/")


def key_of(request: web.Request, name: str = "id") -> str | None:
    key = request.match_info[name]
    return key if v2params.KEY.match(key) else None


def tags_for(key: str) -> tuple[str, ...]:
    return (mod_tag(key),) if is_slug(key) else (GLOBAL,)


def no_project(key: str) -> tuple[int, dict]:
    return not_found(f"No project with id or slug '{key[:64]}'.")


def missing(request: web.Request, name: str = "id") -> web.Response:
    # Cannot exist (not an id, not a slug): answered without a query or a cache entry.
    return web.json_response({"error": "not_found",
                              "description": f"No project with id or slug '{request.match_info[name][:64]}'."},
                             status=404)


def _search_query(request: web.Request) -> sqlpath.SearchQuery:
    s = request.app[API].settings
    q = params.text(request, "query")
    if params.text(request, "filter", max_len=400):
        raise params.bad("filter", "is not supported; use facets")
    groups = v2params.facet_groups(request)
    loaders, game_versions, rest = v2params.split_per_file(groups)
    index = params.choice(request, "index", tuple(INDEXES), default="relevance")
    return sqlpath.SearchQuery(
        q=" ".join(q.split()) if q else None, loaders=loaders, game_versions=game_versions, facets=rest,
        limit=params.integer(request, "limit", default=DEFAULT_SEARCH_LIMIT, low=0, high=MAX_SEARCH_LIMIT),
        offset=params.integer(request, "offset", default=0, low=0, high=s.max_offset),
        sort=INDEXES[index],
    )


def _search(request: web.Request) -> tuple[sqlpath.SearchQuery, Key]:
    sq = _search_query(request)
    return sq, Key("v2-search", sq)


async def search(request: web.Request) -> web.Response:
    api = request.app[API]
    sq, key = parsed_once(request, "v2", _search, api)
    if (answer := hit(request, key, (GLOBAL,), api=api)) is not None:
        return answer
    here = origin(request)

    async def query(conn, total, index):
        if sq.limit == 0:
            return [], await indexed.count(conn, sq, index=index), {}
        rows, total = await search_index.search(conn, api, sq, total, index=index)
        return rows, total, await modrinth_q.hit_extras(conn, [r["slug"] for r in rows])

    async def compute():
        total = await browse_total(api, sq)
        with api.metrics.search_seconds.time():
            if sq.limit == 0 and total is not None:  # only the count is wanted, and it is known
                rows, extras = [], {}
            else:
                index = await search_index.settled(api)  # (before the connection: the wait holds none)
                rows, total, extras = await api.db.run(query, total, index)
        hits = [build.hit(here, r, extras[r["slug"]]) for r in rows if r["slug"] in extras]
        return 200, SearchResults(hits=hits, offset=sq.offset, limit=sq.limit, total_hits=total)

    return await cached(request, key, (GLOBAL,), compute)


async def get_project(request: web.Request) -> web.Response:
    api = request.app[API]
    key = key_of(request)
    if key is None:
        return missing(request)
    here = origin(request)

    async def compute():
        row = await api.db.run(modrinth_q.project, key)
        return (200, build.project(here, row)) if row else no_project(key)

    return await cached(request, ("v2-project", key), tags_for(key), compute)


async def check_project(request: web.Request) -> web.Response:
    api = request.app[API]
    key = key_of(request)
    if key is None:
        return missing(request)

    async def compute():
        row = await api.db.run(modrinth_q.project, key)
        return (200, ProjectIdentifier(id=row["public_id"])) if row else no_project(key)

    return await cached(request, ("v2-check", key), tags_for(key), compute)


def _ids(request: web.Request) -> list[str]:
    ids = v2params.json_strings(request, "ids")
    if ids is None:
        raise params.bad("ids", 'is required: a JSON array of ids or slugs, e.g. ["AABBCCDD"]')
    for i in ids:
        if not v2params.KEY.match(i):
            raise params.bad("ids", f"entry {i[:40]!r} is not an id or a slug")
    return ids


async def get_projects(request: web.Request) -> web.Response:
    api = request.app[API]
    ids = _ids(request)
    here = origin(request)

    async def compute():
        rows = await api.db.run(modrinth_q.projects, ids)
        return 200, [build.project(here, r) for r in rows]

    return await cached(request, ("v2-projects", tuple(ids)), (GLOBAL,), compute)


async def project_and(api, key: str, then):
    async def query(conn):
        row = await modrinth_q.project(conn, key)
        return row, (await then(conn, row["id"]) if row is not None else None)

    return await api.db.run(query)


async def project_versions(request: web.Request) -> web.Response:
    api = request.app[API]
    loaders = v2params.json_strings(request, "loaders", max_values=params.MAX_VALUES, max_len=32) or []
    game_versions = v2params.json_strings(request, "game_versions", max_values=params.MAX_VALUES) or []
    featured = v2params.boolean(request, "featured", None)
    changelog = v2params.boolean(request, "include_changelog", True)
    key = key_of(request)
    if key is None:
        return missing(request)

    async def compute():
        row, versions = await project_and(
            api, key, lambda conn, mod_id: modrinth_q.versions_of(conn, mod_id, game_versions=game_versions,
                                                                loaders=loaders))
        if row is None:
            return no_project(key)
        if featured:  # nothing is featured here: no one picks versions by hand
            return 200, []
        return 200, [build.version(v, changelog=changelog) for v in versions]

    cache_key = ("v2-versions", key, tuple(loaders), tuple(game_versions), featured, changelog)
    return await cached(request, cache_key, tags_for(key), compute)


async def project_version(request: web.Request) -> web.Response:
    api = request.app[API]
    key = key_of(request)
    number = params.clean("version", request.match_info["version"], 128)
    if key is None:
        return missing(request)

    async def compute():
        row, version = await project_and(api, key, lambda conn, mod_id: modrinth_q.version_of_project(conn, mod_id,
                                                                                                     number))
        if row is None:
            return no_project(key)
        if version is None:
            return not_found(f"Project '{key}' has no public version '{number}'.")
        return 200, build.version(version)

    return await cached(request, ("v2-project-version", key, number), tags_for(key), compute)


async def get_version(request: web.Request) -> web.Response:
    api = request.app[API]
    vid = request.match_info["id"]
    if not v2params.KEY.match(vid):
        return error_response(404, "not_found", "No public version with that id.")

    async def compute():
        rows = await api.db.run(modrinth_q.versions_by_ids, [vid])
        return (200, build.version(rows[0])) if rows else not_found(f"No public version with id '{vid}'.")

    return await cached(request, ("v2-version", vid), (GLOBAL,), compute)


async def get_versions(request: web.Request) -> web.Response:
    api = request.app[API]
    ids = _ids(request)

    async def compute():
        rows = await api.db.run(modrinth_q.versions_by_ids, ids)
        return 200, [build.version(r) for r in rows]

    return await cached(request, ("v2-versions-by-id", tuple(ids)), (GLOBAL,), compute)


async def project_dependencies(request: web.Request) -> web.Response:
    api = request.app[API]
    key = key_of(request)
    if key is None:
        return missing(request)
    here = origin(request)

    async def compute():
        row, deps = await project_and(api, key, modrinth_q.dependencies)
        if row is None:
            return no_project(key)
        projects, versions = deps
        return 200, DependencyList(projects=[build.project(here, p) for p in projects],
                                   versions=[build.version(v, changelog=False) for v in versions])

    # Another mod's release changes what this answer shows: global, like listings.
    return await cached(request, ("v2-dependencies", key), (GLOBAL,), compute)


async def tag_game_version(request: web.Request) -> web.Response:
    async def compute():
        return 200, build.game_version_tags()

    return await cached(request, ("v2-tags", "game_version"), (), compute, ttl=TAGS_TTL_S)


async def tag_loader(request: web.Request) -> web.Response:
    async def compute():
        return 200, [LoaderTag(icon="", name=name, supported_project_types=formats.supported_project_types(name))
                     for name in formats.LOADERS]

    return await cached(request, ("v2-tags", "loader"), (), compute, ttl=TAGS_TTL_S)


async def tag_category(request: web.Request) -> web.Response:
    """The vocabulary every mod's categories come from (indexium_content.categories): a fixed
    list, as Modrinth's is, never the topics authors typed."""
    async def compute():
        return 200, [CategoryTag(icon="", name=n, project_type=formats.MOD, header="categories")
                     for n in vocabulary.CATEGORIES]

    return await cached(request, ("v2-tags", "category"), (), compute, ttl=TAGS_TTL_S)


async def tag_license(request: web.Request) -> web.Response:
    async def compute():
        return 200, licenses.tags()

    return await cached(request, ("v2-tags", "license"), (), compute, ttl=TAGS_TTL_S)


async def license_text(request: web.Request) -> web.Response:
    raw = params.clean("id", request.match_info["id"], 64)
    found = licenses.text(raw)
    if found is None:  # (not cached: the ids a client may invent are unbounded)
        return error_response(404, "not_found", f"No license with id {raw!r} here; /v2/tag/license lists them.")

    async def compute():
        return 200, found

    return await cached(request, ("v2-tags", "license", found.title), (), compute, ttl=TAGS_TTL_S)


async def tag_donation_platform(request: web.Request) -> web.Response:
    # None: a project's donation_urls are always empty here (manifests carry no donation links and
    # GitHub's FUNDING.yml is not read), so no platform can be named in one.
    async def compute():
        return 200, []

    return await cached(request, ("v2-tags", "donation_platform"), (), compute, ttl=TAGS_TTL_S)


async def tag_report_type(request: web.Request) -> web.Response:
    # None: nothing takes a report here (POST /v2/report is not served; docs/api.md "Not served").
    async def compute():
        return 200, []

    return await cached(request, ("v2-tags", "report_type"), (), compute, ttl=TAGS_TTL_S)


async def tag_project_type(request: web.Request) -> web.Response:
    async def compute():
        return 200, list(formats.PROJECT_TYPES)

    return await cached(request, ("v2-tags", "project_type"), (), compute, ttl=TAGS_TTL_S)


async def tag_side_type(request: web.Request) -> web.Response:
    async def compute():
        return 200, ["required", "optional", "unsupported", "unknown"]

    return await cached(request, ("v2-tags", "side_type"), (), compute, ttl=TAGS_TTL_S)


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/v2/search", search)
    r.add_get("/v2/project/{id}", get_project)
    r.add_get("/v2/project/{id}/check", check_project)
    r.add_get("/v2/project/{id}/version", project_versions)
    r.add_get("/v2/project/{id}/version/{version:.+}", project_version)
    r.add_get("/v2/project/{id}/dependencies", project_dependencies)
    r.add_get("/v2/projects", get_projects)
    r.add_get("/v2/version/{id}", get_version)
    r.add_get("/v2/versions", get_versions)
    r.add_get("/v2/tag/game_version", tag_game_version)
    r.add_get("/v2/tag/loader", tag_loader)
    r.add_get("/v2/tag/category", tag_category)
    r.add_get("/v2/tag/license", tag_license)
    r.add_get("/v2/tag/license/{id}", license_text)
    r.add_get("/v2/tag/donation_platform", tag_donation_platform)
    r.add_get("/v2/tag/report_type", tag_report_type)
    r.add_get("/v2/tag/project_type", tag_project_type)
    r.add_get("/v2/tag/side_type", tag_side_type)
