"""Query-parameter parsing: a bad parameter is a 400 naming it, never a silent clamp."""

from __future__ import annotations

from aiohttp import web

from indexium_platform.web import ApiError

MAX_QUERY_CHARS = 200


def text(request: web.Request, name: str, *, max_len: int = MAX_QUERY_CHARS) -> str | None:
    value = request.query.get(name)
    if value is None:
        return None
    value = value.strip()
    if len(value) > max_len:
        raise ApiError(400, "invalid_parameter", f"'{name}' must be at most {max_len} characters.")
    if "\x00" in value:
        raise ApiError(400, "invalid_parameter", f"'{name}' must not contain NUL characters.")
    return value or None


def integer(request: web.Request, name: str, *, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, "invalid_parameter", f"'{name}' must be an integer.") from None
    if not low <= value <= high:
        raise ApiError(400, "invalid_parameter", f"'{name}' must be between {low} and {high}.")
    return value
