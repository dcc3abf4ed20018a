"""/api/v1's own routes of a signed-in user: /api/v1/me and /api/v1/tokens (personal API
tokens). Who is calling (a session or a token), the write pool and making a token are
``core/accounts.py``'s, shared with the site's forms.
"""

from __future__ import annotations

import msgspec
from aiohttp import web

from indexium_db.queries import notify as notify_q
from indexium_platform.web import ApiError, json_response

from ..core.accounts import caller, make_token, pool, read_body, token_json, uuid_param


class NewToken(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    name: str


# ---- routes ----------------------------------------------------------------------------------------

async def me(request: web.Request) -> web.Response:
    who = await caller(request, changes=False)
    return json_response({"login": who.login, "github_user_id": who.github_user_id, "via": who.via,
                          "csrf_token": who.csrf_token}, headers={"Cache-Control": "no-store"})


async def list_tokens(request: web.Request) -> web.Response:
    who = await caller(request, changes=False, session_only=True)
    async with pool(request).acquire() as conn:
        rows = await notify_q.tokens_of(conn, who.github_user_id)
    return json_response({"tokens": [token_json(r) for r in rows]}, headers={"Cache-Control": "no-store"})


async def create_token(request: web.Request) -> web.Response:
    who = await caller(request, changes=True, session_only=True)
    body = await read_body(request, NewToken)
    return json_response(await make_token(request, who, body.name), status=201,
                         headers={"Cache-Control": "no-store"})


async def revoke_token(request: web.Request) -> web.Response:
    who = await caller(request, changes=True, session_only=True)
    token_id = uuid_param(request, "token_id")
    async with pool(request).acquire() as conn:
        if not await notify_q.delete_token(conn, who.github_user_id, token_id):
            raise ApiError(404, "not_found", "No such token.")
    return web.Response(status=204, headers={"Cache-Control": "no-store"})
