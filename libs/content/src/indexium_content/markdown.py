"""Markdown we did not write (READMEs, release notes) as HTML a visitor's browser may show.

One renderer and one sanitizer for every author-written Markdown (conventions.md, points 14
and 15): ``markdown-it-py`` with GitHub's flavour as READMEs are written for it (tables,
strikethrough, autolinks through ``linkify-it-py``, task lists from ``mdit-py-plugins``,
raw HTML allowed, since READMEs centre their logos and badges with it), then ``nh3``
(ammonia) against the allow-list below. Nothing of the author's reaches the page unless
that list names it: no ``script``/``style``/``iframe``/``form``/``object``/``svg``, no
event attribute, no ``style`` or ``id``/``name`` attribute (inline style would need
``'unsafe-inline'``; ids could clobber the page's own), no class but the task list's.

Every ``href`` and ``src`` (Markdown's and raw HTML's alike, after the sanitizer's HTML
parser has decoded entities) is resolved against the repository and then passes
:func:`indexium_content.urls.check`; a URL the policy refuses is dropped (the link keeps
its text, the image its nothing; an image must be https, as the page's CSP allows no other).
Resolution, at the repository's default branch:

* a link to a path -> ``https://github.com/{owner}/{repo}/blob/{branch}/{path}`` (GitHub's
  own page for the file, as GitHub renders the README);
* an image path -> ``https://raw.githubusercontent.com/{owner}/{repo}/{branch}/{path}``:
  the bytes themselves from one origin. ``github.com/{o}/{r}/raw/...`` answers with a
  redirect to that same host, so it would cost every visitor a round trip and the CSP's
  ``img-src`` both origins;
* a path is read relative to the README's directory; ``/path`` from the repository root;
  a fragment alone (``#install``) -> the Markdown file's page on GitHub with that fragment
  (our page has no ids of the author's to land on).

Headings move down by ``heading_shift`` levels (h1 -> h2 under the page's ``<h1>``; h6
stays h6). The HTML is cut between top-level blocks once it passes ``max_chars``, and a
"Read more on GitHub" link follows the cut. :func:`plain_text` is what search stores.

:func:`neutralise_links` is for the raw Markdown the JSON APIs serve (``/v2`` ``changelog``,
``/api/v1`` ``changelog``): every link destination the policy refuses becomes ``#``, so a
launcher that renders Markdown itself cannot be handed a ``javascript:`` link.

Pure: no I/O, no logging (the import-linter contract of this package holds that).
"""

from __future__ import annotations

import html
import posixpath
import re
from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

import nh3
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.tasklists import tasklists_plugin

from indexium_content import urls

# What is rendered at all: a longer README is cut to this much Markdown first. A real README
# is 2-30 KB (GitHub's own display stops at 512 KB); markdown-it is linear in practice but
# its worst cases are not, and nothing past ~100 KB of HTML would be shown anyway.
MAX_SOURCE_CHARS = 256_000
# A README's HTML on the page: 64 KiB, past which the rest is behind "Read more on GitHub".
# Keeps a mod page under ~100 KB over the wire and a card cache entry bounded.
README_MAX_HTML = 65_536
# One version's release notes: 16 KiB of HTML (the page shows a dozen of them).
NOTES_MAX_HTML = 16_384
# The plain text search stores (mods.readme_text's bound, migration 0022).
PLAIN_MAX_CHARS = 16_000
MORE_TEXT = "Read more on GitHub"
# Stored with rendered HTML (repository_readmes.renderer): a reader finding an older number
# renders the stored Markdown again rather than serve what an older allow-list let through.
RENDERER = 1

_TAGS = frozenset({
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "center", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "input", "ins", "kbd", "li", "mark", "ol",
    "p", "pre", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var", "wbr",
})
# Removed with their content (the rest of the unknown tags keep their text).
_CLEAN_CONTENT = frozenset({"script", "style", "iframe", "object", "embed", "template", "noscript",
                            "svg", "math", "textarea", "select", "title", "xmp", "noembed", "noframes"})
_ALIGNABLE = ("p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "img", "table")
_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title"},
    "img": {"src", "alt", "title", "width", "height"},
    "abbr": {"title"}, "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"},
    "ol": {"start"}, "details": {"open"},
}
_ATTRIBUTE_VALUES = {
    tag: {"align": {"left", "right", "center", "justify"}} for tag in _ALIGNABLE
}
# A task list's box: always a disabled checkbox, whatever the author wrote.
_ATTRIBUTE_VALUES["input"] = {"checked": {"", "checked"}}
_SET_ATTRIBUTES = {
    "input": {"type": "checkbox", "disabled": "disabled"},
    # README images come from hosts we do not run: they learn nothing of our page's address
    # and load only when scrolled to.
    "img": {"referrerpolicy": "no-referrer", "loading": "lazy"},
}
_CLASSES = {"li": {"task-list-item"}, "ul": {"contains-task-list"}}
_LINK_REL = "nofollow noopener noreferrer ugc"

# What a repository path never holds: a scheme, a backslash, controls and spaces (a browser
# drops a tab inside "java\tscript:"), the characters RFC 3986 never allows.
_NOT_A_PATH = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:|[\x00-\x20\x7f-\x9f"<>\\^`{|}\u00ad\u200b-\u200f\u2028\u2029\ufeff]')
_HEADING = re.compile(r"<(/?)h([1-6])\b")


def quote(text: str, safe: str = "/") -> str:
    """``text`` percent-encoded as UTF-8 but for unreserved characters, ``%`` runs already
    encoded and ``safe`` (urllib.parse is an I/O-side module to this package's contract)."""
    keep = _UNRESERVED | frozenset(safe)
    return "".join(ch if ch in keep else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in text)


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@dataclass(frozen=True)
class Repository:
    """Where relative links and images resolve: ``owner/name`` at ``branch``, the Markdown
    file at ``path`` (a README may live in ``docs/``; release notes have no file: ``""``)."""

    owner: str
    name: str
    branch: str = "main"
    path: str = "README.md"

    def file_url(self, path: str, *, raw: bool) -> str:
        where = quote(path.lstrip("/"), safe="/-._~!$&'()*+,;=:@%")
        owner, name, branch = (quote(p, safe="") for p in (self.owner, self.name, self.branch))
        if raw:
            return f"https://raw.githubusercontent.com/{owner}/{name}/{branch}/{where}"
        return f"https://github.com/{owner}/{name}/blob/{branch}/{where}"

    @property
    def home(self) -> str:
        return f"https://github.com/{quote(self.owner, safe='')}/{quote(self.name, safe='')}"

    @property
    def page(self) -> str:
        """The Markdown file's page on GitHub (the "Read more" link), else the repository's."""
        return self.file_url(self.path, raw=False) if self.path else self.home


class Rendered(NamedTuple):
    """``html``: sanitized, to insert as is; ``text``: plain text (search); ``truncated``:
    the HTML was cut and ends with the "Read more on GitHub" link; ``images``: the image URLs
    the HTML loads (each passed the URL policy), for the CSP and the tests."""

    html: str
    text: str
    truncated: bool
    images: tuple[str, ...]


def render(source: str, repository: Repository | None = None, *, heading_shift: int = 1,
           max_chars: int = README_MAX_HTML, more_url: str | None = None) -> Rendered:
    """``source`` (Markdown, untrusted) as sanitized HTML for a page, with its plain text.
    ``more_url``: where "Read more on GitHub" goes past the cap (a release's page); by default
    the Markdown file's page in ``repository``."""
    source = (source or "").replace("\x00", "\ufffd")[:MAX_SOURCE_CHARS]
    tokens = _parser().parse(source, {})
    _align_as_attribute(tokens)
    blocks = _top_level_blocks(tokens)
    renderer = _parser().renderer
    parts: list[str] = []
    size = 0
    for block in blocks:
        chunk = renderer.render(block, _parser().options, {})
        if size + len(chunk) > max_chars:
            break
        parts.append(chunk)
        size += len(chunk)
    truncated = len(parts) < len(blocks)
    while True:
        images: list[str] = []
        body = _cleaner(repository, images).clean("".join(parts))
        # The sanitizer adds rel="..." to every link: a page of links can outgrow the cap.
        if len(body) <= max_chars or not parts:
            break
        parts = parts[:len(parts) * 3 // 4]
        truncated = True
    if heading_shift:
        body = _HEADING.sub(lambda m: f"<{m[1]}h{min(6, int(m[2]) + heading_shift)}", body)
    if truncated:
        more = more_url or (repository.page if repository else None)
        more = urls.allowed(more) if more else None
        if more:
            body += (f'<p class="md-more"><a href="{html.escape(more)}" rel="{_LINK_REL}">'
                     f"{MORE_TEXT}</a></p>")
    return Rendered(body, _plain(tokens), truncated, tuple(dict.fromkeys(images)))


def plain_text(source: str) -> str:
    """The words of ``source`` as a reader sees them (no markup, no code blocks, no raw
    HTML, image alt text kept), whitespace collapsed, at most :data:`PLAIN_MAX_CHARS`."""
    source = (source or "").replace("\x00", "\ufffd")[:MAX_SOURCE_CHARS]
    return _plain(_parser().parse(source, {}))


def neutralise_links(source: str, repository: Repository | None = None) -> str:
    """``source`` with every link or image destination the URL policy refuses replaced
    (inline links, reference definitions, ``<...>`` autolinks and raw HTML's URL attributes:
    ``href``, ``src``, ``srcset``, ``action``, ``formaction``, ``xlink:href``, ``poster``,
    ``background``, ``data``, ``cite``, ``ping``): a repository path by its absolute URL on
    GitHub when ``repository`` is given (an image's by its raw URL), anything else by ``#``.
    The rest of the text is left as written."""
    if not source:
        return source or ""
    source = source.replace("\x00", "\ufffd")  # (as every Markdown parser reads a NUL)
    fix = lambda destination: _rewritten(destination, repository)  # noqa: E731
    out = _inline_destinations(source, fix)
    out = _REF_DEF.sub(lambda m: m[1] + fix(m[2]), out)
    out = _AUTOLINK.sub(lambda m: m[0] if _policy_passes(m[1]) else "#", out)
    return _HTML_ATTR.sub(lambda m: m[1] + _rewritten_attribute(m[1], m[2], repository), out)


# -- rendering -----------------------------------------------------------------------------

@cache
def _parser() -> MarkdownIt:
    # "gfm-like": CommonMark + tables, strikethrough, linkify, raw HTML; typographer off.
    md = MarkdownIt("gfm-like", {"linkify": True, "html": True})
    md.use(tasklists_plugin)
    # markdown-it's own link check (no javascript:/vbscript:/file:/data:) stays on: a second
    # door behind the sanitizer's.
    return md


def _align_as_attribute(tokens: list[Token]) -> None:
    """A table cell's alignment as ``align`` rather than inline style, which the CSP
    (``style-src 'self'``) would block and the sanitizer drops."""
    for token in tokens:
        if token.type in ("th_open", "td_open"):
            style = token.attrGet("style")
            if isinstance(style, str) and style.startswith("text-align:"):
                token.attrs.pop("style", None)
                token.attrSet("align", style.split(":", 1)[1].strip())


def _top_level_blocks(tokens: list[Token]) -> list[list[Token]]:
    blocks: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    for token in tokens:
        current.append(token)
        depth += token.nesting
        if depth == 0:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _resolve(value: str, repository: Repository | None, *, image: bool) -> str | None:
    value = value.strip()
    if not value:
        return None
    if urls.check(value).url is not None or repository is None:
        return urls.allowed(value)
    if value.startswith("//") or _NOT_A_PATH.search(value):
        return None  # another scheme, protocol-relative, a backslash or a control: never a path
    path, _, fragment = value.partition("#")
    if ":" in path.split("/", 1)[0]:
        return None  # (a scheme, however spelt: "jav ascript:", "&#58;" decoded)
    if not path:
        if image or not repository.path:
            return None
        return urls.allowed(repository.page + "#" + fragment)
    path, _, _query = path.partition("?")
    base = posixpath.dirname(repository.path) if repository.path else ""
    joined = posixpath.normpath(posixpath.join("/", base, path) if not path.startswith("/") else path)
    if joined in ("/", "."):
        return None if image else urls.allowed(repository.home)
    url = repository.file_url(joined, raw=image)
    if fragment and not image:
        url += "#" + quote(fragment, safe="-._~")
    return urls.allowed(url)


def _cleaner(repository: Repository | None, images: list[str]) -> nh3.Cleaner:
    def attribute_filter(tag: str, attribute: str, value: str) -> str | None:
        if attribute in ("href", "src"):
            url = _resolve(value, repository, image=attribute == "src")
            if url is not None and tag == "img":
                if not url.startswith("https://"):
                    return None  # a plain-http image: mixed content, and the page's CSP allows https only
                images.append(url)
            return url
        if attribute in ("width", "height"):
            return value if re.fullmatch(r"[0-9]{1,4}%?", value.strip()) else None
        return value

    return nh3.Cleaner(
        tags=set(_TAGS), clean_content_tags=set(_CLEAN_CONTENT), attributes=_ATTRIBUTES,
        attribute_filter=attribute_filter, strip_comments=True, link_rel=_LINK_REL,
        tag_attribute_values=_ATTRIBUTE_VALUES, set_tag_attribute_values=_SET_ATTRIBUTES,
        url_schemes={"http", "https"}, allowed_classes=_CLASSES,
    )


def _plain(tokens: list[Token]) -> str:
    words: list[str] = []
    size = 0
    for token in tokens:
        if token.type != "inline" or not token.children:
            continue
        for child in token.children:
            if child.type in ("text", "code_inline"):
                piece = child.content
            elif child.type == "image":
                piece = " ".join(c.content for c in child.children or () if c.type == "text")
            elif child.type in ("softbreak", "hardbreak"):
                piece = " "
            else:
                continue
            words.append(piece)
            size += len(piece)
        words.append(" ")
        if size > PLAIN_MAX_CHARS * 2:
            break
    return " ".join("".join(words).split())[:PLAIN_MAX_CHARS]


# -- neutralising raw Markdown --------------------------------------------------------------

# [text](destination "title") / ![alt](<destination>): where a destination starts.
_INLINE_START = re.compile(r"\]\([ \t]*\n?[ \t]*")
# [label]: destination "title" (a reference definition, at most three spaces in).
_REF_DEF = re.compile(r"(?m)^( {0,3}\[[^\]\n]+\]:[^\S\n]*\n?[^\S\n]*)(<[^>\n]*>|\S+)")
# <scheme:...> autolinks.
_AUTOLINK = re.compile(r"<([A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]*)>")
# A raw HTML attribute that takes a URL, quoted or not.
_HTML_ATTR = re.compile(
    r"""(?i)(\s(?:href|src|srcset|action|formaction|xlink:href|poster|background|data|cite|ping)\s*=\s*)"""
    r"""("[^"]*"|'[^']*'|[^\s"'=<>`]+)""")


def _inline_destinations(source: str, fix) -> str:
    """Each inline link destination replaced by ``fix(destination)``, read as CommonMark reads
    one: ``<...>`` up to the ``>``, else up to a space, a control or the ``)`` that closes
    the parentheses opened inside it (backslash escapes skipped)."""
    out: list[str] = []
    at = 0
    for m in _INLINE_START.finditer(source):
        start = m.end()
        if start < at:
            continue
        end = _destination_end(source, start)
        if end is None or end == start:
            continue
        out += [source[at:start], fix(source[start:end])]
        at = end
    out.append(source[at:])
    return "".join(out)


def _destination_end(source: str, start: int) -> int | None:
    if source.startswith("<", start):
        i = start + 1
        while i < len(source) and source[i] not in "<>\n":
            i += 2 if source[i] == "\\" else 1
        return i + 1 if i < len(source) and source[i] == ">" else None
    depth = 0
    i = start
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            i += 2
            continue
        if ch <= " " or ch == "\x7f":
            break
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                break
            depth -= 1
        i += 1
    return i


_IMAGE_PATH = re.compile(r"(?i)\.(png|jpe?g|gif|webp|svg|avif|bmp|ico)$")


def _unescaped(destination: str) -> str:
    from markdown_it.common.utils import unescapeAll  # (Markdown's own \x and &x; unescaping)

    return html.unescape(unescapeAll(destination))


def _policy_passes(destination: str) -> bool:
    return urls.check(_unescaped(destination)).url is not None


def _rewritten(destination: str, repository: Repository | None) -> str:
    inner = destination[1:-1] if destination.startswith("<") and destination.endswith(">") else destination
    if not inner or _policy_passes(inner):
        return destination
    value = _unescaped(inner)
    resolved = _resolve(value, repository, image=bool(_IMAGE_PATH.search(value.partition("?")[0]))) if repository else None
    if resolved is None:
        return "#"
    return "<" + resolved + ">" if "(" in resolved or ")" in resolved else resolved


def _rewritten_attribute(name: str, value: str, repository: Repository | None) -> str:
    inner = value[1:-1] if value[:1] in "\"'" else value
    if "srcset" in name.lower():
        ok = all(_policy_passes(part.split()[0]) for part in inner.split(",") if part.strip())
        return value if ok else '"#"'
    if _policy_passes(inner):
        return value
    resolved = _resolve(html.unescape(inner), repository, image="src" in name.lower()) if repository else None
    return '"' + html.escape(resolved) + '"' if resolved else '"#"'
