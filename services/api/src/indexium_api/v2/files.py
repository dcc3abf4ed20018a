"""/v2 lookups by file hash: one hash (and its download), many hashes, and update checks.

Update checks follow /api/v1's rule (``updates_q.newest_versions``): the answer is never older
than the installed file, even when an older line was published later. Empty or absent
``loaders``/``game_versions``/``version_types`` mean any (@xmcl/modrinth sends ``[]``).
Bodies are read leniently, as labrinth does: unknown fields are ignored.
"""

from __future__ import annotations

import msgspec
from aiohttp import web

from indexium_db.queries import hashes as hashes_q, modrinth as modrinth_q, updates as updates_q
from indexium_platform.web import ApiError, error_response, read_request_body

from ..core import hashes, params
from ..core.respond import GLOBAL, cached, not_found, query
from ..core.state import API
from . import build

# sha256 too: GitHub gives it for every asset, and /api/v1 takes it.
ALGORITHMS = ("sha1", "sha256", "sha512")


class HashList(msgspec.Struct, frozen=True):
    hashes: list[str]
    algorithm: str | None = None


class UpdateFilters(msgspec.Struct, frozen=True):
    loaders: list[str] | None = None
    game_versions: list[str] | None = None
    version_types: list[str] | None = None


class HashesUpdate(msgspec.Struct, frozen=True):
    hashes: list[str]
    algorithm: str | None = None
    loaders: list[str] | None = None
    game_versions: list[str] | None = None
    version_types: list[str] | None = None


_decoders = {cls: msgspec.json.Decoder(cls) for cls in (HashList, UpdateFilters, HashesUpdate)}
_json = msgspec.json.Encoder()


async def _body(request: web.Request, cls):
    raw = await read_request_body(request)
    try:
        return _decoders[cls].decode(raw or b"{}")
    except msgspec.ValidationError as exc:
        raise ApiError(400, "invalid_body", f"Invalid request body: {exc}.") from None
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body must be a JSON object.") from None


def _one_hash(request: web.Request) -> tuple[str, str]:
    value = request.match_info["hash"].strip().lower()
    algorithm = params.choice(request, "algorithm", ALGORITHMS)
    return value, hashes.algorithm_of(value, algorithm)


def _no_store(payload) -> web.Response:
    # Answers to POSTs are not cached anywhere: each launcher's set of hashes is its own.
    return web.Response(body=_json.encode(payload), content_type="application/json",
                        headers={"Cache-Control": "no-store"})


async def version_file(request: web.Request) -> web.Response:
    api = request.app[API]
    value, algorithm = _one_hash(request)
    multiple = params.choice(request, "multiple", ("true", "false"), default="false") == "true"

    async def compute():
        rows = await api.db.run(modrinth_q.versions_by_hashes, algorithm, [value], every=multiple)
        if not rows:
            return not_found(f"No public version has a file with {algorithm} '{value}'.")
        # multiple=true: every version holding the file, as labrinth answers it (a list).
        return 200, ([build.version(r) for r in rows] if multiple else build.version(rows[0]))

    return await cached(request, ("v2-by-hash", algorithm, value, multiple), (GLOBAL,), compute)


async def download(request: web.Request) -> web.Response:
    value, algorithm = _one_hash(request)
    # Only the file's URL is needed: not the version's columns (dependencies, every file).
    rows = await query(request, hashes_q.files_in_public_versions, algorithm, [value], columns="v.id",
                       version=modrinth_q.V2_VERSION)
    if not rows:
        return error_response(404, "not_found", f"No public version has a file with {algorithm} '{value}'.")
    # Downloads never go through us: the file is GitHub's release asset.
    return web.Response(status=302, headers={"Location": rows[0]["file_url"], "Cache-Control": "no-store"})


async def version_files(request: web.Request) -> web.Response:
    body = await _body(request, HashList)
    out = {}
    for algorithm, values in hashes.bulk(request, body).items():
        for row in await query(request, modrinth_q.versions_by_hashes, algorithm, values):
            out[row["hash"]] = build.version(row)
    return _no_store(out)


async def _updates(request: web.Request, groups: dict[str, list[str]], filters: dict, every: bool):
    out: dict = {}
    for algorithm, values in groups.items():
        found = await query(request, updates_q.newest_versions, algorithm, values,
                            columns=modrinth_q.V2_VERSION_COLUMNS, every=every, version=modrinth_q.V2_VERSION,
                            **filters)
        if every:
            for row in found:
                out.setdefault(row["hash"], []).append(build.version(row))
        else:
            out.update({h: build.version(row) for h, row in found.items()})
    return out


async def version_file_update(request: web.Request) -> web.Response:
    value, algorithm = _one_hash(request)
    filters = hashes.update_filters(await _body(request, UpdateFilters))
    found = await _updates(request, {algorithm: [value]}, filters, every=False)
    if value not in found:
        return error_response(404, "not_found", f"No version at or above the installed file with {algorithm} "
                                                f"'{value}' matches.")
    return _no_store(found[value])


async def version_files_update(request: web.Request) -> web.Response:
    body = await _body(request, HashesUpdate)
    return _no_store(await _updates(request, hashes.bulk(request, body), hashes.update_filters(body), every=False))


async def version_files_update_many(request: web.Request) -> web.Response:
    body = await _body(request, HashesUpdate)
    return _no_store(await _updates(request, hashes.bulk(request, body), hashes.update_filters(body), every=True))


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get("/v2/version_file/{hash}", version_file)
    r.add_get("/v2/version_file/{hash}/download", download)
    r.add_post("/v2/version_file/{hash}/update", version_file_update)
    r.add_post("/v2/version_files", version_files)
    r.add_post("/v2/version_files/update", version_files_update)
    r.add_post("/v2/version_files/update_many", version_files_update_many)
