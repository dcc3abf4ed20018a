"""Tools for players (docs/players.md): resolve a pack, export it, and "can I upgrade?".

* ``POST /api/v1/resolve``: one file per mod from what the jars declare (``indexium_jar.deps``
  over ``queries/packs.py``), the dependencies it added with why, "not on Indexium" ones, or
  why there is no solution.
* ``GET``/``POST /api/v1/packs/export?format=mrpack|packwiz``: the same resolution as a pack
  (``packexport.py``); GET takes the body's fields as query parameters.
* ``POST /api/v1/upgrade-check``: per installed file (by hash), the newest version for the
  target game version or "none yet", and whether a dependency blocks it.

Every route counts against the API's rate limit like any other (edge.py) and holds one of its
client's in-flight slots while it computes (respond.query); bodies are bounded by the app's
body limit and the lists in them by ``MAX_MODS`` and ``MAX_UPGRADE_HASHES``. Answers are
deterministic and never cached (each player's list is their own). The resolver and the upgrade
check themselves are ``core/players.py``'s, shared with the site's pages.
"""

from __future__ import annotations

from aiohttp import web

from indexium_jar import formats
from indexium_platform.web import ApiError, json_response

from ..core import apidoc, bodies, hashes, packexport, params
from ..core.players import (
    LOADERS, MAX_MODS, MAX_NAME, MAX_REF, MAX_UPGRADE_HASHES, ResolveAnswer, ResolveBody, UpgradeAnswer,
    UpgradeBody, as_uuid, check_body, check_game, check_loader, run_resolve, run_upgrade_check,
)
from ..core.respond import query
from .build import BASE

_VERSION_ID = "1.0.0"


def _json(payload) -> web.Response:
    return json_response(payload, headers={"Cache-Control": "no-store"})


async def resolve(request: web.Request) -> web.Response:
    body = check_body(await bodies.read(request, ResolveBody))
    answer, _, _ = await query(request, run_resolve, body)
    return _json(answer)


# ---- export -------------------------------------------------------------------------------------

def _from_query(request: web.Request) -> ResolveBody:
    q = params._query(request)  # (checked to be UTF-8)
    missing = [n for n in ("loader", "game_version", "mod") if not q.get(n)]
    if missing:
        raise params.bad(missing[0], "is required")
    optional = q.get("include_optional", "false")
    if optional not in ("true", "false"):
        raise params.bad("include_optional", "must be true or false")
    mods = q.getall("mod")
    if len(mods) > MAX_MODS:
        raise params.bad("mod", f"may be given at most {MAX_MODS} times")
    return ResolveBody(q["loader"], q["game_version"], mods, optional == "true", q.get("name"), q.get("loader_version"))


async def export(request: web.Request) -> web.Response:
    fmt = params.choice(request, "format", packexport.FORMATS)
    if fmt is None:
        raise params.bad("format", f"is required: one of {', '.join(packexport.FORMATS)}")
    body = check_body(_from_query(request) if request.method == "GET" else await bodies.read(request, ResolveBody))
    if body.loader not in packexport.EXPORT_LOADERS:
        raise params.bad("loader", f"must be one of {', '.join(packexport.EXPORT_LOADERS)} for a pack")
    answer, resolution, rows = await query(request, run_resolve, body)
    if not answer.ok:
        raise ApiError(409, "no_solution", f"No pack: {answer.problem}")
    loader_version = packexport.loader_version(body.loader, body.loader_version, resolution.platform,
                                                body.game_version)
    files = []
    for p in answer.mods:
        f = rows[as_uuid(next(x.file_id for x in resolution.picks if x.mod_id == p.mod_id))]
        if not p.file.sha1 or not p.file.sha512:
            raise ApiError(409, "not_hashed", f"{p.name} {p.version} is not hashed yet; a pack needs its sha1 "
                                              "and sha512. Try again in a few minutes.")
        if not p.file.url:
            raise ApiError(409, "no_download", f"{p.name} {p.version} has no download URL we can serve.")
        files.append(packexport.PackFile(p.slug, p.name, p.file.filename, p.file.url, p.file.size, p.file.sha1,
                                         p.file.sha512, packexport.side_of(f["environments"])))
    name = body.name or f"Indexium pack ({body.game_version})"
    build = packexport.mrpack if fmt == "mrpack" else packexport.packwiz
    data = build(name, _VERSION_ID, body.game_version, body.loader, loader_version, files)
    stem = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)[:60] or "pack"
    suffix, kind = ((formats.BY_NAME[formats.MODPACK].suffixes[0], "application/x-modrinth-modpack+zip") if fmt == "mrpack"
                    else ("-packwiz.zip", "application/zip"))
    return web.Response(body=data, content_type=kind, headers={
        "Content-Disposition": f'attachment; filename="{stem}{suffix}"', "Cache-Control": "no-store"})


async def upgrade_check(request: web.Request) -> web.Response:
    body = await bodies.read(request, UpgradeBody)
    if len(body.hashes) > MAX_UPGRADE_HASHES:
        raise params.bad("hashes", f"may hold at most {MAX_UPGRADE_HASHES} hashes")
    if not body.hashes:
        raise params.bad("hashes", "must hold at least one hash")
    body = UpgradeBody(body.hashes, check_game(body.target_game_version, "target_game_version"), check_loader(body.loader))
    for h in body.hashes:
        params.clean("hashes", h, 200)
    groups = hashes.group(body.hashes, None)
    bad = [a for a in groups if a not in ("sha1", "sha512")]
    if bad:
        raise params.bad("hashes", "must be sha1 (40 hex digits) or sha512 (128 hex digits)")
    return _json(await query(request, run_upgrade_check, body, groups))


# ---- wiring -------------------------------------------------------------------------------------

def _openapi() -> tuple[dict, dict]:
    text = "^[^\\u0000]*[^\\u0000\\s][^\\u0000]*$"  # NUL-free, not blank
    ref = {"type": "string", "minLength": 1, "maxLength": MAX_REF, "pattern": text,
           "description": "A slug, a project id (as /v2 shows it) or a file's sha1."}

    def resolve_body(loaders) -> dict:
        return {"type": "object", "additionalProperties": False, "required": ["loader", "game_version", "mods"],
                "properties": {
                    "loader": {"type": "string", "enum": list(loaders)},
                    "game_version": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": text,
                                     "example": "1.21.4"},
                    "mods": {"type": "array", "minItems": 1, "maxItems": MAX_MODS, "items": ref},
                    "include_optional": {"type": "boolean", "default": False},
                    "name": {"type": "string", "maxLength": MAX_NAME, "pattern": "^[^\\u0000]*$",
                             "description": "The pack's name (export)."},
                    "loader_version": {"type": "string", "maxLength": 64, "pattern": "^[^\\u0000]*$",
                                       "description": "Export: the loader version (checked against every mod)."}}}

    hash_pattern = "^([0-9a-fA-F]{40}|[0-9a-fA-F]{128})$"
    upgrade_body = {"type": "object", "additionalProperties": False,
                    "required": ["hashes", "target_game_version", "loader"],
                    "properties": {
                        "hashes": {"type": "array", "minItems": 1, "maxItems": MAX_UPGRADE_HASHES,
                                   "items": {"type": "string", "pattern": hash_pattern}},
                        "target_game_version": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": text},
                        "loader": {"type": "string", "enum": list(LOADERS)}}}
    fmt = {"name": "format", "in": "query", "required": True,
           "schema": {"type": "string", "enum": list(packexport.FORMATS)}}
    zip_ok = {"description": "The pack", "content": {
        "application/x-modrinth-modpack+zip": {"schema": {"type": "string", "format": "binary"}},
        "application/zip": {"schema": {"type": "string", "format": "binary"}}}}

    def export_responses() -> dict:
        out = apidoc.responses(zip_ok, cached=False, body=True)
        out["409"] = apidoc.error("No solution (no_solution, with the reason), or a picked file is not hashed yet.")
        return out

    def q(name, schema, required=False, **extra):
        return {"name": name, "in": "query", "required": required, "schema": schema, **extra}

    paths = {
        "/resolve": {"post": {
            "operationId": "resolvePack",
            "summary": "One file per mod for a loader and game version, with the dependencies the jars declare",
            "description": "Deterministic. Dependencies no indexed project owns are listed as not_indexed; with no "
                           "solution, ok is false and problem says why in words. A mod asked for that is not "
                           "indexed is listed in unknown.",
            "requestBody": {"required": True, "content": {"application/json": {"schema": resolve_body(LOADERS)}}},
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("ResolveAnswer")), cached=False, body=True),
        }},
        "/packs/export": {
            "post": {"operationId": "exportPackPost", "summary": "A resolution as a .mrpack or a packwiz zip",
                     "parameters": [fmt],
                     "requestBody": {"required": True, "content": {"application/json": {
                         "schema": resolve_body(packexport.EXPORT_LOADERS)}}},
                     "responses": export_responses()},
            "get": {"operationId": "exportPack", "summary": "A resolution as a .mrpack or a packwiz zip",
                    "parameters": [fmt, q("loader", {"type": "string", "enum": list(packexport.EXPORT_LOADERS)}, True),
                                   q("game_version", {"type": "string", "minLength": 1, "maxLength": 64, "pattern": text}, True),
                                   q("mod", {"type": "array", "maxItems": MAX_MODS, "items": ref}, True,
                                     style="form", explode=True),
                                   q("include_optional", {"type": "string", "enum": ["true", "false"]}),
                                   q("name", {"type": "string", "maxLength": MAX_NAME, "pattern": "^[^\\u0000]*$"}),
                                   q("loader_version", {"type": "string", "maxLength": 64, "pattern": "^[^\\u0000]*$"})],
                    "responses": export_responses()},
        },
        "/upgrade-check": {"post": {
            "operationId": "upgradeCheck",
            "summary": "For each installed file: its newest version for another game version, or none yet",
            "requestBody": {"required": True, "content": {"application/json": {"schema": upgrade_body}}},
            "responses": apidoc.responses(apidoc.ok(apidoc.ref("UpgradeAnswer")), cached=False, body=True),
        }},
    }
    return paths, apidoc.components((ResolveAnswer, UpgradeAnswer))


def setup(app: web.Application) -> None:
    r = app.router
    r.add_post(f"{BASE}/resolve", resolve)
    r.add_get(f"{BASE}/packs/export", export)
    r.add_post(f"{BASE}/packs/export", export)
    r.add_post(f"{BASE}/upgrade-check", upgrade_check)
    paths, schemas = _openapi()
    apidoc.register(app, paths, schemas)
