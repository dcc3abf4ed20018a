"""GET /openapi.json: the OpenAPI 3.1 description of what this server really does.

Component schemas are generated from the msgspec Structs that encode the answers
(v1/shapes.py for /api/v1, v2/shapes.py for /v2); paths and parameters are written in v1.py
and v2.py of this package, next to the limits params.py enforces.

Kept next to the handlers and checked against them by a schemathesis property test
(tests/integration/api/test_openapi_contract.py): every documented parameter limit is
the one params.py enforces, every status a route can answer is listed. The routes of
v1/players.py, v1/analytics.py and v1/subscriptions.py add their paths with
``core.apidoc.register`` before the app starts.
"""

from __future__ import annotations

import copy

from aiohttp import hdrs, web

from ..core import apidoc
from ..core.paths import V1
from ..core.respond import Cached, accepts_gzip, make
from ..settings import Settings
from . import v1, v2

DOCUMENT = web.AppKey("openapi_document", Cached)


def document(settings: Settings, extra: list[tuple[dict, dict]] = ()) -> dict:
    paths, schemas = v1.paths(settings), v1.schemas()
    for more_paths, more_schemas in extra:
        paths.update(more_paths)
        schemas.update(copy.deepcopy(more_schemas))
    paths = {V1 + path: item for path, item in paths.items()}
    v2_paths, v2_schemas = v2.document(settings)
    paths.update(v2_paths)
    schemas.update(v2_schemas)
    return {
        "openapi": "3.1.0",
        "info": {"title": "Indexium public API", "version": "1.0.0",
                 "description": "Minecraft mods published as GitHub Releases. Errors are "
                                "{\"error\": code, \"description\": text}. See docs/api.md."},
        # Paths are absolute: /api/v1/... and the Modrinth-compatible /v2/... share one server.
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {"schemas": schemas},
    }


async def serve(request: web.Request) -> web.Response:
    doc = request.app[DOCUMENT]
    body, gzip_sent = doc.sent(accepts_gzip(request.headers.get(hdrs.ACCEPT_ENCODING)))
    return web.Response(body=body, content_type="application/json",
                        headers={"Cache-Control": "public, max-age=300", **doc.coding(gzip_sent)})


def setup(app: web.Application, settings: Settings) -> None:
    """Call after every other module has registered its paths."""
    app[DOCUMENT] = make(200, document(settings, app.get(apidoc.EXTRA, [])))
    app.router.add_get(f"{V1}/openapi.json", serve)
    app.router.add_get("/openapi.json", serve)
