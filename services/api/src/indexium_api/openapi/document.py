"""GET /openapi.json: the OpenAPI 3.1 description of what this server really does.

Component schemas are generated from the msgspec Structs that encode the answers
(shapes.py for /api/v1, v2/shapes.py for /v2); paths and parameters are written here, next
to the limits params.py enforces.

Kept next to the handlers and checked against them by a schemathesis property test
(tests/integration/api/test_openapi_contract.py): every documented parameter limit is
the one params.py enforces, every status a route can answer is listed. Other modules
(analytics) add their paths with :func:`register` before the app starts.
"""

from __future__ import annotations

import copy

import msgspec
from aiohttp import web

from indexium_content import categories as vocabulary
from indexium_db.queries import catalog as catalog_q
from indexium_jar import formats

from indexium_contracts.slugs import SLUG_PATTERN
from ..v1 import shapes
from ..core.respond import Cached, make
from ..settings import Settings
from ..v1.build import BASE

EXTRA = web.AppKey("openapi_extra", list)
DOCUMENT = web.AppKey("openapi_document", Cached)
_NO_NUL = "^[^\\u0000]*$"


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


_HEADERS_CACHED = {
    "ETag": {"description": "Strong validator of the body; send it back in If-None-Match.",
             "schema": {"type": "string"}, "required": True},
    "Cache-Control": {"schema": {"type": "string"}, "required": True},
    "X-Cache": {"description": "This replica's cache: HIT, MISS or STALE.",
                "schema": {"type": "string", "enum": ["HIT", "MISS", "STALE"]}, "required": True},
    "X-RateLimit-Limit": {"schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer"}},
}
# A 404 from the cache carries them; one for a slug that cannot exist (never queried) does not.
_HEADERS_404 = {name: {k: v for k, v in spec.items() if k != "required"} for name, spec in _HEADERS_CACHED.items()}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "required": True}}


def _error(description: str, headers: dict | None = None) -> dict:
    out = {"description": description, "content": {"application/json": {"schema": _ref("Error")}}}
    if headers:
        out["headers"] = headers
    return out


def _responses(ok: dict, *, cached: bool = True, not_found: bool = False, body: bool = False) -> dict:
    out = {"200": ok}
    if cached:
        out["200"]["headers"] = _HEADERS_CACHED
        out["304"] = {"description": "Not modified (If-None-Match matched the ETag).",
                      "headers": {"ETag": {"schema": {"type": "string"}}}}
    out["400"] = _error("A parameter (or the body) is invalid; the description names it.")
    if not_found:
        out["404"] = _error("No such mod, version or file.", _HEADERS_404 if cached else None)
    if body:
        out["413"] = _error("The body is larger than 1 MiB.")
    out["429"] = _error("Rate limit exceeded (rate_limited), or more than the client's cap of uncached requests "
                        "at once (too_many_in_flight).", _RETRY_AFTER)
    out["503"] = _error("PostgreSQL is unavailable and no cached answer exists.", _RETRY_AFTER)
    return out


def _json(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _query(name: str, schema: dict, description: str, *, explode: bool = False) -> dict:
    p = {"name": name, "in": "query", "required": False, "schema": schema, "description": description}
    if explode:
        p.update(style="form", explode=True)
    return p


def _slug() -> dict:
    return {"name": "slug", "in": "path", "required": True, "example": "sodium",
            "schema": {"type": "string", "pattern": SLUG_PATTERN}}


def _facets(max_values: int = 20) -> list[dict]:
    return [
        _query("game_version", {"type": "array", "maxItems": max_values,
                                "items": {"type": "string", "maxLength": 64, "pattern": _NO_NUL}},
               "Minecraft versions (repeat for any of several).", explode=True),
        _query("loader", {"type": "array", "maxItems": max_values,
                          "items": {"type": "string", "maxLength": 32, "pattern": _NO_NUL}},
               "Loaders (repeat for any of several). With game_version, both must hold on one file.",
               explode=True),
    ]


def _paths(settings: Settings) -> dict:
    hash_pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{128})$"
    bulk = {"type": "array", "maxItems": settings.max_bulk_hashes,
            "items": {"type": "string", "pattern": hash_pattern}}
    algorithm = {"type": "string", "enum": ["sha1", "sha256", "sha512"]}
    version_map = {"type": "object", "additionalProperties": _ref("Version"),
                   "description": "Lower-cased hash -> version. Unknown hashes are absent."}
    mod_versions = [_slug(), *_facets(),
                    _query("version_type", {"type": "array", "maxItems": 3,
                                            "items": {"type": "string", "enum": list(catalog_q.VERSION_TYPES)}},
                           "Version types (repeat for any of several).", explode=True)]
    return {
        "/mods": {"get": {
            "operationId": "searchMods",
            "summary": "Search listed mods",
            "description": "Full text over name, summary and authors (English and Russian stemming, "
                           "prefix matching of the last word, trigram typo tolerance on names when full "
                           "text finds nothing). Facets match per file.",
            "parameters": [
                _query("q", {"type": "string", "maxLength": 200, "pattern": _NO_NUL, "example": "sodium"},
                       "Search text."),
                *_facets(),
                _query("environment", {"type": "string", "enum": list(catalog_q.ENVIRONMENTS)},
                       "Mods that run there: environment=client matches client and both."),
                _query("category", {"type": "array", "maxItems": 20,
                                    "items": {"type": "string", "enum": list(vocabulary.CATEGORIES)}},
                       "Categories (the vocabulary of GET /v2/tag/category, Modrinth's); every one given must "
                       "match. A synonym (tech, performance) means its category; anything else is a 400.",
                       explode=True),
                _query("author", {"type": "string", "maxLength": 64, "pattern": _NO_NUL},
                       "A manifest author or the repository owner's login (case-insensitive)."),
                _query("type", {"type": "string", "enum": list(formats.PROJECT_TYPES)},
                       "A project type: the meaning of /v2's project_type facet (mod matches plugins too, "
                       "plugin matches mods with a plugin loader)."),
                _query("sort", {"type": "string", "enum": list(catalog_q.SORTS)},
                       "Default: relevance with q, updated without."),
                _query("limit", {"type": "integer", "minimum": 1, "maximum": settings.max_limit,
                                 "default": settings.default_limit}, "Page size (over the maximum is a 400)."),
                _query("offset", {"type": "integer", "minimum": 0, "maximum": settings.max_offset,
                                  "default": 0}, "Hits to skip."),
            ],
            "responses": _responses(_json(_ref("SearchResult"))),
        }},
        "/mods/{slug}": {"get": {
            "operationId": "getMod", "summary": "A mod's card", "parameters": [_slug()],
            "responses": _responses(_json(_ref("Mod")), not_found=True),
        }},
        "/mods/{slug}/versions": {"get": {
            "operationId": "listVersions",
            "summary": "A mod's public versions, newest first (version order, then publish time)",
            "parameters": mod_versions,
            "responses": _responses(_json({"type": "array", "items": _ref("Version")}), not_found=True),
        }},
        "/mods/{slug}/versions/{version_number}": {"get": {
            "operationId": "getVersion", "summary": "One public version",
            "parameters": [_slug(), {"name": "version_number", "in": "path", "required": True,
                                     "example": "0.5.3",
                                     "schema": {"type": "string", "minLength": 1, "maxLength": 128,
                                                "pattern": "^[^\\u0000/]+$"}}],
            "responses": _responses(_json(_ref("Version")), not_found=True),
        }},
        "/mods/{slug}/icon": {"get": {
            "operationId": "getIcon", "summary": "The mod's icon", "parameters": [_slug()],
            "responses": _responses({"description": "PNG or JPEG", "content": {
                "image/png": {"schema": {"type": "string", "format": "binary"}},
                "image/jpeg": {"schema": {"type": "string", "format": "binary"}}}}, not_found=True),
        }},
        "/versions/by-hash/{hash}": {"get": {
            "operationId": "versionByHash", "summary": "The public version holding a file",
            "parameters": [
                {"name": "hash", "in": "path", "required": True, "schema": {"type": "string", "pattern": hash_pattern},
                 "example": "0" * 40},
                _query("algorithm", algorithm, "sha1, sha256 or sha512; detected from the length when omitted "
                                               "(a length that does not fit the algorithm is a 400)."),
            ],
            "responses": _responses(_json(_ref("Version")), not_found=True),
        }},
        "/versions/by-hashes": {"post": {
            "operationId": "versionsByHashes", "summary": "Many hashes at once (one request for the rate limit)",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "required": ["hashes"],
                "properties": {"hashes": bulk, "algorithm": algorithm}}}}},
            "responses": _responses(_json(version_map), cached=False, body=True),
        }},
        "/versions/update-check": {"post": {
            "operationId": "updateCheck",
            "summary": "For each hash, the newest version of its mod matching the filters; never older",
            "description": "Loaders and game versions must hold on one file. A hash whose installed version "
                           "is newer than everything that matches is absent, as are unknown hashes.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "required": ["hashes"],
                "properties": {
                    "hashes": bulk, "algorithm": algorithm,
                    "loaders": {"type": "array", "maxItems": 50,
                                "items": {"type": "string", "maxLength": 32, "pattern": _NO_NUL}},
                    "game_versions": {"type": "array", "maxItems": 50,
                                      "items": {"type": "string", "maxLength": 64, "pattern": _NO_NUL}},
                    "version_types": {"type": "array", "maxItems": 50,
                                      "items": {"type": "string", "enum": list(catalog_q.VERSION_TYPES)}},
                }}}}},
            "responses": _responses(_json(version_map), cached=False, body=True),
        }},
        "/tags/loaders": {"get": {
            "operationId": "tagLoaders", "summary": "Loaders the index knows",
            "responses": _responses(_json({"type": "array", "items": _ref("LoaderTag")})),
        }},
        "/tags/game-versions": {"get": {
            "operationId": "tagGameVersions", "summary": "Minecraft versions, newest first",
            "responses": _responses(_json({"type": "array", "items": _ref("GameVersionTag")})),
        }},
    }


def components(types, prefix: str = "") -> dict:
    """OpenAPI component schemas generated from msgspec Structs (the encoders of the answers);
    ``prefix`` keeps two surfaces' same-named shapes apart (v1 ``Version``, v2 ``v2.Version``)."""
    _, schemas = msgspec.json.schema_components(types, ref_template="#/components/schemas/" + prefix + "{name}")
    return {prefix + name: schema for name, schema in schemas.items()}


def document(settings: Settings, extra: list[tuple[dict, dict]] = ()) -> dict:
    from . import v2  # noqa: PLC0415 - v2 builds on this module's helpers

    paths, schemas = _paths(settings), components(shapes.COMPONENTS)
    for more_paths, more_schemas in extra:
        paths.update(more_paths)
        schemas.update(copy.deepcopy(more_schemas))
    paths = {BASE + path: item for path, item in paths.items()}
    v2_paths, v2_schemas = v2.document(settings)
    paths.update(v2_paths)
    schemas.update(v2_schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Indexium public API", "version": "1.0.0",
                 "description": "Minecraft mods published as GitHub Releases. Errors are "
                                "{\"error\": code, \"description\": text}. See docs/api.md."},
        # Paths are absolute: /api/v1/... and the Modrinth-compatible /v2/... share one server.
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


def register(app: web.Application, paths: dict, schemas: dict | None = None) -> None:
    """Add paths (relative to /api/v1) and component schemas; call before the app starts."""
    app.setdefault(EXTRA, []).append((paths, schemas or {}))


async def serve(request: web.Request) -> web.Response:
    doc = request.app[DOCUMENT]
    return web.Response(body=doc.body, content_type="application/json",
                        headers={"ETag": doc.etag, "Cache-Control": "public, max-age=300"})


def setup(app: web.Application, settings: Settings) -> None:
    """Call after every other module has registered its paths."""
    app[DOCUMENT] = make(200, document(settings, app.get(EXTRA, [])))
    app.router.add_get(f"{BASE}/openapi.json", serve)
    app.router.add_get("/openapi.json", serve)
