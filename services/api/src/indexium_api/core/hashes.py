"""File hashes from launchers: lower-case hex, algorithm given or detected from the length."""

from __future__ import annotations

import string

from indexium_db.queries.hashes import ALGORITHMS
from indexium_platform.web import ApiError

BY_LENGTH = {length: name for name, (_, length) in ALGORITHMS.items()}
_HEX = frozenset(string.hexdigits)


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
