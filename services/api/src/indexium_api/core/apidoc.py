"""The pieces every surface writes its part of the OpenAPI document with (openapi/ assembles
it), and :func:`register`, by which a module serving /api/v1 paths beside the main routes
(players, analytics, subscriptions) adds their description before the app starts.
Here rather than in openapi/: the surfaces import it, and openapi/ imports the surfaces."""

from __future__ import annotations

import msgspec
from aiohttp import web

EXTRA = web.AppKey("openapi_extra", list)
NO_NUL = "^[^\\u0000]*$"


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


_HEADERS_CACHED = {
    "ETag": {"description": "Strong validator of the body; send it back in If-None-Match.",
             "schema": {"type": "string"}, "required": True},
    "Cache-Control": {"schema": {"type": "string"}, "required": True},
    "X-Cache": {"description": "This replica's cache: HIT, MISS or STALE.",
                "schema": {"type": "string", "enum": ["HIT", "MISS", "STALE"]}, "required": True},
    "X-RateLimit-Limit": {"schema": {"type": "integer"}},
    "X-RateLimit-Remaining": {"schema": {"type": "integer"}},
    "X-RateLimit-Reset": {"description": "Seconds until the window resets.", "schema": {"type": "integer"}},
}
# A 404 from the cache carries them; one for a slug that cannot exist (never queried) does not.
_HEADERS_404 = {name: {k: v for k, v in spec.items() if k != "required"} for name, spec in _HEADERS_CACHED.items()}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "required": True}}


def error(description: str, headers: dict | None = None) -> dict:
    out = {"description": description, "content": {"application/json": {"schema": ref("Error")}}}
    if headers:
        out["headers"] = headers
    return out


def responses(answer: dict, *, cached: bool = True, not_found: bool = False, body: bool = False) -> dict:
    out = {"200": answer}
    if cached:
        out["200"]["headers"] = _HEADERS_CACHED
        out["304"] = {"description": "Not modified (If-None-Match matched the ETag).",
                      "headers": {"ETag": {"schema": {"type": "string"}}}}
    out["400"] = error("A parameter (or the body) is invalid; the description names it.")
    if not_found:
        out["404"] = error("No such mod, version or file.", _HEADERS_404 if cached else None)
    if body:
        out["413"] = error("The body is larger than 1 MiB.")
    out["429"] = error("Rate limit exceeded (rate_limited), or more than the client's cap of uncached requests "
                        "at once (too_many_in_flight).", _RETRY_AFTER)
    out["503"] = error("PostgreSQL is unavailable and no cached answer exists.", _RETRY_AFTER)
    return out


def ok(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def query(name: str, schema: dict, description: str, *, explode: bool = False) -> dict:
    p = {"name": name, "in": "query", "required": False, "schema": schema, "description": description}
    if explode:
        p.update(style="form", explode=True)
    return p


def components(types, prefix: str = "") -> dict:
    """OpenAPI component schemas generated from msgspec Structs (the encoders of the answers);
    ``prefix`` keeps two surfaces' same-named shapes apart (v1 ``Version``, v2 ``v2.Version``)."""
    _, schemas = msgspec.json.schema_components(types, ref_template="#/components/schemas/" + prefix + "{name}")
    return {prefix + name: schema for name, schema in schemas.items()}


def register(app: web.Application, paths: dict, schemas: dict | None = None) -> None:
    """Add paths (relative to /api/v1) and component schemas; call before the app starts."""
    app.setdefault(EXTRA, []).append((paths, schemas or {}))
