"""The operators' review queue: quarantined versions oldest first, approve or reject with a
note. Decisions go through ``indexium_db.review`` (the code ``indexium_ops quarantine``
uses), so the site records exactly what the CLI records, and publishes the same event."""

from __future__ import annotations

import asyncio
import uuid

from aiohttp import web
from nats import errors as nats_errors

from indexium_db.queries import ownership as ownership_q
from indexium_db.queries import site as site_q
from indexium_db import review as ops_review
from indexium_platform import logs

from ..core.state import API
from ..core import sessions
from .dashboard import describe_finding
from .render import cross_site, error_page, page
from ..core.site import SITE, add_page

log = logs.get(__name__)
NOTE_MAX = 1000  # quarantine_decisions.reason keeps this much
# A finding's severity (rule weight x location factor, docs/scan.md) in words, with the legend the
# page shows. The scan holds a file when one finding reaches INDEXIUM_SCAN_SUSPICIOUS_SCORE (6 by
# default): "high" is a finding that alone would; ProcessBuilder anywhere is 3, in an initialiser 9.
SEVERITIES = (("high", 6, "6 or more: enough on its own for the scan to hold a version (its default threshold)"),
              ("medium", 3, "3 to 5: worth a look, short of holding a version on its own"),
              ("low", 1, "1 or 2: recorded, usually harmless (a URL opened in an ordinary method)"))


def severity_word(score: int | None) -> str:
    for word, floor, _ in SEVERITIES:
        if (score or 0) >= floor:
            return word
    return "low"


async def _admin(request: web.Request):
    session = await sessions.current(request)
    if session is None or session.login.lower() not in request.app[SITE].admins:
        return session, error_page(request, 403, "Operators only",
                                   "The review queue is for Indexium's operators. "
                                   + ("You are signed in as " + session.login + ", who is not one of them."
                                      if session else "Sign in first if you are one."))
    return session, None


async def queue(request: web.Request) -> web.Response:
    session, refused = await _admin(request)
    if refused is not None:
        return refused
    async with request.app[SITE].pool.acquire() as conn:
        rows = await site_q.review_queue(conn)
        # Re-uploads and disputed mod ids (ownership): a re-upload can only be rejected.
        held = await ownership_q.reasons(conn, [r["id"] for r in rows])
    items = [{"row": r, "findings": [{**f, "text": describe_finding(f), "level": severity_word(f["severity"])}
                                     for f in r["findings"]],
              "ownership": [text for _, text in held.get(r["id"], [])],
              "reupload": any(kind == "reupload" for kind, _ in held.get(r["id"], []))} for r in rows]
    return page(request, "review.html", items=items, done=request.query.get("done"), severities=SEVERITIES,
                **sessions.context(request, session))


async def decide(request: web.Request) -> web.Response:
    if (refused := cross_site(request)) is not None:
        return refused
    session, refused = await _admin(request)
    if refused is not None:
        return refused
    form = await request.post()
    if not sessions.csrf_ok(session, form):
        return error_page(request, 403, "Form expired", "This form is out of date. Go back, reload and try again.")
    action = form.get("action")
    if action not in ops_review.ACTIONS:
        return error_page(request, 400, "No decision", "Choose approve or reject.")
    try:
        version_id = uuid.UUID(request.match_info["version_id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    note = str(form.get("note", "")).strip()[:NOTE_MAX]
    nc = request.app[API].bus.nc
    if nc is None or not nc.is_connected:  # decide only when the event can follow at once
        return error_page(request, 503, "Briefly unavailable", "The event bus is not reachable; please retry shortly.")
    async with request.app[SITE].pool.acquire() as conn:
        try:
            reviewed = await ops_review.decide(conn, version_id, action, session.login, note)
        except ops_review.NotReviewable as exc:
            return error_page(request, 409, "Already decided", f"Nothing to do: {exc}.")
    try:
        await ops_review.publish(nc.jetstream(), reviewed)
    except (nats_errors.Error, asyncio.TimeoutError) as exc:
        # The decision is committed; without the event, API caches drop the version by TTL.
        log.warning("review_publish_failed", error=type(exc).__name__)
    log.info("version_reviewed", version_id=str(version_id), decision=reviewed.decision)
    raise web.HTTPSeeOther(f"/review?done={reviewed.slug}+{reviewed.version_number}+{reviewed.decision}")


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/review", queue, name="site-review")
    add_page(app, "POST", r"/review/{version_id}", decide, name="site-review-decide")
