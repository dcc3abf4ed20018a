"""A GitHub App's user authorization (the OAuth web flow) as github.com answers it.

``GET /login/oauth/authorize`` approves at once as the user chosen with
``FakeGitHub.oauth.sign_in_as`` (no consent screen to click through) and redirects to the
``redirect_uri`` with a one-time ``code`` and the caller's ``state``. ``POST
/login/oauth/access_token`` trades the code for a user token; like GitHub it answers 200
with an ``error`` field (``bad_verification_code``, ``incorrect_client_credentials``,
``redirect_uri_mismatch``) when it refuses. ``GET /user``, ``/user/installations`` and
``/user/installations/{id}/repositories`` then answer for that user: the installations on
the user's own account plus those the user was made a member of.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from aiohttp import web

from .appauth import AuthError
from .models import Installation, Repo, User

if TYPE_CHECKING:  # pragma: no cover
    from .server import FakeGitHub

CODE_TTL_S = 600.0  # GitHub's codes expire after ten minutes
DOCS_OAUTH = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"


@dataclass
class _Code:
    user: User
    client_id: str
    redirect_uri: str | None
    expires_at: float


@dataclass
class OAuth:
    gh: "FakeGitHub"
    client_id: str = "Iv1.fakeclientid0001"
    client_secret: str = field(default_factory=lambda: secrets.token_hex(20))
    user: User | None = None  # who /login/oauth/authorize signs in
    members: dict[int, set[str]] = field(default_factory=dict)  # installation id -> logins
    codes: dict[str, _Code] = field(default_factory=dict)
    tokens: dict[str, User] = field(default_factory=dict)
    refuse_next: str | None = None  # answer the next token exchange with this error code
    authorizations: int = 0
    exchanges: int = 0

    def sign_in_as(self, login: str, *, member_of: list[Installation] = ()) -> User:
        """The user the authorize page approves as; ``member_of``: installations they can reach
        besides those on their own account."""
        user = self.gh.state.user(login)
        self.user = user
        for inst in member_of:
            self.members.setdefault(inst.id, set()).add(user.login.lower())
        return user

    def installations_of(self, user: User) -> list[Installation]:
        return sorted((i for i in self.gh.state.installations.values()
                       if i.account.login.lower() == user.login.lower()
                       or user.login.lower() in self.members.get(i.id, set())), key=lambda i: i.id)

    # ---- routes -------------------------------------------------------------------------------
    async def authorize(self, request: web.Request) -> web.Response:
        q = request.query
        if q.get("client_id") != self.client_id:
            return web.Response(status=404, text="Not Found")
        if self.user is None:
            return web.Response(status=403, text="No user is signed in to the fake GitHub (oauth.sign_in_as)")
        redirect = q.get("redirect_uri")
        if not redirect:
            return web.Response(status=400, text="redirect_uri is required here")
        self.authorizations += 1
        code = secrets.token_hex(10)
        self.codes[code] = _Code(self.user, self.client_id, redirect, self.gh.now() + CODE_TTL_S)
        params = {"code": code}
        if "state" in q:
            params["state"] = q["state"]
        sep = "&" if "?" in redirect else "?"
        raise web.HTTPFound(f"{redirect}{sep}{urlencode(params)}")

    async def access_token(self, request: web.Request) -> web.Response:
        self.exchanges += 1
        if request.content_type == "application/json":
            data = await request.json()
        else:
            data = dict(await request.post())
        data.update({k: v for k, v in request.query.items() if k not in data})
        wants_json = "application/json" in request.headers.get("Accept", "")

        def answer(payload: dict) -> web.Response:
            if wants_json:
                return web.json_response(payload)
            return web.Response(text=urlencode(payload), content_type="application/x-www-form-urlencoded")

        def refuse(code: str, description: str) -> web.Response:
            return answer({"error": code, "error_description": description, "error_uri": DOCS_OAUTH})

        if self.refuse_next is not None:
            code, self.refuse_next = self.refuse_next, None
            return refuse(code, f"Refused on purpose ({code}).")
        if data.get("client_id") != self.client_id or data.get("client_secret") != self.client_secret:
            return refuse("incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.")
        grant = self.codes.pop(str(data.get("code", "")), None)
        if grant is None or grant.expires_at <= self.gh.now() or grant.client_id != self.client_id:
            return refuse("bad_verification_code", "The code passed is incorrect or expired.")
        if data.get("redirect_uri") and data["redirect_uri"] != grant.redirect_uri:
            return refuse("redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL.")
        token = "ghu_" + secrets.token_hex(18)
        self.tokens[token] = grant.user
        return answer({"access_token": token, "token_type": "bearer", "scope": "",
                       "expires_in": 28800, "refresh_token": "ghr_" + secrets.token_hex(30),
                       "refresh_token_expires_in": 15897600})

    def _user(self, request: web.Request) -> User:
        scheme, _, credential = request.headers.get("Authorization", "").partition(" ")
        user = self.tokens.get(credential.strip()) if scheme.lower() in ("token", "bearer") else None
        if user is None:
            raise AuthError("Requires authentication" if not credential else "Bad credentials")
        return user

    async def get_user(self, request: web.Request) -> web.Response:
        from .api import json_response  # noqa: PLC0415
        from .render import user_json  # noqa: PLC0415

        user = self._user(request)
        return json_response({**user_json(user, self.gh.urls), "name": user.login.replace("-", " ").title()})

    async def user_installations(self, request: web.Request) -> web.Response:
        from .api import json_response, paginate  # noqa: PLC0415
        from .render import installation_json  # noqa: PLC0415

        insts = self.installations_of(self._user(request))
        chunk, headers = paginate(request, insts)
        return json_response({"total_count": len(insts),
                              "installations": [installation_json(i, self.gh.app.app_id, self.gh.urls) for i in chunk]},
                             headers=headers)

    async def installation_repositories(self, request: web.Request) -> web.Response:
        from .api import json_response, not_found, paginate  # noqa: PLC0415
        from .render import repo_json  # noqa: PLC0415

        user = self._user(request)
        wanted = int(request.match_info["installation_id"])
        inst = next((i for i in self.installations_of(user) if i.id == wanted), None)
        if inst is None:
            return not_found()
        repos: list[Repo] = list(inst.repos)
        chunk, headers = paginate(request, repos)
        return json_response({"total_count": len(repos), "repository_selection": inst.repository_selection,
                              "repositories": [repo_json(r, self.gh.urls) for r in chunk]}, headers=headers)

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/login/oauth/authorize", self.authorize, allow_head=False)
        router.add_post("/login/oauth/access_token", self.access_token)
        router.add_get("/user", self.get_user, allow_head=False)
        router.add_get("/user/installations", self.user_installations, allow_head=False)
        router.add_get(r"/user/installations/{installation_id:\d+}/repositories", self.installation_repositories,
                       allow_head=False)
