"""The dashboard's webhook subscriptions and personal API tokens (docs/notifications.md, "On
the site"): plain HTML forms, each working without JavaScript.

Nothing is checked twice in two ways: a subscription is made by ``core/subscriptions.py``'s ``make``
and a token by ``core/accounts.py``'s ``make_token``, the very functions behind ``/api/v1/subscriptions`` and
``/api/v1/tokens``; their refusals (``ApiError``: a private target, the per-user limits, an
unknown mod, a bad game version) are shown on the page above the form, with what was typed
kept. Delete, resume and redeliver are the API's query functions, each scoped to the signed-in
user: another user's subscription or delivery is "not found", never acted on.

Every POST is refused without the session's CSRF token, and when the browser says another
site sent it (``render.cross_site``), as the review queue's are. The secret and a new
token are in the answer to the POST that made them (``Cache-Control: no-store``) and never
again. Every list is bounded: subscriptions and tokens by the per-user limits, the delivery
log by pages of :data:`DELIVERIES_PER_PAGE`, each delivery's attempts by :data:`ATTEMPTS_SHOWN`.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qsl, urlsplit

from aiohttp import web
from multidict import MultiDict

from indexium_db.queries import catalog as catalog_q, notify as notify_q
from indexium_platform.web import ApiError, read_request_body

from ..core import accounts, sessions, subscriptions as core_subscriptions
from .render import cross_site, error_page, page
from ..core.site import SITE, add_page

FORM_LIMIT = 16 * 1024  # the JSON route's body limit
DELIVERIES_PER_PAGE = 20
ATTEMPTS_SHOWN = 5  # per delivery on the page (the log keeps INDEXIUM_NOTIFY_LOG_ROWS per subscription)
LAST_ERRORS = 5
MAX_LOG_PAGE = 100
RELEASES_OFFERED = 80  # Minecraft releases in the "this version and newer" field's suggestions
FIELD_LIMITS = {"mod": 64, "author": 64, "q": 200, "category": 1400, "game_versions": 3300,
                "game_version_min": 64, "target_url": 2048, "name": 100}
KINDS = ("mod", "author", "search")
FORMATS = {"indexium": "Indexium JSON (signed)", "discord": "Discord webhook"}
VERSION_TYPES = tuple(catalog_q.VERSION_TYPES)
_SPLIT = re.compile(r"[\s,]+")


class FormRefused(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _words(value: str) -> list[str]:
    return [w for w in _SPLIT.split(value) if w]


async def _form(request: web.Request) -> MultiDict:
    raw = await read_request_body(request, FORM_LIMIT, encodings=())
    return MultiDict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))


async def _signed_in_post(request: web.Request):
    """(session, form) of a same-site POST with the session's CSRF token, or a refusal page."""
    if (refused := cross_site(request)) is not None:
        return None, None, refused
    session = await sessions.current(request)
    if session is None:
        return None, None, error_page(request, 403, "Not signed in", "Sign in to manage your subscriptions.")
    form = await _form(request)
    if not sessions.csrf_ok(session, form):
        return None, None, error_page(request, 403, "Form expired",
                                      "This form is out of date. Go back, reload and try again.")
    return session, form, None


def _caller(session) -> accounts.Caller:
    return accounts.Caller(session.github_user_id, session.login, "session", session.csrf_token)


def _id(request: web.Request, name: str) -> uuid.UUID:
    try:
        return uuid.UUID(request.match_info[name])
    except ValueError:
        raise web.HTTPNotFound() from None


def _not_found(request: web.Request) -> web.Response:
    return error_page(request, 404, "No such subscription",
                      "You have no subscription or delivery at this address. It may have been deleted.")


def _sign_in(request: web.Request) -> web.Response:
    """The sign-in page, returning here (a prefilled form included) once signed in."""
    return page(request, "signin.html", configured=request.app[SITE].settings.sign_in_configured,
                next_path=str(request.rel_url)[:1024], **sessions.context(request, None))


# ---- the form -------------------------------------------------------------------------------------

def prefill(query) -> dict:
    """The form's values from a "Subscribe" link (a mod page, a search: the search's own
    parameters) or from a refused POST (the form's fields). Each value cut to its field's
    bound; ``body_of`` refuses what is longer."""
    def one(name: str, most: int = 64) -> str:
        return str(query.get(name, "")).strip()[:most + 1]

    def many(name: str, most: int) -> list[str]:
        return [str(v).strip()[:65] for v in query.getall(name, [])[:most + 1] if str(v).strip()]

    values = {name: one(name, most) for name, most in FIELD_LIMITS.items() if name != "name"}
    kind = one("kind")
    values["kind"] = kind if kind in KINDS else "author" if values["author"] else "search" if values["q"] else "mod"
    values["category"] = " ".join(str(v) for v in query.getall("category", [])[:20]).strip()[
        :FIELD_LIMITS["category"] + 1]
    if not values["game_versions"]:
        values["game_versions"] = " ".join(many("game_version", 50))  # the search's own parameter
    mode = one("gv_mode")
    values["gv_mode"] = mode if mode in ("any", "exact", "min") else (
        "min" if values["game_version_min"] else "exact" if values["game_versions"] else "any")
    values["loaders"] = [v.lower() for v in many("loader", 20)]
    values["version_types"] = many("version_type", 3)
    values["format"] = one("format", 16) or "indexium"  # anything else is the API's to refuse
    return values


def body_of(values: dict) -> core_subscriptions.NewSubscription:
    """The form's values as the JSON route's body; FormRefused for what the form alone gets wrong."""
    for name, most in FIELD_LIMITS.items():
        if len(str(values.get(name, ""))) > most:
            raise FormRefused(400, f"{name.replace('_', ' ')}: at most {most} characters.")
    if not values["target_url"]:
        raise FormRefused(400, "Give the address (target URL) that should receive the deliveries.")
    kind = values["kind"]
    target = {"mod": None, "author": None, "search": None}
    if kind == "mod":
        if not values["mod"]:
            raise FormRefused(400, "Give the mod's slug (as in its address, /mods/slug).")
        target["mod"] = values["mod"]
    elif kind == "author":
        if not values["author"]:
            raise FormRefused(400, "Give the author's GitHub login.")
        target["author"] = values["author"]
    else:
        target["search"] = core_subscriptions.Search(q=values["q"] or None, category=_words(values["category"]))
    mode = values["gv_mode"]
    return core_subscriptions.NewSubscription(
        target_url=values["target_url"], format=values["format"], **target, loaders=values["loaders"],
        game_versions=_words(values["game_versions"]) if mode == "exact" else [],
        game_version_min=(values["game_version_min"] or None) if mode == "min" else None,
        version_types=values["version_types"])


def shown_target(url: str) -> str:
    """The target URL as the pages show it: scheme, host and path, each long path segment cut
    to its first 4 characters and the query left out, so a Discord webhook's token (or any
    secret in a path) is not on the screen or in a screenshot. The owner typed the whole URL;
    the API's GET shows it whole to its owner."""
    parts = urlsplit(url)
    path = "/".join(seg if len(seg) <= 24 else seg[:4] + "…" for seg in parts.path.split("/"))
    return f"{parts.scheme}://{parts.netloc}{path}{'?…' if parts.query else ''}"[:300]


def describe(sub) -> dict:
    """What a subscription is to, and its filters, as the pages say them."""
    if sub["kind"] == "mod":
        what = f"Mod {sub['mod_slug'] or '(removed)'}"
    elif sub["kind"] == "author":
        what = f"Author {sub['author_login']}"
    else:
        words = f"“{sub['search_q']}”" if sub["search_q"] else "every mod"
        cats = list(sub["search_categories"])
        what = f"Search {words}" + (f" in {', '.join(cats)}" if cats else "")
    if sub["game_version_min"]:
        versions = f"{sub['game_version_min']} and newer"
    else:
        versions = ", ".join(sub["game_versions"]) or "any game version"
    filters = [", ".join(sub["loaders"]) or "any loader", versions,
               ", ".join(sub["version_types"]) or "any version type"]
    return {"what": what, "filters": filters, "format": FORMATS.get(sub["format"], sub["format"]),
            "target": shown_target(sub["target_url"])}


# ---- pages ----------------------------------------------------------------------------------------

async def _overview(request: web.Request, session, *, status: int = 200, form: dict | None = None,
                    refused: str | None = None, created: dict | None = None, token: dict | None = None,
                    token_refused: str | None = None, token_name: str = "") -> web.Response:
    site = request.app[SITE]
    s = site.settings
    hour = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    async with accounts.pool(request).acquire() as conn:
        subs = await notify_q.subscriptions_of(conn, session.github_user_id)
        used = await notify_q.deliveries_this_hour(conn, session.github_user_id, hour)
        tokens = await notify_q.tokens_of(conn, session.github_user_id)
        releases = await notify_q.releases(conn)
    q = request.query
    return page(
        request, "subscriptions.html", status=status, subs=[(r, describe(r)) for r in subs], tokens=tokens,
        used=used,
        limits={"subscriptions": s.notify_max_subscriptions, "per_hour": s.notify_max_deliveries_per_hour,
                "tokens": s.max_api_tokens},
        enabled=bool(s.notify_secret_key), allow_http=s.notify_allow_http,
        form=form or prefill(q), refused=refused, created=created, new_token=token, token_refused=token_refused,
        token_name=token_name, next_hour=(hour + timedelta(hours=1)).strftime("%H:%M"),
        deleted=q.get("deleted") == "1", revoked=q.get("revoked") == "1", releases=releases[:RELEASES_OFFERED],
        loaders=sorted(core_subscriptions.LOADERS), version_types=VERSION_TYPES, formats=FORMATS,
        **sessions.context(request, session))


async def overview(request: web.Request) -> web.Response:
    session = await sessions.current(request)
    if session is None:
        return _sign_in(request)
    return await _overview(request, session)


async def create(request: web.Request) -> web.Response:
    session, form, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    values = prefill(form)
    try:
        answer = await core_subscriptions.make(request, _caller(session), body_of(values))
    except FormRefused as exc:
        return await _overview(request, session, status=exc.status, form=values, refused=exc.message)
    except ApiError as exc:
        if exc.status >= 500 and exc.code != "notifications_off":
            raise
        return await _overview(request, session, status=exc.status, form=values, refused=exc.description)
    return await _overview(request, session, status=201, created=answer)


async def detail(request: web.Request) -> web.Response:
    session = await sessions.current(request)
    if session is None:
        return _sign_in(request)
    try:
        n = int(request.query.get("page", "1"))
    except ValueError:
        n = 1
    n = min(max(n, 1), MAX_LOG_PAGE)
    async with accounts.pool(request).acquire() as conn:
        sub = await notify_q.get_subscription(conn, session.github_user_id, _id(request, "subscription_id"))
        if sub is None:
            return _not_found(request)
        total = await notify_q.count_deliveries(conn, sub["id"])
        found = await notify_q.deliveries_of(conn, sub["id"], DELIVERIES_PER_PAGE, (n - 1) * DELIVERIES_PER_PAGE)
        tried = await notify_q.attempts_for(conn, sub["id"], [d["id"] for d in found], ATTEMPTS_SHOWN)
        errors = await notify_q.last_errors(conn, sub["id"], LAST_ERRORS) if sub["state"] == "paused" else []
    by_delivery: dict = {}
    for a in tried:
        by_delivery.setdefault(a["delivery_id"], []).append(a)
    pages = min(max(1, -(-total // DELIVERIES_PER_PAGE)), MAX_LOG_PAGE)
    q = request.query
    return page(request, "subscription.html", sub=sub, about=describe(sub),
                deliveries=[(d, by_delivery.get(d["id"], [])) for d in found],
                total=total, page_n=n, pages=pages, errors=errors, resumed=q.get("resumed") == "1",
                redelivered=q.get("redelivered", "")[:36], **sessions.context(request, session))


async def delete(request: web.Request) -> web.Response:
    session, _, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    async with accounts.pool(request).acquire() as conn:
        if not await notify_q.delete_subscription(conn, session.github_user_id, _id(request, "subscription_id")):
            return _not_found(request)
    raise web.HTTPSeeOther("/dashboard/subscriptions?deleted=1")


async def resume(request: web.Request) -> web.Response:
    session, _, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    sub_id = _id(request, "subscription_id")
    async with accounts.pool(request).acquire() as conn:
        if not await notify_q.resume(conn, session.github_user_id, sub_id,
                                     give_up_s=request.app[SITE].settings.notify_give_up_s):
            return _not_found(request)
    raise web.HTTPSeeOther(f"/dashboard/subscriptions/{sub_id}?resumed=1")


async def redeliver(request: web.Request) -> web.Response:
    session, _, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    sub_id, delivery = _id(request, "subscription_id"), _id(request, "delivery_id")
    async with accounts.pool(request).acquire() as conn:
        if not await notify_q.redeliver(conn, session.github_user_id, sub_id, delivery,
                                        give_up_s=request.app[SITE].settings.notify_give_up_s):
            return _not_found(request)
    raise web.HTTPSeeOther(f"/dashboard/subscriptions/{sub_id}?redelivered={delivery}#delivery-{delivery}")


async def create_token(request: web.Request) -> web.Response:
    session, form, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    name = str(form.get("name", ""))
    try:
        if len(name) > FIELD_LIMITS["name"]:
            raise FormRefused(400, f"A token's name is at most {FIELD_LIMITS['name']} characters.")
        made = await accounts.make_token(request, _caller(session), name)
    except FormRefused as exc:
        return await _overview(request, session, status=exc.status, token_refused=exc.message,
                               token_name=name[:FIELD_LIMITS["name"]])
    except ApiError as exc:
        if exc.status >= 500:
            raise
        return await _overview(request, session, status=exc.status, token_refused=exc.description,
                               token_name=name[:FIELD_LIMITS["name"]])
    return await _overview(request, session, status=201, token=made)


async def revoke_token(request: web.Request) -> web.Response:
    session, _, refused = await _signed_in_post(request)
    if refused is not None:
        return refused
    async with accounts.pool(request).acquire() as conn:
        if not await notify_q.delete_token(conn, session.github_user_id, _id(request, "token_id")):
            return error_page(request, 404, "No such token", "You have no token at this address; it may be revoked.")
    raise web.HTTPSeeOther("/dashboard/subscriptions?revoked=1#tokens")


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/dashboard/subscriptions", overview, name="site-subscriptions")
    add_page(app, "POST", "/dashboard/subscriptions", create, name="site-subscription-create")
    add_page(app, "GET", "/dashboard/subscriptions/{subscription_id}", detail, name="site-subscription")
    add_page(app, "POST", "/dashboard/subscriptions/{subscription_id}/delete", delete, name="site-subscription-delete")
    add_page(app, "POST", "/dashboard/subscriptions/{subscription_id}/resume", resume, name="site-subscription-resume")
    add_page(app, "POST", "/dashboard/subscriptions/{subscription_id}/deliveries/{delivery_id}/redeliver", redeliver,
               name="site-subscription-redeliver")
    add_page(app, "POST", "/dashboard/tokens", create_token, name="site-token-create")
    add_page(app, "POST", "/dashboard/tokens/{token_id}/revoke", revoke_token, name="site-token-revoke")
