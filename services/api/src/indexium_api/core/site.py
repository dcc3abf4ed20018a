"""The site's typed app state: its settings, its secret, and the resources it owns (its write pool,
which /api/v1's own routes write through too, by accounts.pool; and its HTTP session)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

import aiohttp
import asyncpg
from aiohttp import web

from .ratelimit import RateLimiter
from .state import API
from ..settings import Settings

# Sign-ins one client may start (per replica; oauth.py): 20 at once (an office behind one
# address), then 2 a minute, so it holds at most ~40 live states.
STATES_AT_ONCE, STATES_PER_MINUTE = 20, 2


@dataclass
class Site:
    settings: Settings
    # Keys the HMACs of session ids, OAuth states and browser nonces. Without sign-in
    # configured nothing outlives the process, so a random key will do.
    secret: bytes
    # Sessions, sign-ins and review decisions are writes: a small pool on DATABASE_URL (the
    # API's own pool is read-only and may point at a replica).
    pool: asyncpg.Pool | None = None
    http: aiohttp.ClientSession | None = None
    # Template context every page gets.
    globals: dict = field(default_factory=dict)
    # Sign-ins started per client (oauth.py: what bounds one client's rows in site_oauth_states).
    sign_ins: RateLimiter | None = None
    # The signed-out nav as every cached public page carries it (render.for_visitor swaps it).
    signed_out_nav: bytes | None = None

    @property
    def secure_cookies(self) -> bool:
        return self.settings.public_url.startswith("https://")

    @property
    def admins(self) -> frozenset[str]:
        return frozenset(login.lower() for login in self.settings.admin_logins)

    @property
    def install_url(self) -> str:
        return f"{self.settings.github_url.rstrip('/')}/apps/{self.settings.github_app_slug}/installations/new"

    @classmethod
    def create(cls, settings: Settings) -> "Site":
        secret = settings.session_secret.encode() if settings.session_secret else secrets.token_bytes(32)
        return cls(settings=settings, secret=secret, sign_ins=RateLimiter(STATES_PER_MINUTE, STATES_AT_ONCE))


SITE = web.AppKey("site", Site)


def add_page(app: web.Application, method: str, path: str, handler, *, name: str) -> None:
    """Add one of the web site's routes: the one way the site registers a route. What makes it
    the site's is this call (Api.site_pages), not its name: an error on it is a page
    (site/mount.py's error_page), and it counts against the site's budget (edge.py). A route
    added any other way (the CSP reports, the feeds, /api/v1) answers errors as the JSON
    envelope. GET routes answer HEAD too, as router.add_get's do."""
    add = {"GET": app.router.add_get, "POST": app.router.add_post}[method]
    app[API].site_pages.add(add(path, handler, name=name).resource)


def add_static(app: web.Application, prefix: str, directory: str, *, name: str) -> None:
    """The site's static files, a site route like add_page's (their 404 is a page)."""
    app[API].site_pages.add(app.router.add_static(prefix, directory, name=name, append_version=False))
