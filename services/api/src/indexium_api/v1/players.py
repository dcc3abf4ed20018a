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
deterministic and never cached (each player's list is their own).
"""

from __future__ import annotations

import uuid

import msgspec
from aiohttp import web

from indexium_db.queries import hashes as hashes_q, packs as packs_q
from indexium_jar import formats
from indexium_jar.deps import (
    LOADS, Requested, Resolution, describe, fitting, newest_for_loader, range_words,
)
from indexium_content import urls
from indexium_platform.web import ApiError, json_response

from ..core import apidoc, bodies, hashes, packexport, params
from ..core.respond import query
from .build import BASE

MAX_MODS = 100  # mods in one resolve or export (a large pack asks for ~50; each may add several)
MAX_UPGRADE_HASHES = 500  # files in one upgrade check (a big mods folder holds ~300)
MAX_REF = 128
MAX_NAME = 100
# The loaders of jar formats (mods and plugins): a pack's loader; packs of packs are not resolved.
LOADERS = tuple(dict.fromkeys(lo.name for f in formats.JAR_FORMATS for lo in f.loaders if lo.name in LOADS))
_VERSION_ID = "1.0.0"


# ---- bodies -------------------------------------------------------------------------------------

class ResolveBody(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    loader: str
    game_version: str
    mods: list[str]
    include_optional: bool = False
    name: str | None = None  # the pack's name (export only)
    loader_version: str | None = None  # export only: else the newest known version every mod accepts


class UpgradeBody(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    hashes: list[str]
    target_game_version: str
    loader: str


def _loader(value: str, name: str = "loader") -> str:
    if value not in LOADERS:
        raise params.bad(name, f"must be one of: {', '.join(LOADERS)}")
    return value


def _game(value: str, name: str) -> str:
    value = params.clean(name, value.strip(), 64)
    if not value:
        raise params.bad(name, "must not be empty")
    return value


def check_body(body: ResolveBody) -> ResolveBody:
    if not body.mods:
        raise params.bad("mods", "must name at least one mod")
    if len(body.mods) > MAX_MODS:
        raise params.bad("mods", f"may hold at most {MAX_MODS} mods")
    mods = list(dict.fromkeys(params.clean("mods", m.strip(), MAX_REF).lower() if len(m.strip()) == 40
                              else params.clean("mods", m.strip(), MAX_REF) for m in body.mods if m.strip()))
    if not mods:
        raise params.bad("mods", "must name at least one mod")
    name = params.clean("name", body.name.strip(), MAX_NAME) if body.name else None
    lv = params.clean("loader_version", body.loader_version.strip(), 64) if body.loader_version else None
    return ResolveBody(_loader(body.loader), _game(body.game_version, "game_version"), mods,
                       body.include_optional, name or None, lv or None)


# ---- answers ------------------------------------------------------------------------------------

class FileOut(msgspec.Struct):
    filename: str
    url: str
    size: int | None
    sha1: str | None
    sha512: str | None


class PickOut(msgspec.Struct):
    mod_id: str
    project_id: str
    slug: str
    name: str
    version: str
    version_number: str
    version_type: str
    requested: bool
    optional: bool
    reasons: list[str]
    file: FileOut


class NotIndexedOut(msgspec.Struct):
    mod_id: str
    range: str | None
    needed_by: list[str]
    text: str


class PlatformOut(msgspec.Struct):
    mod_id: str
    text: str
    declared: list[str]


class ResolveAnswer(msgspec.Struct):
    ok: bool
    loader: str
    game_version: str
    mods: list[PickOut]
    not_indexed: list[NotIndexedOut]
    unknown: list[str]
    provided: list[str]
    skipped_optional: list[str]
    warnings: list[str]
    platform: list[PlatformOut]
    problem: str | None


async def run_resolve(conn, body: ResolveBody):
    """(the answer, the picked files' rows) on one connection: refs, the resolution, the files."""
    asked = await packs_q.requested(conn, body.mods)
    unknown = [m for m in body.mods if m not in asked]
    if unknown:
        return ResolveAnswer(False, body.loader, body.game_version, [], [], unknown, [], [], [], [],
                             f"not on Indexium: {', '.join(unknown)}"), None, {}
    by_id: dict[str, packs_q.Asked] = {}
    for a in sorted(asked.values(), key=lambda a: (a.mod_id, str(a.version_id or ""))):
        by_id.setdefault(a.mod_id, a)  # one entry per mod id: a slug and a hash of it ask once
    roots = [Requested(a.mod_id, str(a.version_id) if a.version_id else None) for a in by_id.values()]
    resolution, source = await packs_q.resolve(conn, body.loader, body.game_version, roots,
                                               pinned={m: a.project for m, a in by_id.items()},
                                               include_optional=body.include_optional)
    # (each picked file's download facts were read with the candidates; files() for any that were not)
    rows = {i: source.downloads[i] for i in (_uuid(p.file_id) for p in resolution.picks) if i in source.downloads}
    if missing := [_uuid(p.file_id) for p in resolution.picks if _uuid(p.file_id) not in rows]:
        rows.update(await packs_q.files(conn, missing))
    return _answer(body, resolution, rows), resolution, rows


def _answer(body: ResolveBody, r: Resolution, rows) -> ResolveAnswer:
    picks = []
    for p in r.picks:
        f = rows[_uuid(p.file_id)]
        picks.append(PickOut(p.mod_id, p.project_id, f["slug"], p.name, p.version, f["version_number"], p.version_type,
                             p.requested, p.optional, list(p.reasons),
                             # (stored only from INDEXIUM_DOWNLOAD_HOSTS; served through the one URL policy again)
                             FileOut(f["filename"], urls.allowed(f["url"]) or "", f["size"], _hex(f["sha1"]),
                                     _hex(f["sha512"]))))
    return ResolveAnswer(
        r.ok, body.loader, body.game_version, picks,
        [NotIndexedOut(n.mod_id, n.range, list(n.needed_by), n.text) for n in r.not_indexed], [],
        list(r.provided), list(r.skipped_optional), list(r.warnings),
        [PlatformOut(p.mod_id, p.text, list(p.declared)) for p in r.platform], r.problem)


def _uuid(value: str):
    return uuid.UUID(value)  # the ids are uuids in text


def _hex(value: str | None) -> str | None:
    return value.strip() if value else None


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
        f = rows[_uuid(next(x.file_id for x in resolution.picks if x.mod_id == p.mod_id))]
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


# ---- can I upgrade? -----------------------------------------------------------------------------

class Installed(msgspec.Struct):
    slug: str
    name: str
    mod_id: str
    version: str


class Newest(msgspec.Struct):
    version: str  # as the manifest declares it
    game_versions: list[str]


class UpgradeFile(msgspec.Struct):
    hash: str
    known: bool
    installed: Installed | None
    target: Newest | None  # the newest version for the target game version and loader
    newest: Newest | None  # with no target: the newest that exists for the loader
    blocked_by: list[str]  # dependencies without a version for the target: "needs Fabric API 0.92 or newer (none for 1.21.4 yet)"
    ready: bool
    text: str


class UpgradeAnswer(msgspec.Struct):
    target_game_version: str
    loader: str
    ready: int
    total: int
    summary: str
    files: list[UpgradeFile]


_INSTALLED = "v.id AS version_id, v.version_number, m.id AS project, m.slug, m.name, m.manifest_id"


async def run_upgrade_check(conn, body: UpgradeBody, groups: dict[str, list[str]]) -> UpgradeAnswer:
    found: dict[str, object] = {}
    for algorithm, values in groups.items():
        for row in await hashes_q.files_in_public_versions(conn, algorithm, values, columns=_INSTALLED):
            found[row["hash"].strip()] = row
    pinned = {r["manifest_id"]: r["project"] for r in found.values()}
    source = packs_q.Prefetched(pinned=pinned)
    game, loader = body.target_game_version, body.loader
    await packs_q.prefetch(conn, loader, game, sorted(pinned), source=source, rounds=1)
    fits_of: dict[str, list] = {}

    def fits(mod_id: str) -> list:  # each mod's fitting versions once (a library is needed by many)
        if mod_id not in fits_of:
            fits_of[mod_id] = fitting(source, loader, game, mod_id)
        return fits_of[mod_id]

    # Then only what _blockers asks about: the required dependencies of each mod's newest fitting file.
    needed = {dep.mod_id for mod_id in pinned if (found_fits := fits(mod_id))
              for dep in _required(found_fits[0][1])} - source.versions.keys()
    await packs_q.prefetch(conn, loader, game, sorted(needed), source=source, rounds=1)

    out, ready = [], 0
    for h in [h for values in groups.values() for h in values]:
        row = found.get(h)
        if row is None:
            out.append(UpgradeFile(h, False, None, None, None, [], False, "not on Indexium (or not public)"))
            continue
        mod_id = row["manifest_id"]
        installed = Installed(row["slug"], row["name"], mod_id, row["version_number"])
        found_fits = fits(mod_id)
        if not found_fits:
            newest = newest_for_loader(source, loader, mod_id)
            shown = Newest(newest[0].version, list(newest[1])) if newest else None
            where = f"; its newest is {shown.version} for {', '.join(shown.game_versions[:3])}" if shown else ""
            out.append(UpgradeFile(h, True, installed, None, shown, [], False, f"none yet for {game}{where}"))
            continue
        version, file = found_fits[0]
        blocked = _blockers(source, fits, game, file)
        ok = not blocked
        ready += ok
        text = f"{version.version} for {game}" + ("" if ok else f", blocked: {'; '.join(blocked)}")
        out.append(UpgradeFile(h, True, installed, Newest(version.version, sorted(file.game_versions)),
                               None, blocked, ok, text))
    total = len(out)
    return UpgradeAnswer(game, loader, ready, total, f"{ready} of {total} ready for {game}", out)


def _required(file) -> list:
    """The file's required dependencies on other mods that it does not carry itself."""
    provided = {d.mod_id for d in file.dependencies if d.kind == "embedded"} | {p.mod_id for p in file.provides}
    return [d for d in file.dependencies if d.kind == "required" and not d.platform and d.mod_id not in provided]


def _blockers(source, fits, game: str, file) -> list[str]:
    """Required dependencies of ``file`` no indexed version satisfies on ``game`` (an id we do
    not index is not a blocker we can know of: it is not listed)."""
    out = []
    for dep in _required(file):
        versions = source.versions_of(dep.mod_id)
        if versions is None:
            continue
        name = versions[0].name if versions else dep.mod_id
        if not any(dep.versions.contains(v.version) for v, _ in fits(dep.mod_id)):
            words = range_words(dep.versions)
            out.append(f"{describe(dep, name)} (no {name}{' ' + words if words else ''} for {game} yet)")
    return out


async def upgrade_check(request: web.Request) -> web.Response:
    body = await bodies.read(request, UpgradeBody)
    if len(body.hashes) > MAX_UPGRADE_HASHES:
        raise params.bad("hashes", f"may hold at most {MAX_UPGRADE_HASHES} hashes")
    if not body.hashes:
        raise params.bad("hashes", "must hold at least one hash")
    body = UpgradeBody(body.hashes, _game(body.target_game_version, "target_game_version"), _loader(body.loader))
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
