"""Server-side sessions: a random cookie, its HMAC as the row's key, a CSRF token per session.

The cookie is 32 random bytes (urlsafe base64), ``HttpOnly``, ``SameSite=Lax``, ``Path=/``,
and ``Secure`` when the public URL is https. The table stores only HMAC-SHA256(secret,
cookie), so reading the table (a backup, a replica) gives nobody a working cookie. Every
state-changing form posts the session's CSRF token; it is compared in constant time.
SameSite=Lax already keeps cross-site POSTs from carrying the cookie; the token also
covers browsers and same-site subdomains that do not honour it. A session ends 12 hours after
sign-in, or after an hour unused.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from aiohttp import web

from indexium_content import urls
from indexium_db.queries import site as site_q
from indexium_platform import logs

from .respond import uncached
from .site import SITE, Site

log = logs.get(__name__)

COOKIE = "indexium_session"
SIGNIN_COOKIE = "indexium_signin"  # the browser nonce an OAuth state is bound to
SESSION_LIFETIME = timedelta(hours=12)  # what GitHub said the user can reach is copied at sign-in: re-read twice a day
# A session unused this long ends (a browser left signed in, a copied cookie no longer used by its
# owner): signing in again is one click once the App is authorized. Its last use is written at
# most once per SEEN_EVERY, so it costs no write per request (site_q.get_session).
SESSION_IDLE = timedelta(hours=1)
SEEN_EVERY = timedelta(minutes=5)
_CURRENT = web.RequestKey("site_session", object)


@dataclass(frozen=True)
class Session:
    github_user_id: int
    login: str
    name: str | None
    csrf_token: str
    installations: list
    repositories: list
    expires_at: datetime


def new_token() -> str:
    return secrets.token_urlsafe(32)


def digest(site: Site, purpose: str, value: str) -> bytes:
    """HMAC of a cookie, state or nonce; ``purpose`` keeps the kinds from standing in for each other."""
    return hmac.new(site.secret, f"{purpose}:{value}".encode(), hashlib.sha256).digest()


def set_cookie(site: Site, response: web.StreamResponse, name: str, value: str, *, max_age: int,
               path: str = "/") -> None:
    response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="Lax",
                        secure=site.secure_cookies)


def clear_cookie(site: Site, response: web.StreamResponse, name: str, path: str = "/") -> None:
    response.del_cookie(name, path=path, httponly=True, samesite="Lax", secure=site.secure_cookies)


async def current(request: web.Request) -> Session | None:
    """The signed-in session of this request, or None (read once per request)."""
    if _CURRENT in request:
        return request[_CURRENT]
    session = None
    site = request.app[SITE]
    raw = request.cookies.get(COOKIE)
    if raw and len(raw) <= 128 and site.pool is not None:
        async with uncached(request), site.pool.acquire() as conn:  # (any cookie costs a read: capped per client)
            row = await site_q.get_session(conn, digest(site, "session", raw),
                                           idle_s=SESSION_IDLE.total_seconds(),
                                           seen_every_s=SEEN_EVERY.total_seconds())
        if row is not None:
            session = Session(row["github_user_id"], row["login"], row["name"], row["csrf_token"],
                              row["installations"], row["repositories"], row["expires_at"])
    request[_CURRENT] = session
    return session


def known(request: web.Request) -> Session | None:
    """The session :func:`current` read for this request already, else None (never a read)."""
    return request.get(_CURRENT)


async def start(request: web.Request, response: web.StreamResponse, *, user: dict, installations: list,
                repositories: list) -> None:
    """A new session for this GitHub user, its cookie set on ``response``."""
    site = request.app[SITE]
    raw = new_token()
    async with site.pool.acquire() as conn:
        # Sign-ins are rare enough to carry them (the table holds at most 12 hours of sign-ins).
        await site_q.purge_expired(conn, idle_s=SESSION_IDLE.total_seconds())
        await site_q.create_session(
            conn, id_hash=digest(site, "session", raw), github_user_id=int(user["id"]), login=str(user["login"]),
            name=user.get("name"), avatar_url=_avatar(user), csrf_token=new_token(),
            installations=installations, repositories=repositories,
            expires_at=datetime.now(UTC) + SESSION_LIFETIME)
    set_cookie(site, response, COOKIE, raw, max_age=int(SESSION_LIFETIME.total_seconds()))


async def end(request: web.Request, response: web.StreamResponse) -> None:
    """Delete the session row (the cookie is worthless from now on, wherever a copy is) and the cookie."""
    site = request.app[SITE]
    raw = request.cookies.get(COOKIE)
    if raw and site.pool is not None:
        async with site.pool.acquire() as conn:
            await site_q.delete_session(conn, digest(site, "session", raw))
    clear_cookie(site, response, COOKIE)
    request[_CURRENT] = None


def csrf_ok(session: Session | None, form) -> bool:
    token = form.get("csrf_token") if form is not None else None
    return (session is not None and isinstance(token, str)
            and hmac.compare_digest(token.encode(), session.csrf_token.encode()))


def _avatar(user: dict) -> str | None:
    """GitHub's avatar URL through the one URL policy, like every URL we store (docs/security.md)."""
    url, reason = urls.check(user.get("avatar_url"))
    if url is None and user.get("avatar_url") is not None:
        log.warning("url_refused", link="avatar_url", source="github_user", reason=reason)
    return url


def context(request: web.Request, session: Session | None) -> dict:
    """What base.html shows of the session (the nav bar)."""
    site = request.app[SITE]
    return {"user": session, "csrf_token": session.csrf_token if session else "",
            "is_admin": bool(session and session.login.lower() in site.admins)}
