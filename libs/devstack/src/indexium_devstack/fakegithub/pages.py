"""The stand-in's web pages for a repository (``GET /{owner}/{repo}`` and ``/issues``), like
github.com's: the repository's ``html_url`` names them, and the demo's site and ``/v2`` link to
them, so a person following a link sees a short readable page instead of a 404."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from aiohttp import web

from .api import kind
from .render import download_url

if TYPE_CHECKING:  # pragma: no cover
    from .server import FakeGitHub

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 48rem; margin: 2rem auto; padding: 0 1rem">
<p><small>The local GitHub stand-in of Indexium's <code>make run DEMO=1</code>: it plays github.com.</small></p>
{body}
</body></html>
"""


def _page(title: str, body: str) -> web.Response:
    return web.Response(text=_PAGE.format(title=escape(title), body=body), content_type="text/html")


class RepositoryPages:
    def __init__(self, gh: "FakeGitHub") -> None:
        self.gh = gh

    def _repo(self, request: web.Request):
        repo = self.gh.state.find_repo(request.match_info["owner"], request.match_info["repo"])
        if repo is None or repo.private:  # as github.com answers someone not signed in
            raise web.HTTPNotFound(text="Not Found")
        return repo

    @kind("web")  # a page, not an API call: no quota, not counted
    async def repository(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        items = []
        for rel in sorted((r for r in repo.releases if not r.draft), key=lambda r: r.created_at, reverse=True):
            files = "".join(f'<li><a href="{escape(download_url(a, self.gh.urls))}">{escape(a.name)}</a></li>'
                            for a in rel.assets)
            items.append(f"<li><strong>{escape(rel.name or rel.tag_name)}</strong> ({escape(rel.tag_name)})"
                         f"{' pre-release' if rel.prerelease else ''}<ul>{files}</ul></li>")
        body = (f"<h1>{escape(repo.full_name)}</h1><p>{escape(repo.description or '')}</p>"
                + (f"<p>Topics: {escape(', '.join(repo.topics))}</p>" if repo.topics else "")
                + f'<p><a href="{escape(self.gh.base_url)}/{escape(repo.full_name)}/issues">Issues</a></p>'
                + f"<h2>Releases</h2><ul>{''.join(items) or '<li>none</li>'}</ul>")
        return _page(repo.full_name, body)

    @kind("web")
    async def issues(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        return _page(f"Issues · {repo.full_name}",
                     f'<h1>Issues of <a href="{escape(self.gh.base_url)}/{escape(repo.full_name)}">'
                     f"{escape(repo.full_name)}</a></h1>"
                     "<p>No issues: the stand-in keeps none.</p>")

    def add_routes(self, router: web.UrlDispatcher) -> None:
        """Last, after every API route: ``/{owner}/{repo}`` would otherwise shadow ``/user/...``."""
        router.add_get("/{owner}/{repo}", self.repository)
        router.add_get("/{owner}/{repo}/issues", self.issues)
