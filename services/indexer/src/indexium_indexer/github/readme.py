"""A mod repository's README: read from GitHub when it may have changed, rendered once, stored.

``GET /repos/{owner}/{repo}/readme`` with the installation token and ``If-None-Match`` set to
the ETag stored with the last answer (``repository_readmes.etag``, kept in PostgreSQL so a
restart still asks conditionally): an unchanged README is a 304, which costs no quota. Asked
as contents JSON (base64), not raw: the JSON says where the README is (``docs/README.md``
resolves its relative links from ``docs/``), for a third more bytes on a changed README.

A changed README (or one gone: 404) is rendered by :mod:`indexium_content.markdown` against
the repository at its default branch and stored in one transaction, whose trigger copies the
plain text into the repository's mods (``mods.readme_text``, what search reads); after the
commit a ``mod_changed.v1`` per mod invalidates every API replica's cached card and page and
has its search index re-read the mod (the same event every other card change uses).

Called at onboarding (a repository registered as a mod), by backfill, on every push to the
default branch, and on "Check again" (``catch_up``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii

import asyncpg

from indexium_content import markdown
from indexium_db.queries import readmes as readmes_q
from indexium_github import GitHubClient, GitHubError, InstallationUnavailable, NotFound
from indexium_platform import logs

from .announce import Announcer

log = logs.get(__name__)
ACCEPT = "application/vnd.github+json"  # contents JSON: the path comes with the text


class Readmes:
    def __init__(self, pool: asyncpg.Pool, client: GitHubClient, announcer: Announcer):
        self._pool, self._client, self._announce = pool, client, announcer.mods_changed

    async def quietly(self, github_repo_id: int, full_name: str, installation_id: int,
                      default_branch: str | None, *, cause: str = "readme") -> str:
        """:meth:`refresh` for callers whose own work must not fail on a README (onboarding,
        a push, backfill, "Check again"): a GitHub error or a quota wait is logged and the
        README stays as it was until the next of those (each is a cheap 304 when unchanged)."""
        try:
            return await self.refresh(github_repo_id, full_name, installation_id, default_branch, cause=cause)
        except (GitHubError, InstallationUnavailable) as exc:
            log.warning("readme_read_failed", repo=full_name, error=str(exc)[:300])
            return "failed"

    async def refresh(self, github_repo_id: int, full_name: str, installation_id: int,
                      default_branch: str | None, *, cause: str = "readme") -> str:
        """Read the README again if it changed; ``fetched`` (a 200 that changed what is served),
        ``unchanged`` (a 200 with the same content), ``not_modified`` (a 304), ``none`` (the
        repository has no README)."""
        branch = default_branch or "main"
        async with self._pool.acquire() as conn:
            etag = await readmes_q.etag(conn, github_repo_id, markdown.RENDERER)
        try:
            resp = await self._client.get(f"/repos/{full_name}/readme", installation_id=installation_id,
                                          accept=ACCEPT, op="get_readme", if_none_match=etag or None)
        except NotFound:
            return await self._store(github_repo_id, full_name, branch, None, "", "", cause)
        if resp.status == 304:
            async with self._pool.acquire() as conn:
                await readmes_q.checked(conn, github_repo_id)
            return "not_modified"
        data = resp.json() or {}
        text = _decoded(data)
        path = data.get("path") if isinstance(data.get("path"), str) else "README.md"
        return await self._store(github_repo_id, full_name, branch, resp.headers.get("ETag"), path, text, cause)

    async def _store(self, github_repo_id: int, full_name: str, branch: str, etag: str | None, path: str,
                     text: str, cause: str) -> str:
        owner, _, name = full_name.partition("/")
        # Pure Python, ~10-100 ms for a long README: off the event loop, which serves the role's consumers.
        rendered = await asyncio.to_thread(markdown.render, text,
                                           markdown.Repository(owner, name, branch, path or "README.md"))
        async with self._pool.acquire() as conn, conn.transaction():
            changed = await readmes_q.store(
                conn, github_repo_id, etag=etag, path=path, branch=branch,
                raw_text=text[:markdown.MAX_SOURCE_CHARS], html=rendered.html, plain_text=rendered.text,
                truncated=rendered.truncated, renderer=markdown.RENDERER)
        if changed:
            await self._announce([github_repo_id], cause)
        log.info("readme_read", repo=full_name, path=path or None, changed=changed, chars=len(text),
                 html_chars=len(rendered.html), truncated=rendered.truncated)
        return ("fetched" if changed else "unchanged") if path else "none"


def _decoded(data: dict) -> str:
    """The README's text from contents JSON (base64, UTF-8; undecodable bytes replaced)."""
    content = data.get("content")
    if not isinstance(content, str):
        return ""
    if data.get("encoding", "base64") != "base64":
        return content
    try:
        raw = base64.b64decode(content, validate=False)
    except (binascii.Error, ValueError):
        return ""
    return raw.decode("utf-8", "replace").replace("\x00", "\ufffd")
