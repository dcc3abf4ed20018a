"""GET /updates/{id|slug}/forge_updates.json: Forge's update-checker file, as Modrinth serves it.

Forge compares the running jar's own version (``version`` in mods.toml) with the promoted one,
so the promoted values are the mod's version as each file's manifest declares it, never the
release tag (a tag ``v1.0.0`` on a jar declaring ``0.9.1`` promotes ``0.9.1``). A mod author
puts this URL in ``updateJSONURL``. Forge files by default; ``neoforge=only|include`` as on
Modrinth.
"""

from __future__ import annotations

from aiohttp import web

from indexium_content import urls
from indexium_db.queries import modrinth as modrinth_q

from ..core import markup, params
from ..core.respond import cached
from ..core.state import API
from . import routes

LOADERS = {None: ["forge"], "only": ["neoforge"], "include": ["forge", "neoforge"]}


def document(project, files) -> dict:
    """files: newest version first, one row per (version, file)."""
    promos: dict[str, str] = {}
    changelogs: dict[str, dict[str, str]] = {}
    for f in files:
        own = f["manifest_version"] or f["version_number"]
        for mc in f["game_versions"]:
            promos.setdefault(f"{mc}-latest", own)
            if f["version_type"] == "release":
                promos.setdefault(f"{mc}-recommended", own)
            # the author's Markdown, with links the URL policy refuses neutralised (issue 33)
            changelogs.setdefault(mc, {}).setdefault(own, markup.changelog(f["changelog"] or ""))
    homepage = (urls.safe_links(project["links"]).get("homepage")  # the one URL policy, for rows stored before it
                or f"https://github.com/{project['repo_full_name']}")
    return {"homepage": homepage, "promos": promos, **changelogs}


async def forge_updates(request: web.Request) -> web.Response:
    api = request.app[API]
    loaders = LOADERS[params.choice(request, "neoforge", ("only", "include"))]
    key = routes.key_of(request)
    if key is None:
        return routes.missing(request)

    async def compute():
        row, files = await routes.project_and(api, key, lambda conn, mod_id: modrinth_q.forge_versions(
            conn, mod_id, loaders))
        if row is None:
            return routes.no_project(key)
        return 200, document(row, files)

    return await cached(request, ("forge-updates", key, tuple(loaders)), routes.tags_for(key), compute)


def setup(app: web.Application) -> None:
    app.router.add_get("/updates/{id}/forge_updates.json", forge_updates)
