"""The Modrinth-API-v2-compatible surface: ``/v2/...`` and ``/updates/{id}/forge_updates.json``.

A second view of the catalogue /api/v1 serves (same process, cache, invalidation, rate limit
and database), in the shapes of Modrinth's published OpenAPI document, so launchers that speak
Modrinth's protocol (@xmcl/modrinth, mrpack-install --host, HMCL-style mirrors) work unchanged.
docs/api.md ("API v2") has the field mapping and where we differ from Modrinth.
"""

from aiohttp import web

from . import files, forge, routes


def setup(app: web.Application) -> None:
    routes.setup(app)
    files.setup(app)
    forge.setup(app)
