"""Query-parameter parsing: a bad parameter is a 400 naming it, never a silent clamp."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from aiohttp import web
from multidict import MultiDictProxy

from indexium_content import categories as vocabulary
from indexium_platform.web import ApiError

MAX_QUERY_CHARS = 200
MAX_VALUES = 20  # repeated facet values (loader=fabric&loader=quilt ...)


def bad(name: str, why: str) -> ApiError:
    return ApiError(400, "invalid_parameter", f"'{name}' {why}.")


def clean(name: str, value: str, max_len: int) -> str:
    """Strings reach PostgreSQL only when they are valid, NUL-free UTF-8 of bounded length."""
    if len(value) > max_len:
        raise bad(name, f"must be at most {max_len} characters")
    if "\x00" in value:
        raise bad(name, "must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise bad(name, "must be valid UTF-8") from None
    return value


def _query(request: web.Request) -> MultiDictProxy[str]:
    """The parsed query, once its raw bytes are known to be UTF-8: the URL parser replaces
    invalid bytes with U+FFFD, which would turn ``q=%FF`` into a search for "\ufffd"."""
    raw = request.rel_url.raw_query_string
    if ("%" in raw or not raw.isascii()) and not request.get(_CHECKED):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeError:
            raise ApiError(400, "invalid_parameter",
                           "The query string must be valid UTF-8 (percent-encoded).") from None
        request[_CHECKED] = True
    return request.query


_CHECKED = web.RequestKey("query_utf8_checked", bool)


def _single(request: web.Request, name: str) -> str | None:
    values = _query(request).getall(name, ())
    if len(values) > 1:
        raise bad(name, "must be given at most once")
    return values[0] if values else None


def text(request: web.Request, name: str, *, max_len: int = MAX_QUERY_CHARS) -> str | None:
    value = _single(request, name)
    if value is None:
        return None
    return clean(name, value.strip(), max_len) or None


def texts(request: web.Request, name: str, *, max_len: int = 64) -> tuple[str, ...]:
    """A repeatable parameter; empty values are ignored, duplicates dropped, order kept."""
    values = _query(request).getall(name, ())
    if len(values) > MAX_VALUES:
        raise bad(name, f"may be given at most {MAX_VALUES} times")
    out: dict[str, None] = {}
    for raw in values:
        value = clean(name, raw.strip(), max_len)
        if value:
            out[value] = None
    return tuple(out)


def choice(request: web.Request, name: str, allowed: tuple[str, ...], default: str | None = None) -> str | None:
    raw = _single(request, name)
    if raw is None:
        return default
    value = raw.strip()  # an empty value is not one of the choices: 400, not the default
    if value not in allowed:
        raise bad(name, f"must be one of: {', '.join(allowed)}")
    return value


def choices(request: web.Request, name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    values = texts(request, name)
    for value in values:
        if value not in allowed:
            raise bad(name, f"must be one of: {', '.join(allowed)}")
    return values


def categories(request: web.Request, name: str = "category") -> tuple[str, ...]:
    """Categories to filter by: names of the vocabulary (``indexium_content.categories``; a
    synonym such as ``tech`` means its category), each given also split on commas and spaces
    (the site's form field). Anything else is a 400 naming the categories: a topic is never
    one, so a filter by it could only ever match nothing."""
    out: dict[str, None] = {}
    for value in texts(request, name):
        for word in value.replace(",", " ").split():
            category = vocabulary.category_of(word)
            if category is None:
                raise bad(name, f"must be one of the categories: {', '.join(vocabulary.CATEGORIES)}")
            out[category] = None
    return tuple(out)


def integer(request: web.Request, name: str, *, default: int, low: int, high: int) -> int:
    raw = _single(request, name)
    if raw is None:
        return default
    raw = raw.strip()
    if not (raw.isascii() and raw.removeprefix("-").isdigit()):
        raise bad(name, "must be an integer")
    if len(raw) > 30 or not low <= int(raw) <= high:
        raise bad(name, f"must be between {low} and {high}")
    return int(raw)
