"""Launcher lookups by file hash: one hash, many hashes, and update checks.

Hashes are hex sha1/sha256/sha512, matched lower-cased; the algorithm is detected from
the length when not given. Answers are keyed by the lower-cased hash; unknown hashes (and
hashes of files in versions that are not public) are simply absent. The bulk routes are
one request each for the rate limit, whatever the number of hashes.
"""

from __future__ import annotations

from aiohttp import web

from indexium_db.queries import updates as updates_q
from indexium_db.queries import hashes as hashes_q
from indexium_platform.web import json_response

from ..core import bodies, hashes, params
from . import build
from ..core.respond import GLOBAL, cached, not_found, query
from ..core.state import API

BASE = build.BASE


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


async def by_hashes(request: web.Request) -> web.Response:
    body = await bodies.read(request, bodies.ByHashes)
    groups = hashes.bulk(request, body)
    out: dict[str, dict] = {}
    for algorithm, values in groups.items():
        found = await query(request, hashes_q.versions_by_hashes, algorithm, values)
        out.update({h: build.version(row) for h, row in found.items()})
    return _json(out)


async def update_check(request: web.Request) -> web.Response:
    body = await bodies.read(request, bodies.UpdateCheck)
    groups = hashes.bulk(request, body)
    filters = hashes.update_filters(body)
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
