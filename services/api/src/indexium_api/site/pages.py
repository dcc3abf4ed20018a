"""Public pages: home/search and a page per mod, cached like the JSON they mirror.

Both are the same for every visitor (nothing on them depends on a session), so they are
entries in the API's cache under the same tags as the JSON: a new release invalidates the
mod's page the moment it invalidates its card.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from aiohttp import web

from indexium_content import categories as vocabulary, urls
from indexium_contracts.telemetry import utc_day
from indexium_db.queries import catalog as catalog_q, site as site_q, telemetry as telemetry_q
from indexium_jar import gameversions
from indexium_jar import formats
from indexium_jar.deps import describe, parse_dependency
from indexium_jar.model import Dependency
from indexium_platform.web import ApiError

from indexium_contracts.slugs import is_slug
from ..core import markup, params, search_index
from ..core.respond import GLOBAL, mod_tag
from ..core.searchparams import ENVIRONMENT_LABELS, MAX_PAGE, PAGE_SIZE, SORT_LABELS, search_query
from ..core.site import add_page
from ..core.state import API
from . import charts, downloads, security
from .render import cached_page, for_visitor

RANGES = {"30d": 30, "90d": 90}
LOADERS = formats.LOADERS
BADGE_PATH = "/api/v1/badges/{slug}/servers.svg"
NO_CHOICE = downloads.Choice()
SEARCH_PARAMS = frozenset({"q", "type", "loader", "game_version", "environment", "category", "sort", "snapshots"})



def now() -> datetime:
    return datetime.now(UTC)  # (a function: the tests set the chart's clock)

def _game_versions(snapshots: bool = False) -> list[str]:
    """The game version filter's options: the newest 60 releases (and snapshots, when asked)."""
    return [v.id for v in gameversions.default_table().versions if snapshots or v.type == "release"][:60]


async def home(request: web.Request) -> web.Response:
    api = request.app[API]
    sq, page = search_query(request)
    # Only how the cards show game versions (snapshots and pre-releases too): not a filter.
    snapshots = params.choice(request, "snapshots", ("1",)) == "1"

    # What the page's own links carry: the search's parameters as given, nothing else. They are
    # part of the key, so a page cached for one request never shows another's links.
    base = tuple((k, v) for k, v in request.query.items() if k in SEARCH_PARAMS and v)
    searched = bool(base) or page > 1

    groups = formats.loader_groups(sq.project_type)
    grouped = {n for _, names in groups for n in names}

    async def compute():
        index = await search_index.settled(api)  # (before the connection: the wait holds none)
        rows, total = await api.db.run(search_index.search, api, sq, index=index)
        pages = max(1, -(-total // PAGE_SIZE))
        return cached_page(
            request.app, "home.html", sq=sq, hits=rows, total=total, page=page, pages=min(pages, MAX_PAGE),
            query=base, sorts=SORT_LABELS, environments=ENVIRONMENT_LABELS,
            loader_groups=groups, other_loaders=[n for n in sq.loaders if n in LOADERS and n not in grouped],
            categories=vocabulary.CATEGORIES, types=formats.PROJECT_TYPE_TITLES,
            game_versions=_game_versions(snapshots), searched=searched, snapshots=snapshots,
        )

    return await for_visitor(request, ("site-search", sq, base, searched), (GLOBAL,), compute)


async def _mod_page_data(conn, slug: str, days: int, today):
    mod = await catalog_q.mod_by_slug(conn, slug, readme=True)
    if mod is None:
        return None
    versions = await catalog_q.versions_of(conn, mod["id"])
    deps = await site_q.dependencies(conn, mod["id"])
    last = today - timedelta(days=1)
    series = await telemetry_q.daily_servers(conn, mod["id"], last - timedelta(days=days - 1), last)
    latest = await telemetry_q.day_stats(conn, mod["id"], last)
    # A modpack's files resolved to indexed projects, or the modpacks that include this project:
    # the resolution /v2's embedded dependencies make (modrinth.PACK_FILE_PROJECT).
    if mod["project_type"] == formats.MODPACK:
        packs = {"pack_contents": await site_q.pack_contents(conn, mod["id"]), "in_packs": []}
    else:
        packs = {"pack_contents": [], "in_packs": await site_q.packs_including(conn, mod["id"])}
    return mod, versions, deps, series, latest, packs


def download_choice(request: web.Request) -> downloads.Choice:
    """The Download box's choice from the query string (the form's empty "any" is no choice). A
    game version must be one the versions table knows or a release by its name: the choice is
    part of the page's cache key, so it takes no arbitrary text."""
    loader = params.text(request, "loader", max_len=32)
    if loader is not None and loader not in LOADERS:
        raise ApiError(400, "invalid_parameter", f"loader must be one of: {', '.join(LOADERS)}.")
    game_version = params.text(request, "game_version", max_len=32)
    table = gameversions.default_table()
    if game_version is not None and game_version not in table.by_id and not gameversions.is_release(game_version, table):
        raise ApiError(400, "invalid_parameter", "game_version is not a Minecraft version.")
    snapshots = params.choice(request, "snapshots", ("1",)) == "1"
    return downloads.Choice(loader, game_version, snapshots)


def dependency_words(deps) -> list[dict]:
    """Each dependency as a sentence ("needs Fabric API 0.92 or newer", "breaks Optifabric"), its
    range read in the dialect of the loader whose manifest declared it (indexium_jar.deps)."""
    out = []
    for d in deps:
        parsed = parse_dependency(Dependency(mod_id=d["mod_id"], kind=d["kind"], version_range=d["version_range"],
                                             warn_only=d["warn_only"]), d["loader"] or formats.FALLBACK_RANGE_DIALECT)
        name = d["name"] or d["mod_id"]
        words = describe(parsed, name)
        # The name becomes the link when the mod is indexed: the sentence around it stays text.
        before, _, after = words.partition(name)
        out.append({"before": before, "name": name, "after": after, "slug": d["slug"], "kind": d["kind"],
                    "indexed": d["slug"] is not None})
    return out


INFERRED_TITLE = ("The files do not state their game versions: read from the release's name or tag, or "
                  "from a manifest field that only suggests them.")


def mod_context(app: web.Application, mod, versions, deps, series, latest, *, range_key: str,
                choice: downloads.Choice = downloads.Choice(), notes: list[dict] | None = None,
                pack_contents=(), in_packs=()) -> dict:
    """What mod.html is rendered with, from the rows _mod_page_data read; ``notes``: the
    release notes rendered already (``release_notes``), else rendered here."""
    slug = mod["slug"]
    days = [(r["day"].isoformat(), r["servers"]) for r in series]
    offered_loaders, offered_versions = downloads.options(versions, choice)
    # What the page's own links keep of the visitor's choice (the range links, the form's range).
    kept = tuple((k, v) for k, v in (("loader", choice.loader), ("game_version", choice.game_version),
                                     ("snapshots", "1" if choice.snapshots else None)) if v)
    breakdown = (latest["breakdown"] if latest else None) or {}
    public = app[API].settings.public_url.rstrip("/")
    badge = BADGE_PATH.format(slug=slug)
    project_type = mod["project_type"] or formats.DEFAULT_PROJECT_TYPE  # (a row before 0023: a mod)
    return dict(
        mod=mod, versions=versions, deps=dependency_words(deps), pack_contents=pack_contents, in_packs=in_packs, range_key=range_key, ranges=RANGES,
        # A pack's (or plugin's) type named in its header; a mod's is the default, not named.
        type_title=None if project_type == formats.DEFAULT_PROJECT_TYPE else formats.PROJECT_TYPE_TITLES.get(project_type),
        # A loader its type implies (a resource pack's "minecraft"), left out of the offer's words.
        implied_loaders=implied if len(implied := formats.loaders_of(project_type)) == 1 else (),
        # Game versions no file states (a shader pack's, read from its release's name): said so.
        versions_inferred=bool(stating := [v for v in versions if v.get("game_versions")])
        and all(v.get("game_versions_inferred") for v in stating),
        INFERRED_TITLE=INFERRED_TITLE,
        # Servers report the mods they load (docs/telemetry.md): a pack's page has no such count,
        # nor a badge of one, unless servers reported it anyway.
        counts_servers=project_type == formats.DEFAULT_PROJECT_TYPE,
        choice=choice, offer=downloads.pick(versions, choice), offered_loaders=offered_loaders,
        offered_versions=offered_versions, kept=kept,
        # The stored card through the one URL policy and the vocabulary again: a row written
        # before them shows only what would be written now.
        links=urls.safe_links(mod["links"]), categories=vocabulary.only_categories(mod["categories"]),
        tags=vocabulary.only_tags(mod["tags"]),
        # The repository's page as GitHub named it (catalog.REPO_URL), as /v2's source_url.
        repo_url=urls.allowed(mod["repo_url"]) or (f"https://github.com/{mod['repo_full_name']}"
                                                    if mod["repo_full_name"] else None),
        # No server has ever reported in the range: one honest line, not an empty 0-1 axis.
        chart=charts.servers_chart(days, title=f"Active servers per day, last {RANGES[range_key]} days")
        if any(n for _, n in days) else None,
        days=days, by_game_version=charts.bars(list(breakdown.get("game_version", {}).items())),
        by_loader=charts.bars(list(breakdown.get("loader", {}).items())),
        badge_url=f"{public}{badge}", badge_path=badge,
        badge_markdown=f"[![servers]({public}{badge})]({public}/mods/{slug})",
        page_url=f"{public}/mods/{slug}",
        # The README as the GitHub role rendered and sanitized it (repository_readmes), and the
        # newest versions' release notes rendered the same way: the newest open, the rest in <details>.
        readme_html=markup.readme_html(mod),
        notes=notes if notes is not None else release_notes(mod, versions, limit=markup.PAGE_NOTES),
        more_notes=sum(1 for v in versions if (v.get("changelog") or "").strip()) > markup.PAGE_NOTES,
    )


def release_notes(mod, versions, *, limit: int | None = None, heading_shift: int = 2) -> list[dict]:
    """The versions that have notes, newest first, each with its notes as sanitized HTML."""
    repo = markup.repository(mod)
    out = []
    for v in versions:
        if not (v.get("changelog") or "").strip():
            continue
        if limit is not None and len(out) >= limit:
            break
        out.append(dict(version=v, html=markup.notes(v["changelog"], repo, v["version_number"],
                                                      heading_shift=heading_shift),
                        release_url=markup.release_url(repo, v["version_number"])))
    return out


async def mod_page(request: web.Request) -> web.Response:
    api = request.app[API]
    slug = request.match_info["slug"]
    range_key = params.choice(request, "range", tuple(RANGES), default="30d")
    if not is_slug(slug):
        raise web.HTTPNotFound()
    # (A bare /mods/{slug}, most of the traffic: no choice to parse.)
    choice = download_choice(request) if request.rel_url.raw_query_string else NO_CHOICE
    app = request.app
    today = utc_day(now())

    async def compute():
        data = await api.db.run(_mod_page_data, slug, RANGES[range_key], today)
        if data is None:
            return cached_page(app, "error.html", 404, status_code=404, title="Mod not found",
                               message=f"No mod called “{slug}” is listed here. It may have been removed, "
                                       "or not indexed yet.")
        # Release notes render in pure Python (ms per version on a miss): off the event loop.
        notes = await asyncio.to_thread(release_notes, data[0], data[1], limit=markup.PAGE_NOTES)
        context = mod_context(app, *data[:5], range_key=range_key, choice=choice, notes=notes, **data[5])
        images = security.image_origins(context["readme_html"] or "", *(n["html"] for n in context["notes"]))
        return cached_page(app, "mod.html", images=images, **context)

    # Today's date in the key, as the JSON analytics: the chart moves on at midnight, not at the TTL.
    return await for_visitor(request, ("site-mod", slug, range_key, today, choice.key), (mod_tag(slug),), compute)


async def _changelog_data(conn, slug: str):
    mod = await catalog_q.mod_by_slug(conn, slug, readme=False)
    if mod is None:
        return None
    return mod, await catalog_q.versions_of(conn, mod["id"])


async def changelog_page(request: web.Request) -> web.Response:
    """Every public version's release notes, newest first, rendered like the mod page's."""
    api = request.app[API]
    slug = request.match_info["slug"]
    if not is_slug(slug):
        raise web.HTTPNotFound()
    app = request.app

    async def compute():
        data = await api.db.run(_changelog_data, slug)
        if data is None:
            return cached_page(app, "error.html", 404, status_code=404, title="Mod not found",
                               message=f"No mod called “{slug}” is listed here. It may have been removed, "
                                       "or not indexed yet.")
        mod, versions = data
        public = app[API].settings.public_url.rstrip("/")
        notes = await asyncio.to_thread(release_notes, mod, versions)
        return cached_page(app, "changelog.html", mod=mod, notes=notes, page_url=f"{public}/mods/{slug}/changelog",
                           images=security.image_origins(*(n["html"] for n in notes)))

    return await for_visitor(request, ("site-changelog", slug), (mod_tag(slug),), compute)


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/", home, name="site-home")
    add_page(app, "GET", "/mods/{slug}", mod_page, name="site-mod")
    add_page(app, "GET", "/mods/{slug}/changelog", changelog_page, name="site-changelog")
