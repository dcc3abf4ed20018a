"""Who is calling the user's own routes (/api/v1/me, /tokens, /subscriptions), and personal
API tokens.

Two ways in. The site's session cookie (``core/sessions.py``): a state-changing request also
sends the session's CSRF token in ``X-CSRF-Token`` (compared in constant time; the site's
forms send the same token as ``csrf_token``). Or a personal API token, ``Authorization: Bearer
idx_…``, which the user creates and revokes with the session (never with a token): 32 random
bytes, shown once, stored only as its SHA-256 (a token is random enough that a hash needs no
key), so a copy of the table authenticates nobody. A token carries no CSRF token: a browser
never sends one by itself, and CORS lets no other site add it (edge.py allows no
``Authorization`` header in a preflight).

This module is the shared half: who is calling, the write pool, and making a token (``make_token``),
called by ``/api/v1``'s routes (``v1/accounts.py``, ``v1/subscriptions.py``) and the site's
forms (``site/subscriptions.py``) alike.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass

from aiohttp import web

from indexium_db.queries import notify as notify_q
from indexium_platform.web import ApiError

from . import bodies
from .state import API
from . import sessions
from .site import SITE

TOKEN_PREFIX = "idx_"
MAX_TOKEN_CHARS = 128
MAX_TOKEN_NAME = 100
BODY_LIMIT = 16 * 1024  # a JSON body of the user's own routes (tokens, subscriptions)


def settings_of(request: web.Request):
    return request.app[API].settings


async def read_body(request: web.Request, cls):
    return await bodies.read(request, cls, BODY_LIMIT)


def uuid_param(request: web.Request, name: str) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info[name])
    except ValueError:
        raise ApiError(404, "not_found", "No such subscription, delivery or token.") from None


@dataclass(frozen=True)
class Caller:
    github_user_id: int
    login: str
    via: str  # session | token
    csrf_token: str | None = None


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def new_token() -> tuple[str, str]:
    """(the token, the prefix kept to tell it apart)."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token[: len(TOKEN_PREFIX) + 6]


def pool(request: web.Request):
    """The site's write pool (DATABASE_URL): the API's own pool is read-only."""
    p = request.app[SITE].pool
    if p is None:
        raise ApiError(503, "unavailable", "The database is unavailable; retry shortly.", {"Retry-After": "5"})
    return p


async def caller(request: web.Request, *, changes: bool, session_only: bool = False) -> Caller:
    header = request.headers.get("Authorization")
    if header is not None:
        if session_only:
            raise ApiError(403, "session_required",
                           "Tokens are created and revoked while signed in on the site, not with a token.")
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token.startswith(TOKEN_PREFIX) or len(token) > MAX_TOKEN_CHARS:
            raise ApiError(401, "invalid_token", "Send a personal API token as 'Authorization: Bearer idx_...'.",
                           {"WWW-Authenticate": 'Bearer realm="indexium"'})
        async with pool(request).acquire() as conn:
            row = await notify_q.user_of_token(conn, token_hash(token))
        if row is None:
            raise ApiError(401, "invalid_token", "This API token is unknown or was revoked.",
                           {"WWW-Authenticate": 'Bearer realm="indexium", error="invalid_token"'})
        return Caller(row["github_user_id"], row["login"], "token")
    session = await sessions.current(request)
    if session is None:
        raise ApiError(401, "unauthenticated", "Sign in on the site, or send a personal API token "
                       "(Authorization: Bearer idx_...).", {"WWW-Authenticate": 'Bearer realm="indexium"'})
    if changes:
        sent = request.headers.get("X-CSRF-Token") or ""
        if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
            raise ApiError(403, "csrf_failed", "A change made with the session cookie must send the session's "
                           "CSRF token (GET /api/v1/me) in the X-CSRF-Token header.")
    return Caller(session.github_user_id, session.login, "session", session.csrf_token)


def token_json(r) -> dict:
    return {"id": str(r["id"]), "name": r["name"], "prefix": r["prefix"], "created_at": r["created_at"].isoformat(),
            "last_used_at": r["last_used_at"].isoformat() if r["last_used_at"] else None}


async def make_token(request: web.Request, who: Caller, name: str) -> dict:
    """A new token for ``who`` (its JSON with ``token``, shown this once), or an ApiError: the
    one way a token is made, for the JSON route (v1/accounts.py) and the site's form."""
    name = " ".join(name.split())
    if not name or len(name) > MAX_TOKEN_NAME or "\x00" in name:
        raise ApiError(400, "invalid_body", "Give the token a name (1 to 100 characters).")
    limit = settings_of(request).max_api_tokens
    token, prefix = new_token()
    async with pool(request).acquire() as conn:
        row = await notify_q.create_token(conn, limit=limit, github_user_id=who.github_user_id, login=who.login,
                                          name=name, token_hash=token_hash(token), prefix=prefix)
    if row is None:
        raise ApiError(403, "token_limit", f"You have {limit} API tokens, the most one user may have; revoke "
                       "one first.")
    return {**token_json(row), "token": token}
