"""Sign in with GitHub: a GitHub App's user authorization (the OAuth web flow).

1. ``GET /auth/github/login``: a random ``state`` (stored hashed, with the HMAC of a random
   nonce set as a short-lived cookie in this browser) and a redirect to GitHub's authorize page.
   Anyone can start one, so the rows are bounded three ways: each client may start
   ``STATES_AT_ONCE`` at once and ``STATES_PER_MINUTE`` after that (core/site.py) (in this process's memory,
   keyed as the rate limit is), at most ``MAX_LIVE_STATES`` unexpired rows are stored at all,
   and expired rows are deleted every ``PURGE_EVERY_S`` (:func:`purge_loop`), not only when
   someone signs in.
2. ``GET /auth/github/callback``: the state must exist, be unused and unexpired, and belong
   to this browser's nonce; it is deleted whatever the outcome (single use). Then the code is
   exchanged for a user token (``Accept: application/json``; GitHub answers 200 with an
   ``error`` field when it refuses), and ``/user``, ``/user/installations`` and each
   installation's repositories are read with it. What they say is copied into the session;
   the token itself is dropped at the end of the request: never stored, logged or shown.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import aiohttp
import asyncpg
from aiohttp import web

from indexium_db.queries import site as site_q
from indexium_platform import logs

from ..core.respond import uncached
from ..core.state import API, CLIENT
from ..core import sessions
from .render import cross_site, error_page, page
from ..core.site import SITE, Site, add_page

log = logs.get(__name__)
STATE_TTL = timedelta(minutes=10)  # GitHub's own codes live ten minutes
# Sign-ins one client may start: STATES_AT_ONCE and STATES_PER_MINUTE (core/site.py, the budget's
# home). The whole table: 10,000 live rows (~2 MB).
MAX_LIVE_STATES = 10_000
PURGE_EVERY_S = 60.0  # expired sign-ins, sessions and rate-limit rows deleted this often
GITHUB_TIMEOUT = aiohttp.ClientTimeout(total=10, connect=5)
MAX_PAGES = 10  # 1,000 installations / repositories per installation at 100 a page
CALLBACK_PATH = "/auth/github/callback"

# What GitHub's refusals mean to the person signing in; (status, title, text).
REFUSALS = {
    "bad_verification_code": (400, "Sign-in expired",
                              "GitHub did not accept the sign-in code: it was used already or it expired. "
                              "Please sign in again."),
    "access_denied": (400, "Sign-in cancelled", "You did not authorize Indexium on GitHub, so you are not signed in."),
    "redirect_uri_mismatch": (502, "Sign-in is misconfigured",
                              "GitHub refused Indexium's callback address. The operators have been told; "
                              "please try again later."),
    "incorrect_client_credentials": (502, "Sign-in is misconfigured",
                                     "GitHub refused Indexium's App credentials. The operators have been told; "
                                     "please try again later."),
}
OUTAGE = (502, "GitHub is not answering",
          "Indexium could not reach GitHub to finish signing you in. Nothing was changed; please try again "
          "in a few minutes.")


class GitHubDown(Exception):
    """GitHub did not answer usefully (network, timeout, 5xx, a body that is not what it promised)."""


# Where sign-in returns to, when it was started from a page of the dashboard (a "Subscribe"
# link's prefilled form): a path of ours under /dashboard only, never another host.
RETURN_COOKIE = "indexium_return"
_RETURN = re.compile(r"/dashboard(/[A-Za-z0-9/_-]*)?(\?[A-Za-z0-9._~%&=+-]*)?")


def return_path(value: str | None) -> str | None:
    if not value or len(value) > 1024 or not _RETURN.fullmatch(value):
        return None
    return value


def callback_url(site: Site) -> str:
    return site.settings.public_url.rstrip("/") + CALLBACK_PATH


async def login(request: web.Request) -> web.Response:
    site = request.app[SITE]
    if not site.settings.sign_in_configured:
        return page(request, "signin.html", configured=False, **sessions.context(request, None))
    client = request.get(CLIENT)
    verdict = site.sign_ins.hit(client) if client is not None else None
    if verdict is not None and not verdict.allowed:
        site_metrics(request, "too_many")
        return _retry_later(error_page(request, 429, "Too many sign-ins", (
            "Many sign-ins were started from your network in the last few minutes. Please finish one, "
            "or try again in a minute.")), verdict.reset_s)
    state, nonce = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    async with uncached(request), site.pool.acquire() as conn:
        stored = await site_q.put_state(conn, sessions.digest(site, "state", state),
                                        sessions.digest(site, "nonce", nonce), datetime.now(UTC) + STATE_TTL,
                                        max_live=MAX_LIVE_STATES)
    if not stored:
        log.warning("sign_in_states_full", max_live=MAX_LIVE_STATES)
        site_metrics(request, "too_many")
        return _retry_later(error_page(request, 503, "Sign-in is busy", (
            "Too many sign-ins are in progress right now. Please try again in a minute.")), 60)
    query = urlencode({"client_id": site.settings.github_client_id, "redirect_uri": callback_url(site),
                       "state": state})
    response = web.HTTPFound(f"{site.settings.github_url.rstrip('/')}/login/oauth/authorize?{query}")
    sessions.set_cookie(site, response, sessions.SIGNIN_COOKIE, nonce, max_age=int(STATE_TTL.total_seconds()),
                        path="/auth/github")
    if (back := return_path(request.query.get("next"))) is not None:  # where the callback lands
        sessions.set_cookie(site, response, RETURN_COOKIE, back, max_age=int(STATE_TTL.total_seconds()),
                            path="/auth/github")
    response.headers["Cache-Control"] = "no-store"
    raise response


async def callback(request: web.Request) -> web.Response:
    site = request.app[SITE]
    if not site.settings.sign_in_configured:
        return page(request, "signin.html", configured=False, **sessions.context(request, None))
    state = request.query.get("state", "")
    nonce = request.cookies.get(sessions.SIGNIN_COOKIE)
    valid = False
    if state and len(state) <= 128:
        async with uncached(request), site.pool.acquire() as conn:
            valid = await site_q.take_state(conn, sessions.digest(site, "state", state),
                                            sessions.digest(site, "nonce", nonce) if nonce else None)
    if not valid:
        site_metrics(request, "bad_state")
        return error_page(request, 400, "Sign-in link not valid",
                          "This sign-in link is not valid here: it was used already, it expired, or it was "
                          "started in another browser. Please sign in again.")
    if "error" in request.query:  # the user declined on GitHub's page
        return _refused(request, request.query.get("error", ""))
    code = request.query.get("code", "")
    if not code or len(code) > 256:
        return error_page(request, 400, "Sign-in failed", "GitHub sent no sign-in code. Please sign in again.")
    try:
        token, refusal = await exchange(site, code)
        if refusal is not None:
            return _refused(request, refusal)
        user, installations, repositories = await read_account(site, token)
    except GitHubDown as exc:
        log.warning("github_sign_in_failed", reason=str(exc))
        site_metrics(request, "github_down")
        return error_page(request, *OUTAGE)
    response = web.HTTPSeeOther(return_path(request.cookies.get(RETURN_COOKIE)) or "/dashboard")
    sessions.clear_cookie(site, response, RETURN_COOKIE, path="/auth/github")
    await sessions.start(request, response, user=user, installations=installations, repositories=repositories)
    sessions.clear_cookie(site, response, sessions.SIGNIN_COOKIE, path="/auth/github")
    log.info("signed_in", github_user_id=user["id"], repositories=len(repositories))
    site_metrics(request, "ok")
    raise response


def _retry_later(response: web.Response, seconds: int) -> web.Response:
    response.headers["Retry-After"] = str(seconds)
    return response


async def purge_loop(site: Site, every_s: float) -> None:
    """Deletes expired sign-ins (and sessions, and old rate-limit rows) every ``every_s``, for as
    long as the process runs: a table anyone can add to must not wait for a sign-in to shrink.
    Every replica runs one; the deletes are indexed and idempotent."""
    while True:
        await asyncio.sleep(every_s)
        try:
            async with site.pool.acquire() as conn:
                purged = await site_q.purge_expired(conn, idle_s=sessions.SESSION_IDLE.total_seconds())
        except (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            log.warning("site_purge_failed", error=type(exc).__name__)  # the next pass tries again
        except Exception:
            log.exception("site_purge_failed")  # a bug: said every pass, and the loop goes on
        else:
            if purged:
                log.info("site_purged", rows=purged)


def site_metrics(request: web.Request, outcome: str) -> None:
    request.app[API].metrics.site_sign_ins.labels(outcome).inc()


def _refused(request: web.Request, code: str) -> web.Response:
    status, title, text = REFUSALS.get(code, (400, "Sign-in failed", "GitHub refused the sign-in. Please try again."))
    log.warning("github_sign_in_refused", error=code[:64])
    site_metrics(request, "refused")
    return error_page(request, status, title, text)


async def exchange(site: Site, code: str) -> tuple[str | None, str | None]:
    """(token, None), or (None, GitHub's error code) when it refused the code."""
    url = f"{site.settings.github_url.rstrip('/')}/login/oauth/access_token"
    form = {"client_id": site.settings.github_client_id, "client_secret": site.settings.github_client_secret,
            "code": code, "redirect_uri": callback_url(site)}
    body = await _call(site, "POST", url, data=form)
    if isinstance(body.get("error"), str):
        return None, body["error"]
    token = body.get("access_token")
    if not isinstance(token, str) or not token:
        raise GitHubDown("token answer without access_token")
    return token, None


async def read_account(site: Site, token: str) -> tuple[dict, list, list]:
    api = site.settings.github_api_url.rstrip("/")
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
               "X-GitHub-Api-Version": "2022-11-28"}
    user = await _call(site, "GET", f"{api}/user", headers=headers)
    if not isinstance(user.get("id"), int) or not isinstance(user.get("login"), str):
        raise GitHubDown("user answer without id/login")
    installations, repositories = [], []
    for inst in await _pages(site, f"{api}/user/installations", "installations", headers):
        iid = inst.get("id")
        account = (inst.get("account") or {}).get("login")
        if not isinstance(iid, int):
            continue
        installations.append({"id": iid, "account": account})
        for repo in await _pages(site, f"{api}/user/installations/{iid}/repositories", "repositories", headers):
            if isinstance(repo.get("id"), int) and isinstance(repo.get("full_name"), str):
                repositories.append({"id": repo["id"], "full_name": repo["full_name"],
                                     "private": bool(repo.get("private")), "html_url": repo.get("html_url"),
                                     "installation_id": iid})
    return {"id": user["id"], "login": user["login"], "name": user.get("name")}, installations, repositories


async def _pages(site: Site, url: str, key: str, headers: dict) -> list[dict]:
    out: list[dict] = []
    for n in range(1, MAX_PAGES + 1):
        body = await _call(site, "GET", url, headers=headers, params={"per_page": "100", "page": str(n)})
        items = body.get(key)
        if not isinstance(items, list):
            raise GitHubDown(f"{key} answer without a list")
        out += [i for i in items if isinstance(i, dict)]
        total = body.get("total_count")
        if not items or (isinstance(total, int) and len(out) >= total) or len(items) < 100:
            break
    return out


async def _call(site: Site, method: str, url: str, **kwargs) -> dict:
    headers = {"Accept": "application/json", "User-Agent": "indexium-site", **kwargs.pop("headers", {})}
    try:
        async with site.http.request(method, url, headers=headers, timeout=GITHUB_TIMEOUT, **kwargs) as resp:
            if resp.status >= 500 or resp.status in (401, 403, 404, 429):
                raise GitHubDown(f"{method} {resp.url.path} answered {resp.status}")
            try:
                body = await resp.json(content_type=None)
            except ValueError:
                raise GitHubDown(f"{method} {resp.url.path} answered a body that is not JSON") from None
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        raise GitHubDown(f"{method} {url.split('?')[0]}: {type(exc).__name__}") from None
    if not isinstance(body, dict):
        raise GitHubDown(f"{method} answered {type(body).__name__}, not an object")
    return body


async def sign_out(request: web.Request) -> web.Response:
    if (refused := cross_site(request)) is not None:
        return refused
    session = await sessions.current(request)
    form = await request.post()
    if session is not None and not sessions.csrf_ok(session, form):
        return error_page(request, 403, "Form expired", "This form is out of date. Go back, reload and try again.")
    response = web.HTTPSeeOther("/")
    await sessions.end(request, response)
    response.headers["Cache-Control"] = "no-store"
    raise response


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/auth/github/login", login, name="site-signin")
    add_page(app, "GET", CALLBACK_PATH, callback, name="site-callback")
    add_page(app, "POST", "/auth/sign-out", sign_out, name="site-signout")
