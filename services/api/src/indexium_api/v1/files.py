"""Launcher lookups by file hash: one hash, many hashes, and update checks.

Hashes are hex sha1/sha256/sha512, matched lower-cased; the algorithm is detected from
the length when not given. Answers are keyed by the lower-cased hash; unknown hashes (and
hashes of files in versions that are not public) are simply absent. The bulk routes are
one request each for the rate limit, whatever the number of hashes.
"""

from __future__ import annotations

from aiohttp import web

from indexium_db.queries import catalog as catalog_q, updates as updates_q
from indexium_db.queries import hashes as hashes_q
from indexium_platform.web import json_response

from ..core import bodies, hashes, params
from . import build
from ..core.respond import GLOBAL, cached, not_found, query
from ..core.state import API

BASE = build.BASE
MAX_FILTER_VALUES = 50


async def by_hash(request: web.Request) -> web.Response:
    api = request.app[API]
    value = request.match_info["hash"].strip().lower()
    algorithm = hashes.algorithm_of(value, params.choice(request, "algorithm", tuple(hashes_q.ALGORITHMS)))

    async def compute():
        found = await api.db.run(hashes_q.versions_by_hashes, algorithm, [value])
        if value not in found:
            return not_found(f"No public version has a file with {algorithm} '{value}'.")
        return 200, build.version(found[value])

    return await cached(request, ("by-hash", algorithm, value), (GLOBAL,), compute)


def bulk(request: web.Request, body) -> dict[str, list[str]]:
    """A bulk body's ``hashes`` (at most INDEXIUM_API_MAX_BULK_HASHES) by algorithm, checked:
    ``algorithm`` one we take, each hash bounded text. /api/v1's and /v2's bulk routes alike."""
    limit = request.app[API].settings.max_bulk_hashes
    if len(body.hashes) > limit:
        raise params.bad("hashes", f"may hold at most {limit} hashes")
    algorithm = hashes.check_algorithm(body.algorithm)
    for h in body.hashes:
        params.clean("hashes", h, 200)
    return hashes.group(body.hashes, algorithm)


async def by_hashes(request: web.Request) -> web.Response:
    body = await bodies.read(request, bodies.ByHashes)
    groups = bulk(request, body)
    out: dict[str, dict] = {}
    for algorithm, values in groups.items():
        found = await query(request, hashes_q.versions_by_hashes, algorithm, values)
        out.update({h: build.version(row) for h, row in found.items()})
    return _json(out)


def _filter_values(name: str, values: list[str] | None, max_len: int = 64) -> list[str]:
    values = values or []
    if len(values) > MAX_FILTER_VALUES:
        raise params.bad(name, f"may hold at most {MAX_FILTER_VALUES} values")
    return list(dict.fromkeys(params.clean(name, v.strip(), max_len) for v in values if v.strip()))


def update_filters(body) -> dict[str, list[str]]:
    """An update check's ``loaders``, ``game_versions`` and ``version_types`` (None or empty: any),
    checked and deduplicated: the keyword arguments of ``updates_q.newest_versions``. /api/v1's
    and /v2's update checks alike."""
    loaders = _filter_values("loaders", body.loaders, 32)
    game_versions = _filter_values("game_versions", body.game_versions)
    version_types = _filter_values("version_types", body.version_types)
    for t in version_types:
        if t not in catalog_q.VERSION_TYPES:
            raise params.bad("version_types", f"values must be one of: {', '.join(catalog_q.VERSION_TYPES)}")
    return {"loaders": loaders, "game_versions": game_versions, "version_types": version_types}


async def update_check(request: web.Request) -> web.Response:
    body = await bodies.read(request, bodies.UpdateCheck)
    groups = bulk(request, body)
    filters = update_filters(body)
    out: dict[str, dict] = {}
    for algorithm, values in groups.items():
        found = await query(request, updates_q.newest_versions, algorithm, values, **filters)
        out.update({h: build.version(row) for h, row in found.items()})
    return _json(out)


def _json(payload: dict) -> web.Response:
    # Answers to POSTs are not cached anywhere: each launcher's set of hashes is its own.
    return json_response(payload, headers={"Cache-Control": "no-store"})


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get(f"{BASE}/versions/by-hash/{{hash}}", by_hash)
    r.add_post(f"{BASE}/versions/by-hashes", by_hashes)
    r.add_post(f"{BASE}/versions/update-check", update_check)
