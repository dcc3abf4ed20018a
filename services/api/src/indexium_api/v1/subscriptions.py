"""/api/v1/subscriptions: a signed-in user's webhook subscriptions to new public versions
(docs/notifications.md). The notify role of the indexer matches and delivers; this module
creates, lists, deletes, resumes and redelivers, and shows the delivery log.

Everything a caller sends is checked here once: the target by the same policy the notify role
applies at every delivery (indexium_notify.targets, resolved now: a private address is
refused at creation too), loaders against the loaders the index knows, game versions against
the Minecraft versions table, every list and string bounded. The signing secret is shown in
the creation's answer and never again (indexium_notify.signing: it is derived, not stored).
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from aiohttp import web

from indexium_db.queries import catalog as catalog_q, notify as notify_q
from indexium_jar import formats
from indexium_notify import signing
from indexium_notify.targets import TargetRefused
from indexium_platform.web import ApiError, json_response

from . import accounts, subscription_docs
from .accounts import read_body, settings_of, uuid_param
from ..core import apidoc
from .build import BASE

LOG_ROWS_SHOWN = 100
LOADERS = frozenset(formats.LOADERS)
_NO_STORE = {"Cache-Control": "no-store"}


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


def _key(request: web.Request) -> bytes:
    key = settings_of(request).notify_secret_key
    if not key:
        raise ApiError(503, "notifications_off", "Webhook subscriptions are not configured on this server "
                       "(INDEXIUM_NOTIFY_SECRET_KEY).")
    return key.encode()


# ---- what is answered ------------------------------------------------------------------------------

def _iso(t) -> str | None:
    return t.isoformat() if t is not None else None


def subscription_json(r) -> dict:
    return {
        "id": str(r["id"]), "kind": r["kind"], "mod": r["mod_slug"], "author": r["author_login"],
        "search": ({"q": r["search_q"], "category": list(r["search_categories"])} if r["kind"] == "search" else None),
        "loaders": list(r["loaders"]), "game_versions": list(r["game_versions"]),
        "game_version_min": r["game_version_min"], "version_types": list(r["version_types"]),
        "format": r["format"], "target_url": r["target_url"], "state": r["state"],
        "paused_at": _iso(r["paused_at"]), "paused_reason": r["paused_reason"],
        "failing_since": _iso(r["failing_since"]), "consecutive_failures": r["consecutive_failures"],
        "created_at": _iso(r["created_at"]),
    }


def _delivery(r) -> dict:
    return {"id": str(r["id"]), "mod": r["mod_slug"], "version_number": r["version_number"], "event": r["event"],
            "state": r["state"], "attempts": r["attempts"], "next_attempt_at": _iso(r["next_attempt_at"]),
            "deadline_at": _iso(r["deadline_at"]), "redelivered": r["redeliver"], "last_status": r["last_status"],
            "last_error": r["last_error"], "created_at": _iso(r["created_at"]), "finished_at": _iso(r["finished_at"])}


def _attempt(r) -> dict:
    return {"delivery_id": str(r["delivery_id"]), "attempted_at": _iso(r["attempted_at"]), "outcome": r["outcome"],
            "response_code": r["response_code"], "latency_ms": r["latency_ms"],
            "response_head": r["response_head"], "error": r["error"]}


# ---- routes ----------------------------------------------------------------------------------------

async def create(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=True)
    _key(request)  # 503 before reading a body the server cannot act on
    answer = await make(request, who, await read_body(request, NewSubscription))
    return json_response(answer, status=201, headers=_NO_STORE)


async def make(request: web.Request, who: accounts.Caller, body: NewSubscription) -> dict:
    """Check ``body`` and create the subscription: its JSON with ``secret`` (the only time it
    is shown), or an ApiError saying what was refused. The one way a subscription is made:
    the JSON route above and the site's form (site/subscriptions.py) both call it."""
    key = _key(request)
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


async def list_(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=False)
    s = settings_of(request)
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    async with accounts.pool(request).acquire() as conn:
        rows = await notify_q.subscriptions_of(conn, who.github_user_id)
        used = await notify_q.deliveries_this_hour(conn, who.github_user_id, hour)
    return json_response({
        "subscriptions": [subscription_json(r) for r in rows],
        "limits": {"subscriptions": s.notify_max_subscriptions, "subscriptions_used": len(rows),
                   "deliveries_per_hour": s.notify_max_deliveries_per_hour, "deliveries_this_hour": used},
    }, headers=_NO_STORE)


async def _own(request: web.Request, conn, who) -> dict:
    row = await notify_q.get_subscription(conn, who.github_user_id, uuid_param(request, "subscription_id"))
    if row is None:
        raise ApiError(404, "not_found", "No such subscription.")
    return row


async def get(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=False)
    async with accounts.pool(request).acquire() as conn:
        row = await _own(request, conn, who)
    return json_response(subscription_json(row), headers=_NO_STORE)


async def delete(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=True)
    async with accounts.pool(request).acquire() as conn:
        if not await notify_q.delete_subscription(conn, who.github_user_id, uuid_param(request, "subscription_id")):
            raise ApiError(404, "not_found", "No such subscription.")
    return web.Response(status=204, headers=_NO_STORE)


async def resume(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=True)
    async with accounts.pool(request).acquire() as conn:
        row = await _own(request, conn, who)
        await notify_q.resume(conn, who.github_user_id, row["id"], give_up_s=settings_of(request).notify_give_up_s)
        row = await _own(request, conn, who)
    return json_response(subscription_json(row), headers=_NO_STORE)


async def deliveries(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=False)
    async with accounts.pool(request).acquire() as conn:
        row = await _own(request, conn, who)
        found = await notify_q.deliveries_of(conn, row["id"], LOG_ROWS_SHOWN)
        tried = await notify_q.attempts_of(conn, row["id"], LOG_ROWS_SHOWN)
    return json_response({"subscription": subscription_json(row), "deliveries": [_delivery(d) for d in found],
                          "attempts": [_attempt(a) for a in tried]}, headers=_NO_STORE)


async def redeliver(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=True)
    async with accounts.pool(request).acquire() as conn:
        row = await _own(request, conn, who)
        if not await notify_q.redeliver(conn, who.github_user_id, row["id"], uuid_param(request, "delivery_id"),
                                        give_up_s=settings_of(request).notify_give_up_s):
            raise ApiError(404, "not_found", "No such delivery of this subscription.")
    return json_response({"queued": True}, status=202, headers=_NO_STORE)


def setup(app: web.Application) -> None:
    r = app.router
    r.add_get(f"{BASE}/me", accounts.me)
    r.add_get(f"{BASE}/tokens", accounts.list_tokens)
    r.add_post(f"{BASE}/tokens", accounts.create_token)
    r.add_delete(BASE + "/tokens/{token_id}", accounts.revoke_token)
    r.add_get(f"{BASE}/subscriptions", list_)
    r.add_post(f"{BASE}/subscriptions", create)
    r.add_get(BASE + "/subscriptions/{subscription_id}", get)
    r.add_delete(BASE + "/subscriptions/{subscription_id}", delete)
    r.add_post(BASE + "/subscriptions/{subscription_id}/resume", resume)
    r.add_get(BASE + "/subscriptions/{subscription_id}/deliveries", deliveries)
    r.add_post(BASE + "/subscriptions/{subscription_id}/deliveries/{delivery_id}/redeliver", redeliver)
    apidoc.register(app, subscription_docs.paths(), subscription_docs.schemas())
