"""Atom feeds of new versions: a mod's, an author's, and a search's (docs/notifications.md, "Atom feeds").

* ``/mods/{slug}/versions.atom``: the mod's public versions;
* ``/authors/{login}/versions.atom``: those of every listed mod the GitHub account owns;
* ``/search.atom?q=&loader=&game_version=&category=&environment=``: new projects (a mod's
  first public version) and new versions of the mods the site's search finds, parsed by the
  site's own search parser (``core/searchparams.py``'s ``search_query``) and filtered by the catalogue's own
  conditions (``indexium_db.queries.feeds``), loaders and game versions holding per file.

The mod and author feeds take ``loader`` and ``game_version`` too. At most ``MAX_ENTRIES``
entries, newest published first. Each is an entry of the API's cache like the pages it
mirrors: the mod's feed under the mod's tag, the others under the global one, so the
version events that invalidate the pages invalidate the feeds (invalidation.py); an ETag
(If-None-Match) and a Last-Modified (If-Modified-Since) answer 304s. Not site pages: errors
are the API's JSON envelope, and requests count against the API's rate limit (edge.py).
"""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC
from email.utils import format_datetime
from urllib.parse import quote, urlencode

from aiohttp import web

from indexium_content import urls
from indexium_contracts.slugs import is_slug
from indexium_db.queries import feeds as feeds_q
from indexium_jar.gameversions import shown_versions
from indexium_notify.payloads import VERSION_GROUPS
from indexium_platform.web import ApiError

from . import atom
from ..core import markup, params
from ..core.respond import GLOBAL, Cached, cached, etag_of, mod_tag, no_mod, not_found
from ..core.searchparams import search_query
from ..core.state import API

MAX_ENTRIES = 50  # a feed reader wants what is new; 50 is a few weeks of a busy search
# A GitHub login: letters, digits and single hyphens, at most 39 characters.
_LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\Z")  # (\Z: $ matches before a final newline)
# Category schemes: the API's own lists of the loaders and game versions a term is one of.
LOADER_SCHEME, GAME_VERSION_SCHEME = "/api/v1/tags/loaders", "/api/v1/tags/game-versions"
NEW_PROJECT = atom.Category("new-project", None, "New project")


def _facets(request: web.Request) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(loaders, game versions) of a mod's or an author's feed, bounded as the search's are."""
    return (tuple(v for v in params.texts(request, "loader", max_len=32) if v),
            tuple(v for v in params.texts(request, "game_version") if v))


def _url(value: str) -> str | None:
    return urls.allowed(value)


def _links(*links: atom.Link | None) -> tuple[atom.Link, ...]:
    """Only the links whose URL passed the one URL policy, as the policy answers them."""
    kept = ((link, _url(link.href)) for link in links if link is not None)
    return tuple(dataclasses.replace(link, href=href) for link, href in kept if href is not None)


def _entry(row, public: str) -> atom.Entry:
    mod_page = f"{public}/mods/{quote(row['slug'], safe='')}"
    download = row["download"] or {}
    repo = markup.repository(row)  # where the notes' relative links resolve, and the release's page
    release_page = markup.release_url(repo, row["tag_name"])
    loaders = list(row["loaders"] or ())
    # Game versions as the site's pages show them (indexium_jar.gameversions.shown_versions):
    # runs of consecutive releases as ranges (1.20.1–1.20.6), snapshots and pre-releases left
    # out unless they are all there is; at most VERSION_GROUPS groups, as in a webhook's body.
    shown, left_out = shown_versions(list(row["game_versions"] or ()))
    game_versions = shown[:VERSION_GROUPS]
    more = len(shown) - len(game_versions)
    versions = ", ".join(game_versions) + (f" + {more} more" if more else "")
    versions += f" (and {left_out} snapshots or pre-releases)" if left_out else ""
    summary = (("New project. " if row["new_project"] else "")
               + f"Loaders: {', '.join(loaders) or 'any'}. Minecraft: {versions or 'any'}.")
    authors = tuple(a for a in (row["owner"],) if a) or tuple(row["authors"] or ())[:5]
    return atom.Entry(
        # The version's own id: the same entry in every feed that shows it, whatever its URL.
        id=f"urn:uuid:{row['id']}",
        title=f"{row['mod_name']} {row['version_number']}",
        updated=row["updated_at"] or row["published_at"], published=row["published_at"] or row["created_at"],
        authors=authors,
        links=_links(
            atom.Link(mod_page, "alternate", "text/html"),
            atom.Link(download["url"], "enclosure", "application/java-archive", download.get("filename"),
                      download.get("size")) if download.get("url") else None,
            atom.Link(release_page, "related", "text/html", "Release on GitHub") if release_page else None),
        categories=((NEW_PROJECT,) if row["new_project"] else ())
        + tuple(atom.Category(lo, _url(public + LOADER_SCHEME)) for lo in loaders)
        + tuple(atom.Category(g, _url(public + GAME_VERSION_SCHEME)) for g in game_versions),
        summary=summary,
        # The release notes as the site shows them: the one Markdown renderer and sanitizer
        # (indexium_content.markdown, every link and image through the one URL policy), at most
        # markdown.NOTES_MAX_HTML characters then "Read more on GitHub". Carried as escaped text.
        content=markup.notes(row["changelog"], repo, row["tag_name"], heading_shift=1), content_type="html",
    )


def _document(request: web.Request, *, feed_id_path: str, title: str, subtitle: str, page: str | None,
              rows, stamp, updated=None) -> Cached:
    """The feed as a cache entry. ``stamp``: its change stamp (Last-Modified, and its ``<updated>``
    unless ``updated`` is given)."""
    public = request.app[API].settings.public_url.rstrip("/")
    self_url = public + feed_id_path
    feed = atom.Feed(
        id=self_url, title=title, subtitle=subtitle, updated=updated or stamp,
        links=_links(atom.Link(self_url, "self", "application/atom+xml"),
                     atom.Link(public + page, "alternate", "text/html") if page else None),
        entries=tuple(_entry(r, public) for r in rows),
    )
    body = atom.render(feed)
    last_modified = format_datetime((stamp or atom.EPOCH).astimezone(UTC).replace(microsecond=0), usegmt=True)
    return Cached(200, body, etag_of(body), atom.CONTENT_TYPE, last_modified=last_modified)


async def mod_feed(request: web.Request) -> web.StreamResponse:
    api = request.app[API]
    slug = request.match_info["slug"]
    loaders, game_versions = _facets(request)
    if not is_slug(slug):
        raise ApiError(404, "not_found", f"No mod with slug '{slug[:64]}'.")

    async def compute():
        mod, rows, stamp = await api.db.run(feeds_q.mod_feed, slug, loaders=loaders, game_versions=game_versions,
                                            limit=MAX_ENTRIES)
        if mod is None:
            return no_mod(slug)
        query = urlencode([*(("loader", v) for v in loaders), *(("game_version", v) for v in game_versions)])
        return _document(request, feed_id_path=f"/mods/{quote(slug)}/versions.atom" + (f"?{query}" if query else ""),
                         title=f"{mod['name']}: new versions", subtitle=mod["summary"] or "",
                         page=f"/mods/{quote(slug)}", rows=rows, stamp=stamp)

    return await cached(request, ("feed-mod", slug, loaders, game_versions), (mod_tag(slug),), compute)


async def author_feed(request: web.Request) -> web.StreamResponse:
    api = request.app[API]
    login = request.match_info["login"]
    loaders, game_versions = _facets(request)
    if not _LOGIN.match(login):
        raise ApiError(404, "not_found", f"No author '{login[:64]}'.")
    login = login.lower()

    async def compute():
        author, rows, stamp = await api.db.run(feeds_q.author_feed, login, loaders=loaders,
                                               game_versions=game_versions, limit=MAX_ENTRIES)
        if author is None:
            return not_found(f"No author '{login}'.")
        query = urlencode([*(("loader", v) for v in loaders), *(("game_version", v) for v in game_versions)])
        name = author["login"]
        return _document(request, feed_id_path=f"/authors/{quote(name)}/versions.atom" + (f"?{query}" if query else ""),
                         title=f"{name}: new versions", subtitle=f"New versions of the mods {name} publishes on GitHub",
                         page=None, rows=rows, stamp=stamp)

    # Under the global tag: an event names the mod, not its owner.
    return await cached(request, ("feed-author", login, loaders, game_versions), (GLOBAL,), compute)


async def search_feed(request: web.Request) -> web.StreamResponse:
    api = request.app[API]
    sq, _ = search_query(request)  # the site search's own parser: the same filters, the same bounds
    sq = dataclasses.replace(sq, limit=MAX_ENTRIES, offset=0, sort=None)  # (a page and an order mean nothing here)

    async def compute():
        rows, stamp = await api.db.run(feeds_q.search_feed, sq, limit=MAX_ENTRIES)
        query = urlencode([*((("q", sq.q),) if sq.q else ()), *(("loader", v) for v in sq.loaders),
                           *(("game_version", v) for v in sq.game_versions),
                           *(("category", v) for v in sq.categories),
                           *((("environment", sq.environment),) if sq.environment else ()),
                           *((("type", sq.project_type),) if sq.project_type else ())])
        what = f"“{sq.q}”" if sq.q else "every mod"
        # <updated>: its newest entry's, so that the document (and its ETag) stays the same while
        # its entries do; Last-Modified: the catalogue's stamp (queries/feeds.py).
        newest = max((r["updated_at"] for r in rows), default=None)
        return _document(request, feed_id_path="/search.atom" + (f"?{query}" if query else ""),
                         title=f"Indexium: {what}", subtitle="New projects and new versions matching a search",
                         page="/" + (f"?{query}" if query else ""), rows=rows, stamp=stamp,
                         updated=newest or atom.EPOCH)

    return await cached(request, ("feed-search", sq), (GLOBAL,), compute)


def setup(app: web.Application) -> None:
    # Named feed-*, not site-*: machine-read, so their errors are the JSON envelope and their
    # requests count against the API's budget, not the pages'.
    r = app.router
    r.add_get("/mods/{slug}/versions.atom", mod_feed, name="feed-mod")
    r.add_get("/authors/{login}/versions.atom", author_feed, name="feed-author")
    r.add_get("/search.atom", search_feed, name="feed-search")
