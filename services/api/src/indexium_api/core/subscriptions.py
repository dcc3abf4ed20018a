"""Making a signed-in user's webhook subscription to new public versions (docs/notifications.md):
the half of /api/v1/subscriptions the site's form shares. The notify role of the indexer
matches and delivers.

Everything a caller sends is checked here once: the target by the same policy the notify role
applies at every delivery (indexium_notify.targets, resolved now: a private address is
refused at creation too), loaders against the loaders the index knows, game versions against
the Minecraft versions table, every list and string bounded. The signing secret is shown in
the creation's answer and never again (indexium_notify.signing: it is derived, not stored).

This module is the shared half: the body, its checks and making a subscription (``make``),
called by ``/api/v1``'s route (``v1/subscriptions.py``) and the site's form
(``site/subscriptions.py``) alike.
"""

from __future__ import annotations

import msgspec
from aiohttp import web

from indexium_db.queries import catalog as catalog_q, notify as notify_q
from indexium_jar import formats
from indexium_notify import signing
from indexium_notify.targets import TargetRefused
from indexium_platform.web import ApiError

from . import accounts
from .accounts import settings_of

LOADERS = frozenset(formats.LOADERS)


class Search(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    q: str | None = None
    category: list[str] = []


class NewSubscription(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    target_url: str
    format: str = "indexium"
    mod: str | None = None
    author: str | None = None
    search: Search | None = None
    loaders: list[str] = []
    game_versions: list[str] = []
    game_version_min: str | None = None
    version_types: list[str] = []


def _strings(field: str, values: list[str], *, most: int, max_len: int) -> list[str]:
    if len(values) > most:
        raise ApiError(400, "invalid_body", f"{field}: at most {most} values.")
    out: dict[str, None] = {}
    for v in values:
        v = v.strip()
        if not v or len(v) > max_len or "\x00" in v or not v.isprintable():
            raise ApiError(400, "invalid_body", f"{field}: each value is 1 to {max_len} printable characters.")
        out[v] = None
    return list(out)


def signing_key(request: web.Request) -> bytes:
    key = settings_of(request).notify_secret_key
    if not key:
        raise ApiError(503, "notifications_off", "Webhook subscriptions are not configured on this server "
                       "(INDEXIUM_NOTIFY_SECRET_KEY).")
    return key.encode()


# ---- what is answered ------------------------------------------------------------------------------

def iso(t) -> str | None:
    return t.isoformat() if t is not None else None


def subscription_json(r) -> dict:
    return {
        "id": str(r["id"]), "kind": r["kind"], "mod": r["mod_slug"], "author": r["author_login"],
        "search": ({"q": r["search_q"], "category": list(r["search_categories"])} if r["kind"] == "search" else None),
        "loaders": list(r["loaders"]), "game_versions": list(r["game_versions"]),
        "game_version_min": r["game_version_min"], "version_types": list(r["version_types"]),
        "format": r["format"], "target_url": r["target_url"], "state": r["state"],
        "paused_at": iso(r["paused_at"]), "paused_reason": r["paused_reason"],
        "failing_since": iso(r["failing_since"]), "consecutive_failures": r["consecutive_failures"],
        "created_at": iso(r["created_at"]),
    }


async def make(request: web.Request, who: accounts.Caller, body: NewSubscription) -> dict:
    """Check ``body`` and create the subscription: its JSON with ``secret`` (the only time it
    is shown), or an ApiError saying what was refused. The one way a subscription is made:
    the JSON route (v1/subscriptions.py) and the site's form (site/subscriptions.py) both call it."""
    key = signing_key(request)
    s = settings_of(request)
    if sum(x is not None for x in (body.mod, body.author, body.search)) != 1:
        raise ApiError(400, "invalid_body", "Subscribe to exactly one of: mod (a slug), author (a login), "
                       "search ({q, category}).")
    if body.format not in ("indexium", "discord"):
        raise ApiError(400, "invalid_body", "format: 'indexium' (signed JSON) or 'discord'.")
    loaders = [v.lower() for v in _strings("loaders", body.loaders, most=20, max_len=32)]
    if unknown := [v for v in loaders if v not in LOADERS]:
        raise ApiError(400, "invalid_body", f"loaders: unknown loader {unknown[0]!r} "
                       f"(one of {', '.join(sorted(LOADERS))}).")
    versions = _strings("game_versions", body.game_versions, most=50, max_len=64)
    minimum = _strings("game_version_min", [body.game_version_min], most=1, max_len=64)[0] \
        if body.game_version_min is not None else None
    if versions and minimum:
        raise ApiError(400, "invalid_body", "Give game_versions (exact) or game_version_min (that version and "
                       "newer), not both.")
    types = _strings("version_types", body.version_types, most=3, max_len=16)
    if bad := [v for v in types if v not in catalog_q.VERSION_TYPES]:
        raise ApiError(400, "invalid_body", f"version_types: {bad[0]!r} is not release, beta or alpha.")
    categories = _strings("search.category", body.search.category, most=20, max_len=64) if body.search else []
    q = " ".join(body.search.q.split()) if body.search and body.search.q else None
    if q is not None and (len(q) > 200 or "\x00" in q):
        raise ApiError(400, "invalid_body", "search.q: at most 200 characters.")
    try:
        await s.notify_policy().check_url(body.target_url)
    except TargetRefused as exc:
        raise ApiError(400, "invalid_target", f"target_url refused: {exc.reason}.") from None
    async with accounts.pool(request).acquire() as conn:
        mod_id = author_id = author_login = None
        if body.mod is not None:
            mod = await notify_q.mod_for_subscription(conn, body.mod.strip().lower()[:64])
            if mod is None:
                raise ApiError(400, "unknown_mod", f"No mod {body.mod[:64]!r} on Indexium.")
            mod_id = mod["id"]
        if body.author is not None:
            author = await notify_q.author_by_login(conn, body.author.strip()[:64])
            if author is None:
                raise ApiError(400, "unknown_author", f"No author {body.author[:64]!r} on Indexium.")
            author_id, author_login = author["github_id"], author["login"]
        wanted = versions + ([minimum] if minimum else [])
        if missing := sorted(set(wanted) - await notify_q.known_game_versions(conn, wanted)):
            raise ApiError(400, "invalid_body", f"game version {missing[0]!r} is not a Minecraft version.")
        salt = signing.new_salt()
        row = await notify_q.create_subscription(
            conn, limit=s.notify_max_subscriptions, github_user_id=who.github_user_id, owner_login=who.login,
            kind="mod" if mod_id else "author" if author_id else "search", mod_id=mod_id,
            author_github_id=author_id, author_login=author_login, search_q=q, search_categories=categories,
            loaders=loaders, game_versions=versions, game_version_min=minimum, version_types=types,
            format=body.format, target_url=body.target_url, secret_salt=salt)
    if row is None:
        raise ApiError(403, "subscription_limit", f"You have {s.notify_max_subscriptions} subscriptions, the "
                       "most one user may have; delete one first.")
    return {**subscription_json(row), "secret": signing.secret_for(key, salt)}
