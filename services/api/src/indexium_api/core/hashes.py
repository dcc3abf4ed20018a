"""File hashes from launchers: lower-case hex, algorithm given or detected from the length; and
the checks of a bulk body and an update check's filters, which /api/v1 and /v2 share."""

from __future__ import annotations

import string

from indexium_db.queries import catalog as catalog_q
from indexium_db.queries.hashes import ALGORITHMS
from aiohttp import web

from indexium_platform.web import ApiError

from . import params
from .state import API

BY_LENGTH = {length: name for name, (_, length) in ALGORITHMS.items()}
_HEX = frozenset(string.hexdigits)
MAX_FILTER_VALUES = 50  # an update check's loaders, game versions, version types


def algorithm_of(value: str, algorithm: str | None, *, name: str = "hash") -> str:
    """The algorithm of one hash (lower-case hex expected); 400 naming ``name`` when it fits none."""
    if not value or len(value) > 128 or not _HEX.issuperset(value):
        raise ApiError(400, "invalid_parameter",
                       f"'{name}' must be a hexadecimal sha1 (40), sha256 (64) or sha512 (128) digest.")
    if algorithm is None:
        detected = BY_LENGTH.get(len(value))
        if detected is None:
            raise ApiError(400, "invalid_parameter",
                           f"'{name}' has {len(value)} hex digits; sha1 has 40, sha256 64, sha512 128.")
        return detected
    expected = ALGORITHMS[algorithm][1]
    if len(value) != expected:
        raise ApiError(400, "invalid_parameter",
                       f"'{name}' has {len(value)} hex digits; {algorithm} has {expected}.")
    return algorithm


def check_algorithm(value: str | None, *, name: str = "algorithm") -> str | None:
    if value is None or value in ALGORITHMS:
        return value
    raise ApiError(400, "invalid_parameter", f"'{name}' must be one of: {', '.join(ALGORITHMS)}.")


def group(hashes: list[str], algorithm: str | None, *, name: str = "hashes") -> dict[str, list[str]]:
    """algorithm -> the normalized hashes of it (duplicates dropped, order kept)."""
    out: dict[str, dict[str, None]] = {}
    for raw in hashes:
        value = raw.strip().lower()
        out.setdefault(algorithm_of(value, algorithm, name=name), {})[value] = None
    return {alg: list(values) for alg, values in out.items()}


def bulk(request: web.Request, body) -> dict[str, list[str]]:
    """A bulk body's ``hashes`` (at most INDEXIUM_API_MAX_BULK_HASHES) by algorithm, checked:
    ``algorithm`` one we take, each hash bounded text. /api/v1's and /v2's bulk routes alike."""
    limit = request.app[API].settings.max_bulk_hashes
    if len(body.hashes) > limit:
        raise params.bad("hashes", f"may hold at most {limit} hashes")
    algorithm = check_algorithm(body.algorithm)
    for h in body.hashes:
        params.clean("hashes", h, 200)
    return group(body.hashes, algorithm)


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
