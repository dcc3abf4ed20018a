"""Author-written Markdown as every surface serves it: the README's stored HTML, release notes
rendered for the site, and raw changelogs for the JSON APIs with refused links neutralised.

One renderer for all of it (:mod:`indexium_content.markdown`). The README is rendered once
by the GitHub role and stored (``repository_readmes.html``); release notes are rendered here,
when a page that shows them is computed (the page is then cached under the mod's tag like the
card, so a new release or a README change invalidates it through the same events). Rendering
costs milliseconds per version (markdown-it-py is pure Python: ~5-25 ms for 2.5 KB of notes on
this machine under load), and one mod's page has many cache keys (range, day, the visitor's
download choice), so rendered notes are kept in a small LRU of their own keyed by a digest of
the text (:data:`NOTES_CACHE` entries of at most ``markdown.NOTES_MAX_HTML`` characters each:
a few MB at most; the text itself is never a key).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from indexium_content import markdown, urls

# How many versions' notes the mod page renders (the newest open, the rest in <details>); the
# changelog page shows every version.
PAGE_NOTES = 10
NOTES_CACHE = 512
_rendered: OrderedDict[tuple, str] = OrderedDict()
_lock = threading.Lock()  # pages render their notes in worker threads (asyncio.to_thread)


def readme_html(row) -> str | None:
    """The stored, sanitized README HTML of a card row read with ``readme_html`` (None: the
    repository has none, or it was never read)."""
    html = row.get("readme_html") if hasattr(row, "get") else None
    return html or None


def repository(row) -> markdown.Repository | None:
    """Where a mod's release notes resolve relative links: its repository at the default branch."""
    full_name = row["repo_full_name"] or ""
    owner, _, name = full_name.partition("/")
    if not owner or not name:
        return None
    branch = (row.get("default_branch") if hasattr(row, "get") else None) or "main"
    return markdown.Repository(owner, name, branch, path="")


def release_url(repo: markdown.Repository | None, tag: str | None) -> str | None:
    if repo is None or not tag:
        return None
    return urls.allowed(f"{repo.home}/releases/tag/{markdown.quote(tag, safe='')}")


def notes(changelog: str | None, repo: markdown.Repository | None, tag: str | None, *,
          heading_shift: int = 2) -> str:
    """One version's release notes as sanitized HTML ('' for none), at most
    ``markdown.NOTES_MAX_HTML`` then a "Read more on GitHub" link to the release."""
    if not changelog or not changelog.strip():
        return ""
    key = (hashlib.blake2b(changelog.encode("utf-8", "surrogatepass"), digest_size=16).digest(), repo, tag,
           heading_shift)
    with _lock:
        html = _rendered.get(key)
        if html is not None:
            _rendered.move_to_end(key)
            return html
    html = _render_notes(changelog, repo, tag, heading_shift)
    with _lock:
        _rendered[key] = html
        while len(_rendered) > NOTES_CACHE:
            _rendered.popitem(last=False)
    return html


def _render_notes(changelog: str, repo: markdown.Repository | None, tag: str | None, heading_shift: int) -> str:
    return markdown.render(changelog, repo, heading_shift=heading_shift, max_chars=markdown.NOTES_MAX_HTML,
                           more_url=release_url(repo, tag)).html


def changelog(text: str | None) -> str | None:
    """A raw Markdown changelog for ``/v2`` and ``/api/v1``: the author's text, with every link
    or image destination the URL policy refuses replaced by ``#`` (issue 33: links in release
    notes), so a launcher that renders it cannot be handed a ``javascript:`` link."""
    if text is None:
        return None
    return markdown.neutralise_links(text)
