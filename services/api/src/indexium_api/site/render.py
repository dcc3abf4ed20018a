"""Templates -> HTML responses; error pages; cached pages through the API's own cache."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

import threading
from typing import TYPE_CHECKING

import markupsafe
from aiohttp import hdrs, web

from indexium_content import urls
from indexium_jar import gameversions

from ..core.respond import Cached, cached, entry
from . import security
from ..core import sessions
from .downloads import loader_name
from ..core.site import SITE

if TYPE_CHECKING:
    import jinja2

HTML = "text/html"
# Pages that depend on who asks are never stored by a browser or proxy.
PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "same-origin"}


def _ago(value: datetime | None) -> str:
    if value is None:
        return "never"
    seconds = (datetime.now(UTC) - value).total_seconds()
    for unit, size in (("year", 31_536_000), ("month", 2_592_000), ("day", 86_400), ("hour", 3_600),
                       ("minute", 60)):
        if seconds >= size:
            n = int(seconds // size)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)  # pragma: no cover


def _mc_versions(versions, snapshots: bool = False, limit: int | None = None) -> str:
    """Game versions as players read them: "1.20–1.20.6", snapshots and pre-releases left out
    unless asked for or all there is (indexium_jar.gameversions.shown_versions); ``limit``: the
    newest that many groups, then how many older ones were left out."""
    groups, _ = gameversions.shown_versions(versions or (), snapshots=snapshots)
    if limit is not None and len(groups) > limit:
        return ", ".join(groups[-limit:]) + f" (+{len(groups) - limit} older)"
    return ", ".join(groups)


_BREAK_AFTER = re.compile(r"([./$!])")


def _wbr(value) -> markupsafe.Markup:
    """A class name or path that may wrap after its dots, slashes and ``$`` (``<wbr>``), never
    mid-word: ``com.example.lumen.Boot`` breaks between packages. Escaped first."""
    return markupsafe.Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(markupsafe.escape(value or ""))))


class Templates:
    """The site's jinja2 environment, built when the first page is rendered: importing jinja2 and
    building it is ~0.2-0.3 s of CPU an API replica's start would otherwise spend before it is
    ready, for pages a launcher-facing replica may never render (issue 38). Each template is
    compiled on its first use, as jinja2 does."""

    def __init__(self) -> None:
        self._env: jinja2.Environment | None = None
        self._lock = threading.Lock()

    def env(self) -> jinja2.Environment:
        env = self._env
        if env is None:
            with self._lock:
                if self._env is None:
                    self._env = _environment()
                env = self._env
        return env


TEMPLATES = web.AppKey("site_templates", Templates)


def _environment() -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("indexium_api.site", "templates"),
        autoescape=jinja2.select_autoescape(default=True), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True,
    )
    env.filters["ago"] = _ago
    env.filters["size"] = _size
    env.filters["mc_versions"] = _mc_versions
    env.filters["wbr"] = _wbr
    env.filters["loader_name"] = loader_name  # "neoforge" -> "NeoForge"
    env.filters["day"] = lambda d: d.strftime("%Y-%m-%d") if d else ""
    env.filters["moment"] = lambda d: d.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if d else ""
    # A URL we did not write, as an href: the one URL policy's answer, or None (then no link).
    env.filters["http_url"] = urls.allowed
    return env


def setup(app: web.Application) -> Templates:
    app[TEMPLATES] = templates = Templates()
    return templates


def text(app: web.Application, template: str, **context) -> str:
    env = app[TEMPLATES].env()
    return env.get_template(template).render({**app[SITE].globals, **context})


def page(request: web.Request, template: str, status: int = 200, headers: dict | None = None, **context) -> web.Response:
    """A page for this request (it may show who is signed in): never cached anywhere, its
    Content-Security-Policy with this response's own nonce (security.py). Without a ``user``
    in ``context``, the header shows the session this request has read already, if any (an
    error page answered by a handler that read it: the same header as the page it refused)."""
    nonce = security.new_nonce(request)
    if "user" not in context:
        context.update(sessions.context(request, sessions.known(request)))
    body = text(request.app, template, csp_nonce=nonce, **context)
    return web.Response(status=status, text=body, content_type=HTML, charset="utf-8",
                        headers={**PRIVATE, **security.private_headers(nonce), **(headers or {})})


def cached_page(app: web.Application, template: str, status: int = 200, *, images: tuple[str, ...] = (),
                **context) -> Cached:
    """A page that is the same for everyone, as an entry for the API's cache (ETag included);
    its handler sends it with ``security.public``'s headers. ``images``: the https origins of
    the author-written images it shows (a README's, release notes'), which its own
    Content-Security-Policy then allows (``security.policy``)."""
    body = text(app, template, **context).encode()
    extra = (("Content-Security-Policy", security.policy(images=images)),) if images else ()
    return Cached(status, body, '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"',
                  HTML, extra)  # (utf-8: every page declares <meta charset> first)


# What a public page carries in its header and <head> for everyone (signed out, no nonce); a
# signed-in visitor gets the same body with these two swapped (for_visitor).
SCRIPT_TAG = b'<script src="/static/site/site.js" defer></script>'


def _nonced_script(nonce: str) -> bytes:
    return f'<script src="/static/site/site.js" defer nonce="{nonce}"></script>'.encode()


def nav(app: web.Application, **context) -> bytes:
    env = app[TEMPLATES].env()
    return env.get_template("nav.html").render({**app[SITE].globals, **context}).encode()


async def for_visitor(request: web.Request, key: tuple, tags: tuple[str, ...], compute) -> web.StreamResponse:
    """A public page from the API's cache, as this visitor sees it.

    Signed out (no session cookie, or a dead one): the cached answer itself, with ETag/304 and
    the public headers. Signed in: the same cached body with the signed-in nav (Dashboard, Sign
    out with the session's CSRF token) in place of the signed-out one, sent like a per-request
    page (``no-store``, its own CSP nonce, no ETag), so every page's header says who is signed
    in while the page itself is still computed once for everyone. A session cookie costs one
    session read (sessions.current: an in-flight slot, as on the dashboard)."""
    # (No Cookie header, the usual anonymous hit: no cookie parsing at all.)
    has_cookie = hdrs.COOKIE in request.headers and sessions.COOKIE in request.cookies
    session = await sessions.current(request) if has_cookie else None
    if session is None:
        response = await cached(request, key, tags, compute)
        # A browser that signs in does not reuse its signed-out copy (beside Accept-Encoding, a gzip'ed entry's).
        vary = response.headers.get(hdrs.VARY)
        response.headers[hdrs.VARY] = "Cookie" if vary is None else vary + ", Cookie"
        if has_cookie:  # a session that ended (idle, signed out elsewhere): its cookie costs no more reads
            sessions.clear_cookie(request.app[SITE], response, sessions.COOKIE)
            response.headers["Cache-Control"] = "no-store"
        return security.public(response)
    value = await entry(request, key, tags, compute)
    site = request.app[SITE]
    signed_out = site.signed_out_nav
    if signed_out is None:
        signed_out = site.signed_out_nav = nav(request.app)
    nonce = security.new_nonce(request)
    body = value.body.replace(signed_out, nav(request.app, **sessions.context(request, session)), 1)
    body = body.replace(SCRIPT_TAG, _nonced_script(nonce), 1)
    return web.Response(status=value.status, body=body, content_type=HTML, charset="utf-8",
                        headers={**PRIVATE, **security.private_headers(nonce, security.images_allowed(value.extra_headers)),
                                 "Vary": "Cookie"})


def error_page(request: web.Request, status: int, title: str, message: str) -> web.Response:
    return page(request, "error.html", status=status, title=title, message=message, status_code=status)


def cross_site(request: web.Request) -> web.Response | None:
    """A 403 page for a state-changing request another site made the browser send, else None.

    Browsers send ``Sec-Fetch-Site`` with every request (same-origin, same-site, cross-site,
    or none for one the user typed); an operator's own form posts say ``same-origin``. A
    client that sends no such header (an old browser, a script) is left to the CSRF token."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is None or site == "same-origin":
        return None
    return error_page(request, 403, "Refused", "This action can only be taken from Indexium's own pages.")
