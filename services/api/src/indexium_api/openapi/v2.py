"""The /v2 paths of our own OpenAPI document (GET /openapi.json), beside /api/v1's.

Components come from the Structs of v2/shapes.py, prefixed ``v2.``; parameters state the limits
params.py and routes.py enforce. Conformance with Modrinth's own document is tested separately
(tests/component/api/test_v2.py); this one is what schemathesis checks the server against.
"""

from __future__ import annotations

from ..core import apidoc
from ..settings import Settings
from ..v2 import params as v2params
from ..v2 import shapes
from ..core.hashes import MAX_FILTER_VALUES
from ..v2.files import ALGORITHMS
from ..v2.routes import DEFAULT_SEARCH_LIMIT, INDEXES, MAX_SEARCH_LIMIT

_KEY = {"type": "string", "pattern": v2params.KEY.pattern}
_JSON_STRINGS = {"type": "string", "maxLength": 2000, "pattern": "^[^\\u0000]*$",
                 "description": 'A JSON array of strings, e.g. ["fabric"].'}
_HASH = {"type": "string", "pattern": "^([0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{128})$"}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/v2.{name}"}


def _or_null(schema: dict) -> dict:
    return {"anyOf": [schema, {"type": "null"}]}


def _array(name: str) -> dict:
    return {"type": "array", "items": _ref(name)}


def _key(name: str = "id", description: str = "The project's id or slug.") -> dict:
    return {"name": name, "in": "path", "required": True, "schema": _KEY, "example": "sodium",
            "description": description}


def _get(op: str, summary: str, ok: dict, *, params=(), not_found: bool = True, **extra) -> dict:
    return {"get": {"operationId": op, "summary": summary, "parameters": list(params),
                    "responses": apidoc.responses(apidoc.ok(ok), not_found=not_found), **extra}}


def _post(op: str, summary: str, body: dict, ok: dict, *, params=(), not_found: bool = False) -> dict:
    responses = apidoc.responses(apidoc.ok(ok), cached=False, body=True, not_found=not_found)
    return {"post": {"operationId": op, "summary": summary, "parameters": list(params),
                     "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
                     "responses": responses}}


def document(settings: Settings) -> tuple[dict, dict]:
    strings = {"type": "array", "maxItems": MAX_FILTER_VALUES,
               "items": {"type": "string", "maxLength": 64, "pattern": "^[^\\u0000]*$"}}
    version_types = {"type": "array", "maxItems": 3, "items": {"type": "string", "enum": ["release", "beta", "alpha"]}}
    bulk = {"type": "array", "maxItems": settings.max_bulk_hashes, "items": _HASH}
    algorithm = {"type": "string", "enum": list(ALGORITHMS)}
    # Bodies are read as labrinth reads them: null stands for an absent field, others are ignored.
    filters = {"loaders": _or_null(strings), "game_versions": _or_null(strings),
               "version_types": _or_null(version_types)}
    hash_body = {"type": "object", "required": ["hashes"],
                 "properties": {"hashes": bulk, "algorithm": _or_null(algorithm)}}
    update_body = {"type": "object", "required": ["hashes"],
                   "properties": {"hashes": bulk, "algorithm": _or_null(algorithm), **filters}}
    version_map = {"type": "object", "additionalProperties": _ref("Version"),
                   "description": "Lower-cased hash -> version; unknown hashes are absent."}
    hash_param = {"name": "hash", "in": "path", "required": True, "schema": _HASH, "example": "0" * 40}
    algorithm_param = apidoc.query("algorithm", algorithm, "Detected from the hash's length when omitted.")
    ids = apidoc.query("ids", _JSON_STRINGS, f"At most {v2params.MAX_IDS} ids or slugs.")
    ids["required"] = True
    paths = {
        "/v2/search": _get("v2Search", "Search projects (facets hold per file)", _ref("SearchResults"), params=[
            apidoc.query("query", {"type": "string", "maxLength": 200, "pattern": "^[^\\u0000]*$"}, "Search text."),
            apidoc.query("facets", {"type": "string", "maxLength": 4000, "pattern": "^[^\\u0000]*$"},
                        'JSON array of arrays: [["categories:forge"], ["versions:1.20.1"]] (inner OR, outer AND).'),
            apidoc.query("index", {"type": "string", "enum": list(INDEXES), "default": "relevance"}, "The order."),
            apidoc.query("offset", {"type": "integer", "minimum": 0, "maximum": settings.max_offset, "default": 0},
                        "Hits to skip."),
            apidoc.query("limit", {"type": "integer", "minimum": 0, "maximum": MAX_SEARCH_LIMIT,
                                  "default": DEFAULT_SEARCH_LIMIT}, "Page size (over 100 is a 400)."),
            apidoc.query("filter", {"type": "string", "maxLength": 0}, "Modrinth's legacy filters: only empty."),
        ], not_found=False),
        "/v2/project/{id}": _get("v2Project", "A project by id or slug", _ref("Project"), params=[_key()]),
        "/v2/project/{id}/check": _get("v2CheckProject", "Whether a project exists", _ref("ProjectIdentifier"),
                                       params=[_key()]),
        "/v2/projects": _get("v2Projects", "Several projects", _array("Project"), params=[ids], not_found=False),
        "/v2/project/{id}/version": _get("v2ProjectVersions", "A project's public versions, newest first",
                                         _array("Version"), params=[
            _key(),
            apidoc.query("loaders", _JSON_STRINGS, "Loaders; with game_versions, both hold on one file."),
            apidoc.query("game_versions", _JSON_STRINGS, "Minecraft versions."),
            apidoc.query("featured", {"type": "boolean"}, "No version is featured here: true gives []."),
            apidoc.query("include_changelog", {"type": "boolean", "default": True}, "false: changelog is null."),
        ]),
        "/v2/project/{id}/version/{version}": _get(
            "v2ProjectVersion", "One version of a project by id or number (the release tag)", _ref("Version"),
            params=[_key(), {"name": "version", "in": "path", "required": True, "example": "0.5.3",
                             "schema": {"type": "string", "minLength": 1, "maxLength": 128,
                                        "pattern": "^[^\\u0000/]+$"}}]),
        "/v2/project/{id}/dependencies": _get("v2Dependencies", "The indexed mods the project's manifests depend on",
                                              _ref("DependencyList"), params=[_key()]),
        "/v2/version/{id}": _get("v2Version", "A version by id", _ref("Version"),
                                 params=[_key(description="The version's id.")]),
        "/v2/versions": _get("v2Versions", "Several versions by id", _array("Version"), params=[ids],
                             not_found=False),
        "/v2/version_file/{hash}": _get("v2VersionFile", "The version holding a file (multiple=true: every one)",
                                        {"anyOf": [_ref("Version"), _array("Version")]}, params=[
            hash_param, algorithm_param,
            apidoc.query("multiple", {"type": "boolean", "default": False}, "Every version holding the file.")]),
        "/v2/version_file/{hash}/download": {"get": {
            "operationId": "v2Download", "summary": "Redirect to the file on GitHub",
            "parameters": [hash_param, algorithm_param],
            "responses": {"302": {"description": "The GitHub release asset.",
                                  "headers": {"Location": {"schema": {"type": "string"}, "required": True}}},
                          **{k: v for k, v in apidoc.responses(apidoc.ok({}), cached=False, not_found=True).items()
                             if k != "200"}}}},
        "/v2/version_file/{hash}/update": _post(
            "v2Update", "The newest version for an installed file; never older than it",
            {"type": "object", "properties": filters}, _ref("Version"), params=[hash_param, algorithm_param],
            not_found=True),
        "/v2/version_files": _post("v2VersionFiles", "Versions of many files", hash_body, version_map),
        "/v2/version_files/update": _post("v2Updates", "The newest version for each installed file; never older",
                                          update_body, version_map),
        "/v2/version_files/update_many": _post(
            "v2UpdateMany", "Every allowed update for each installed file, newest first", update_body,
            {"type": "object", "additionalProperties": _array("Version")}),
        "/v2/tag/game_version": _get("v2TagGameVersion", "Minecraft versions", _array("GameVersionTag"),
                                     not_found=False),
        "/v2/tag/loader": _get("v2TagLoader", "Loaders", _array("LoaderTag"), not_found=False),
        "/v2/tag/category": _get("v2TagCategory", "The category vocabulary (Modrinth's mod categories)",
                                 _array("CategoryTag"), not_found=False),
        "/v2/tag/license": _get("v2TagLicense", "Licenses", _array("LicenseTag"), not_found=False),
        "/v2/tag/license/{id}": _get(
            "v2LicenseText", "A license's title, and where SPDX publishes its text (none is shipped)",
            _ref("LicenseText"),
            params=[{"name": "id", "in": "path", "required": True, "example": "MIT",
                     "description": "An SPDX id of /v2/tag/license (any case; a deprecated short form such as "
                                    "GPL-3.0 too), LicenseRef-All-Rights-Reserved or LicenseRef-Unknown; "
                                    "any other id is a 404.",
                     "schema": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[^\\u0000/]+$"}}]),
        "/v2/tag/donation_platform": _get(
            "v2TagDonationPlatform", "Donation platforms: none (projects here carry no donation links)",
            _array("DonationPlatformTag"), not_found=False),
        "/v2/tag/report_type": _get("v2TagReportType", "Report types: none (reports are not taken here)",
                                    {"type": "array", "items": {"type": "string"}}, not_found=False),
        "/v2/tag/project_type": _get("v2TagProjectType", "Project types", {"type": "array", "items": {"type": "string"}},
                                     not_found=False),
        "/v2/tag/side_type": _get("v2TagSideType", "Side types", {"type": "array", "items": {"type": "string"}},
                                  not_found=False),
        "/updates/{id}/forge_updates.json": _get(
            "forgeUpdates", "Forge's update-checker file, promoting the mod's own (manifest) version",
            _ref("ForgeUpdates"), params=[_key(), apidoc.query("neoforge", {"type": "string", "enum": ["only", "include"]},
                                                              "NeoForge files only, or as well as Forge.")]),
    }
    return paths, apidoc.components(shapes.COMPONENTS, prefix="v2.")
