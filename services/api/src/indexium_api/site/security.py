"""What every page sends so that text an author controls cannot act in a visitor's browser.

A mod page shows what a mod author wrote (name, description, links), and an operator signed in
to approve quarantined jars reads those same pages. Templates escape everything and every URL
passes the one URL policy (``indexium_content.urls``); the headers here are the second wall, so
a miss elsewhere still cannot run script (docs/security.md):

* **Content-Security-Policy** without ``'unsafe-inline'`` anywhere, so no inline script, no
  ``on…=`` handler and no ``javascript:`` URL runs, and no ``style=`` attribute applies.
  Pages for everyone (search, mod pages: one cached body served to many) allow only our own
  script file (``script-src 'self'``: no page has an inline script, and a body served to many
  cannot carry a per-response secret). Pages rendered per request (dashboard, review queue,
  sign-in and error pages) get a fresh nonce each: ``script-src 'nonce-…' 'strict-dynamic'``,
  and the template puts it on its one ``<script>`` tag, so not even a file of ours injected
  into the operator's page would run. ``frame-ancestors 'none'`` (and ``X-Frame-Options``
  for older browsers) keeps the review queue out of other sites' frames. ``img-src`` is our
  own icons and badges plus GitHub's avatar host (:data:`IMG_SOURCES`); a page showing a README
  or release notes adds the https origins of exactly the images the sanitizer let through
  (:func:`image_origins`, the page's own header, cached with its body), so an image the
  sanitizer did not write (a miss) still loads from nowhere else.
* **Reports**: ``report-uri`` points at :data:`REPORT_PATH`, counted by ``cspreport.py``: a
  violation on our pages means someone tried (or a browser extension injected something).
  Only ``report-uri``, deprecated in CSP3 but sent by every browser at once: a browser that
  knows ``report-to`` uses it *instead*, and Chromium 156 here never delivered a Reporting
  API report to a loopback origin (70 s, ``--short-reporting-delay`` or not) while it sent
  every ``report-uri`` report immediately. The route reads the Reporting API's format too,
  so adding ``report-to`` and ``Reporting-Endpoints`` is one header once it can be tested.
* ``Referrer-Policy`` (private pages: ``same-origin``; public: the browsers' default
  ``strict-origin-when-cross-origin``, so a mod's homepage learns only that a visitor came from
  us), ``Cross-Origin-Opener-Policy: same-origin``, and ``X-Content-Type-Options: nosniff``
  (the platform's edge sends that one with every answer) — and a ``charset`` on every
  ``text/html``.
* **Operator actions** (approve/reject, "Check again", sign-out) are refused when the browser
  says the request came from another site (``Sec-Fetch-Site`` present and not
  ``same-origin``), beside the session's CSRF token and ``SameSite=Lax``.
"""

from __future__ import annotations

import re
import secrets

from aiohttp import web

REPORT_PATH = "/csp-report"
# Where images may come from: our icons, badges and static files; GitHub's avatars.
IMG_SOURCES = ("'self'", "https://avatars.githubusercontent.com")
NONCE = web.RequestKey("csp_nonce", str)


# A page naming more image origins than this allows every https image instead (a README of
# badges from 40 hosts is real; a header of hundreds of origins is not worth its bytes).
MAX_IMAGE_ORIGINS = 32
# An <img src> the sanitizer wrote (html5ever's serialization: double quotes, the URL passed
# the one URL policy, so no quote or space inside).
_IMG_ORIGIN = re.compile(r'<img\b[^>]*?\ssrc="(https://[^/"?#]+)')


def image_origins(*htmls: str) -> tuple[str, ...]:
    """The https origins of the images in sanitized HTML (README, release notes), sorted; at
    most :data:`MAX_IMAGE_ORIGINS`, else ``("https:",)``."""
    found = sorted({m.lower() for html in htmls if html for m in _IMG_ORIGIN.findall(html)})
    return ("https:",) if len(found) > MAX_IMAGE_ORIGINS else tuple(found)


def policy(nonce: str | None = None, images: tuple[str, ...] = ()) -> str:
    """The Content-Security-Policy of a page; ``nonce``: a page rendered for one response;
    ``images``: https origins its author-written images load from (:func:`image_origins`)."""
    script = f"'nonce-{nonce}' 'strict-dynamic'" if nonce else "'self'"
    return "; ".join((
        "default-src 'none'", f"script-src {script}", "style-src 'self'",
        f"img-src {' '.join((*IMG_SOURCES, *images))}",
        "connect-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
        "object-src 'none'", f"report-uri {REPORT_PATH}",
    ))


_COMMON = {
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
}
PUBLIC_HEADERS = {**_COMMON, "Content-Security-Policy": policy(), "Referrer-Policy": "strict-origin-when-cross-origin"}
_PUBLIC_ITEMS = tuple(PUBLIC_HEADERS.items())


def new_nonce(request: web.Request) -> str:
    """This response's nonce (one per request: the template and the header must agree)."""
    nonce = request.get(NONCE)
    if nonce is None:
        nonce = request[NONCE] = secrets.token_urlsafe(18)
    return nonce


def private_headers(nonce: str, images: tuple[str, ...] = ()) -> dict[str, str]:
    return {**_COMMON, "Content-Security-Policy": policy(nonce, images), "Referrer-Policy": "same-origin"}


def images_allowed(headers) -> tuple[str, ...]:
    """The image origins a cached page's own policy added (``cached_page``'s header), for the
    same body sent to a signed-in visitor under a nonce policy of its own."""
    for name, value in headers:
        if name == "Content-Security-Policy":
            found = re.search(r"img-src ([^;]+)", value)
            return tuple(s for s in found[1].split() if s not in IMG_SOURCES) if found else ()
    return ()


def public(response: web.StreamResponse) -> web.StreamResponse:
    """The headers of a page that is the same for everyone (a cached body, its 304 too)."""
    headers = response.headers
    for name, value in _PUBLIC_ITEMS:
        if name == "Content-Security-Policy" and name in headers:
            continue  # the page's own (cached_page: its README's image origins)
        headers[name] = value
    if response.content_type == "text/html" and response.charset is None and response.status != 304:
        response.charset = "utf-8"
    return response
