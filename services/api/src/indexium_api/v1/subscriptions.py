"""/api/v1/subscriptions: a signed-in user's webhook subscriptions to new public versions
(docs/notifications.md). The notify role of the indexer matches and delivers; this module
creates, lists, deletes, resumes and redelivers, and shows the delivery log.

Everything a caller sends is checked once (in ``core/subscriptions.py``): the target by the same policy the notify role
applies at every delivery (indexium_notify.targets, resolved now: a private address is
refused at creation too), loaders against the loaders the index knows, game versions against
the Minecraft versions table, every list and string bounded. The signing secret is shown in
the creation's answer and never again (indexium_notify.signing: it is derived, not stored).

The body, its checks and making a subscription are ``core/subscriptions.py``'s, shared with
the site's form.
"""

from __future__ import annotations

from datetime import UTC, datetime

from aiohttp import web

from indexium_db.queries import notify as notify_q
from indexium_platform.web import ApiError, json_response

from . import accounts as account_routes, subscription_docs
from ..core import accounts, apidoc
from ..core.accounts import read_body, settings_of, uuid_param
from ..core.subscriptions import NewSubscription, iso, make, signing_key, subscription_json
from .build import BASE

LOG_ROWS_SHOWN = 100
_NO_STORE = {"Cache-Control": "no-store"}


# ---- what is answered ------------------------------------------------------------------------------

def _delivery(r) -> dict:
    return {"id": str(r["id"]), "mod": r["mod_slug"], "version_number": r["version_number"], "event": r["event"],
            "state": r["state"], "attempts": r["attempts"], "next_attempt_at": iso(r["next_attempt_at"]),
            "deadline_at": iso(r["deadline_at"]), "redelivered": r["redeliver"], "last_status": r["last_status"],
            "last_error": r["last_error"], "created_at": iso(r["created_at"]), "finished_at": iso(r["finished_at"])}


def _attempt(r) -> dict:
    return {"delivery_id": str(r["delivery_id"]), "attempted_at": iso(r["attempted_at"]), "outcome": r["outcome"],
            "response_code": r["response_code"], "latency_ms": r["latency_ms"],
            "response_head": r["response_head"], "error": r["error"]}


# ---- routes ----------------------------------------------------------------------------------------

async def create(request: web.Request) -> web.Response:
    who = await accounts.caller(request, changes=True)
    signing_key(request)  # 503 before reading a body the server cannot act on
    answer = await make(request, who, await read_body(request, NewSubscription))
    return json_response(answer, status=201, headers=_NO_STORE)


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
    r.add_get(f"{BASE}/me", account_routes.me)
    r.add_get(f"{BASE}/tokens", account_routes.list_tokens)
    r.add_post(f"{BASE}/tokens", account_routes.create_token)
    r.add_delete(BASE + "/tokens/{token_id}", account_routes.revoke_token)
    r.add_get(f"{BASE}/subscriptions", list_)
    r.add_post(f"{BASE}/subscriptions", create)
    r.add_get(BASE + "/subscriptions/{subscription_id}", get)
    r.add_delete(BASE + "/subscriptions/{subscription_id}", delete)
    r.add_post(BASE + "/subscriptions/{subscription_id}/resume", resume)
    r.add_get(BASE + "/subscriptions/{subscription_id}/deliveries", deliveries)
    r.add_post(BASE + "/subscriptions/{subscription_id}/deliveries/{delivery_id}/redeliver", redeliver)
    apidoc.register(app, subscription_docs.paths(), subscription_docs.schemas())
