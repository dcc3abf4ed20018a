"""/api/v1's paths in our OpenAPI document (GET /openapi.json): written here, next to the
limits params.py enforces; the components come from the Structs of v1/shapes.py. The routes
of players.py, analytics.py and subscriptions.py add theirs with ``apidoc.register``."""

from __future__ import annotations

from indexium_content import categories as vocabulary
from indexium_contracts.slugs import SLUG_PATTERN
from indexium_db.queries import catalog as catalog_q
from indexium_search import sqlpath
from indexium_jar import formats

from ..core import apidoc
from ..settings import Settings
from ..v1 import shapes


def _slug() -> dict:
    return {"name": "slug", "in": "path", "required": True, "example": "sodium",
            "schema": {"type": "string", "pattern": SLUG_PATTERN}}


def _facets(max_values: int = 20) -> list[dict]:
    return [
        apidoc.query("game_version", {"type": "array", "maxItems": max_values,
                                "items": {"type": "string", "maxLength": 64, "pattern": apidoc.NO_NUL}},
               "Minecraft versions (repeat for any of several).", explode=True),
        apidoc.query("loader", {"type": "array", "maxItems": max_values,
                          "items": {"type": "string", "maxLength": 32, "pattern": apidoc.NO_NUL}},
               "Loaders (repeat for any of several). With game_version, both must hold on one file.",
               explode=True),
    ]


def paths(settings: Settings) -> dict:
    """/api/v1's own routes (relative to /api/v1): those of routes.py and files.py."""
    hash_pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{128})$"
    bulk = {"type": "array", "maxItems": settings.max_bulk_hashes,
            "items": {"type": "string", "pattern": hash_pattern}}
    algorithm = {"type": "string", "enum": ["sha1", "sha256", "sha512"]}
    version_map = {"type": "object", "additionalProperties": apidoc.ref("Version"),
                   "description": "Lower-cased hash -> version. Unknown hashes are absent."}
    mod_versions = [_slug(), *_facets(),
                    apidoc.query("version_type", {"type": "array", "maxItems": 3,
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
                apidoc.query("q", {"type": "string", "maxLength": 200, "pattern": apidoc.NO_NUL, "example": "sodium"},
                       "Search text."),
                *_facets(),
                apidoc.query("environment", {"type": "string", "enum": list(sqlpath.ENVIRONMENTS)},
                       "Mods that run there: environment=client matches client and both."),
                apidoc.query("category", {"type": "array", "maxItems": 20,
                                    "items": {"type": "string", "enum": list(vocabulary.CATEGORIES)}},
                       "Categories (the vocabulary of GET /v2/tag/category, Modrinth's); every one given must "
                       "match. A synonym (tech, performance) means its category; anything else is a 400.",
                       explode=True),
                apidoc.query("author", {"type": "string", "maxLength": 64, "pattern": apidoc.NO_NUL},
                       "A manifest author or the repository owner's login (case-insensitive)."),
                apidoc.query("type", {"type": "string", "enum": list(formats.PROJECT_TYPES)},
                       "A project type: the meaning of /v2's project_type facet (mod matches plugins too, "
                       "plugin matches mods with a plugin loader)."),
                apidoc.query("sort", {"type": "string", "enum": list(sqlpath.SORTS)},
                       "Default: relevance with q, updated without."),
                apidoc.query("limit", {"type": "integer", "minimum": 1, "maximum": settings.max_limit,
                                 "default": settings.default_limit}, "Page size (over the maximum is a 400)."),
                apidoc.query("offset", {"type": "integer", "minimum": 0, "maximum": settings.max_offset,
                                  "default": 0}, "Hits to skip."),
            ],
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("SearchResult"))),
        }},
        "/mods/{slug}": {"get": {
            "operationId": "getMod", "summary": "A mod's card", "parameters": [_slug()],
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("Mod")), not_found=True),
        }},
        "/mods/{slug}/versions": {"get": {
            "operationId": "listVersions",
            "summary": "A mod's public versions, newest first (version order, then publish time)",
            "parameters": mod_versions,
            "responses": apidoc.responses(apidoc.ok({"type": "array", "items": apidoc.ref("Version")}), not_found=True),
        }},
        "/mods/{slug}/versions/{version_number}": {"get": {
            "operationId": "getVersion", "summary": "One public version",
            "parameters": [_slug(), {"name": "version_number", "in": "path", "required": True,
                                     "example": "0.5.3",
                                     "schema": {"type": "string", "minLength": 1, "maxLength": 128,
                                                "pattern": "^[^\\u0000/]+$"}}],
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("Version")), not_found=True),
        }},
        "/mods/{slug}/icon": {"get": {
            "operationId": "getIcon", "summary": "The mod's icon", "parameters": [_slug()],
            "responses": apidoc.responses({"description": "PNG or JPEG", "content": {
                "image/png": {"schema": {"type": "string", "format": "binary"}},
                "image/jpeg": {"schema": {"type": "string", "format": "binary"}}}}, not_found=True),
        }},
        "/versions/by-hash/{hash}": {"get": {
            "operationId": "versionByHash", "summary": "The public version holding a file",
            "parameters": [
                {"name": "hash", "in": "path", "required": True, "schema": {"type": "string", "pattern": hash_pattern},
                 "example": "0" * 40},
                apidoc.query("algorithm", algorithm, "sha1, sha256 or sha512; detected from the length when omitted "
                                               "(a length that does not fit the algorithm is a 400)."),
            ],
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("Version")), not_found=True),
        }},
        "/versions/by-hashes": {"post": {
            "operationId": "versionsByHashes", "summary": "Many hashes at once (one request for the rate limit)",
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "additionalProperties": False, "required": ["hashes"],
                "properties": {"hashes": bulk, "algorithm": algorithm}}}}},
            "responses": apidoc.responses(apidoc.ok(version_map), cached=False, body=True),
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
                                "items": {"type": "string", "maxLength": 32, "pattern": apidoc.NO_NUL}},
                    "game_versions": {"type": "array", "maxItems": 50,
                                      "items": {"type": "string", "maxLength": 64, "pattern": apidoc.NO_NUL}},
                    "version_types": {"type": "array", "maxItems": 50,
                                      "items": {"type": "string", "enum": list(catalog_q.VERSION_TYPES)}},
                }}}}},
            "responses": apidoc.responses(apidoc.ok(version_map), cached=False, body=True),
        }},
        "/tags/loaders": {"get": {
            "operationId": "tagLoaders", "summary": "Loaders the index knows",
            "responses": apidoc.responses(apidoc.ok({"type": "array", "items": apidoc.ref("LoaderTag")})),
        }},
        "/tags/game-versions": {"get": {
            "operationId": "tagGameVersions", "summary": "Minecraft versions, newest first",
            "responses": apidoc.responses(apidoc.ok({"type": "array", "items": apidoc.ref("GameVersionTag")})),
        }},
    }


def schemas() -> dict:
    return apidoc.components(shapes.COMPONENTS)
