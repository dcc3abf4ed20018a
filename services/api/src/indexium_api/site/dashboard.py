"""The author's dashboard: every repository GitHub says the signed-in user can reach through
the App's installations, whether each is a mod here and why not, and each version's state.

The list of repositories is what GitHub answered at sign-in (kept in the session, no token
kept); everything else is read from our tables at every load. "Check again" publishes a
``CatchUpRequested`` on the INGEST stream for the GitHub role to act on (and tells the author
when no GitHub role reads that queue now): the site never writes the GitHub role's tables itself.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime

from aiohttp import web
from nats import errors as nats_errors

from indexium_contracts import ingest, registry
from indexium_db.queries import notify as notify_q, site as site_q, skips as skips_q
from indexium_db.queries.ownership import ACTOR as OWNERSHIP_ACTOR
from indexium_platform import logs, natsutil

from ..core.state import API
from ..core import sessions
from .render import cross_site, error_page, page
from ..core.site import SITE, add_page
from .subscriptions import describe

log = logs.get(__name__)
CHECKS_PER_WINDOW = 5  # "Check again" per user: each may cost the App a few GitHub requests
CHECK_WINDOW_S = 600.0
# Dead letters listed per repository (the newest; the rest are counted): each is a release
# the author must fix, and a repository whose every release fails needs the first few only.
DEAD_LETTERS_SHOWN = 10

# A scan rule, said the way a mod author would understand it.
RULE_TEXT = {
    "runtime_exec": "starts another program on the player's computer (Runtime.exec)",
    "process_builder": "starts another program on the player's computer (ProcessBuilder)",
    "url_classloader": "loads code from a web address at run time (URLClassLoader)",
    "dynamic_class_load": "loads classes by name at run time (Class.forName / loadClass)",
    "define_class": "turns bytes into new classes at run time (defineClass)",
    "reflective_invoke": "creates objects and calls methods by reflection, which hides what is called",
    "network": "opens a network connection",
    "fractureiser": "matches the pattern of the fractureiser malware's first stage",
    "zip_structure": "is a jar whose structure is broken or deliberately confusing",
    "malformed_class": "contains a class file the scanner could not read",
    "size_mismatch": "is a file whose size differs from what GitHub reported",
    "digest_mismatch": "is a file whose SHA-256 differs from GitHub's digest",
    "sidecar_mismatch": "is a file whose SHA-256 differs from the .sha256 file published beside it",
}
LOCATION_TEXT = {
    "static_init": "in a static initialiser (runs as soon as the class loads)",
    "mod_initializer": "in the mod's initialiser (runs when the game starts)",
    "called_from_init": "in code the initialiser calls",
    "method": "in a method",
    "archive": "in the jar's structure",
    "file": "in the file",
}


def describe_finding(f: dict) -> str:
    what = RULE_TEXT.get(f.get("rule") or "", (f.get("rule") or "a pattern").replace("_", " "))
    where = LOCATION_TEXT.get(f.get("location") or "", "")
    return f"This version {what}{(' ' + where) if where else ''}."


def repository_state(r: dict, status) -> tuple[str, str]:
    """(short state, what it means) for one repository the user can reach."""
    if status is not None and status["mod_id"] is not None:
        if status["hidden"]:
            return "hidden", f"A mod here, hidden: {(status['hidden_reason'] or 'hidden').removeprefix('github: ')}."
        if status["listed"]:
            return "listed", "A mod on Indexium."
        return "unlisted", "A mod on Indexium with no public version yet."
    if r.get("private"):
        return "private", "Private repository: Indexium lists only public repositories."
    if status is None or status["state"] is None:
        return "unknown", "Indexium has not looked at this repository yet. Check again to have it read now."
    if status["deleted"]:
        return "removed", "The repository was deleted on GitHub."
    if status["removed"]:
        return "removed", "The repository was removed from the App's installation."
    if status["private"]:
        return "private", "Private repository: Indexium lists only public repositories."
    if status["state"] == "skipped":
        return "not-a-mod", f"Not a mod: {status['skip_reason'] or 'no mod manifest found on the default branch'}."
    if status["state"] == "pending":
        return "pending", "Waiting to be checked for a mod manifest."
    return "registered", "Registered as a mod; no release has been indexed yet."


def version_state(v) -> tuple[str, str, str]:
    """(css class, label, explanation) of one version."""
    if v["hidden"]:
        return "hidden", "Hidden", (v["hidden_reason"] or "hidden").removeprefix("github: ")
    status = v["status"]
    if status == "public":
        return "public", "Public", "Listed in search and served to launchers."
    if status == "pending_scan":
        return "waiting", "Waiting for the scan", "Every file is scanned before a version is shown; this takes minutes."
    if status == "quarantined":
        d = v["decision"] or {}
        if d.get("actor") == OWNERSHIP_ACTOR and d.get("action") == "quarantined":
            # A mod id another owner's project holds, or another project's bytes (ownership rules).
            return "quarantined", "Held for review", (f"Held for review: {d.get('reason') or 'ownership'}. "
                                                      "It stays hidden until an operator decides.")
        return "quarantined", "Held for review", ("The scan found something that needs a person to look at it. "
                                                  "It stays hidden until an operator approves it.")
    if status == "rejected":
        d = v["decision"] or {}
        return "rejected", "Rejected", f"An operator rejected it{': ' + d['reason'] if d.get('reason') else ''}."
    return status, status, ""


def _dead_letters_by_repo(rows) -> tuple[dict[int, list[dict]], dict[int, int]]:
    """Per repository: the dead letters shown (newest first), and how many more are open."""
    shown: dict[int, list[dict]] = {}
    more: dict[int, int] = {}
    for r in rows:
        rid = r["github_repo_id"]
        shown.setdefault(rid, []).append({"tag": r["tag_name"], "category": r["category"], "error": r["error"],
                                          "at": r["created_at"]})
        more[rid] = r["open_total"] - len(shown[rid])
    return shown, more


async def _load(conn, repositories: list[dict]):
    ids = [r["id"] for r in repositories]
    # A repository may publish several projects (docs/indexer.md, "One repository, several
    # projects"): one row per project, the repository's own columns repeated; the listed first.
    statuses: dict[int, list] = {}
    for s in await site_q.repositories_status(conn, ids):
        statuses.setdefault(s["github_repo_id"], []).append(s)
    for rows in statuses.values():
        rows.sort(key=lambda s: (not s["listed"], bool(s["hidden"]), s["slug"] or ""))
    mod_ids = [s["mod_id"] for rows in statuses.values() for s in rows if s["mod_id"] is not None]
    versions = await site_q.versions_for_author(conn, mod_ids) if mod_ids else []
    dead = _dead_letters_by_repo(await site_q.open_dead_letters(conn, ids, DEAD_LETTERS_SHOWN))
    skips: dict[int, list] = {}
    for row in await skips_q.left_out(conn, github_repo_ids=ids, include_non_mod_files=False, limit=500):
        skips.setdefault(row["github_repo_id"], []).append(row)
    return statuses, versions, dead, skips


async def dashboard(request: web.Request) -> web.Response:
    site = request.app[SITE]
    session = await sessions.current(request)
    ctx = sessions.context(request, session)
    if session is None:
        return page(request, "signin.html", configured=site.settings.sign_in_configured, **ctx)
    async with site.pool.acquire() as conn:
        statuses, versions, dead, skips = await _load(conn, session.repositories)
        # The subscriptions' section: how many, and each paused one (subscriptions.py has the rest).
        subs = await notify_q.subscriptions_of(conn, session.github_user_id)
    by_mod: dict = {}
    for v in versions:
        css, label, text = version_state(v)
        by_mod.setdefault(v["mod_id"], []).append({
            "row": v, "css": css, "label": label, "text": text,
            "findings": [{**f, "text": describe_finding(f)} for f in v["findings"]],
            "failed": [f for f in v["files"] if f.get("scan_status") == "failed"],
        })
    repos = []
    for r in sorted(session.repositories, key=lambda r: r["full_name"].lower()):
        rows = statuses.get(r["id"]) or [None]
        state, text = repository_state(r, rows[0])  # the repository's state, told by its first-listed project
        projects = [{"mod": s, "versions": by_mod.get(s["mod_id"], [])} for s in rows if s and s["mod_id"]]
        repos.append({"repo": r, "state": state, "text": text, "projects": projects,
                      "dead": dead[0].get(r["id"], []), "dead_more": dead[1].get(r["id"], 0),
                      "skips": skips.get(r["id"], [])})
    public = site.settings.public_url.rstrip("/")
    paused = [(r, describe(r)) for r in subs if r["state"] == "paused"]
    return page(request, "dashboard.html", repos=repos, install_url=site.install_url, public_url=public,
                subscriptions=len(subs), paused=paused,
                checked=request.query.get("checked"), queued=request.query.get("queued"),
                limited=request.query.get("limited"), **ctx)


async def check_again(request: web.Request) -> web.Response:
    if (refused := cross_site(request)) is not None:
        return refused
    site = request.app[SITE]
    session = await sessions.current(request)
    form = await request.post()
    if session is None:
        return error_page(request, 403, "Not signed in", "Sign in to ask for a repository to be checked again.")
    if not sessions.csrf_ok(session, form):
        return error_page(request, 403, "Form expired", "This form is out of date. Go back, reload and try again.")
    try:
        repo_id = int(form.get("repository_id", ""))
    except ValueError:
        return error_page(request, 400, "No repository", "The form did not say which repository to check.")
    repo = next((r for r in session.repositories if r["id"] == repo_id), None)
    if repo is None:  # only what GitHub said this user can reach
        return error_page(request, 403, "Not your repository",
                          "GitHub did not list this repository among those you can reach through the App.")
    nc = request.app[API].bus.nc
    if nc is None or not nc.is_connected:
        return error_page(request, 503, "Briefly unavailable", "The queue is not reachable right now; please retry shortly.")
    async with site.pool.acquire() as conn:
        allowed = await site_q.take_action(conn, session.github_user_id, "check_again", repo_id,
                                           CHECKS_PER_WINDOW, CHECK_WINDOW_S)
    if not allowed:
        raise web.HTTPSeeOther(f"/dashboard?limited={repo_id}#repo-{repo_id}")
    event = ingest.CatchUpRequested(
        delivery_id=f"catch-up:{repo_id}:{secrets.token_hex(8)}",
        received_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        github_repo_id=repo_id, installation_id=int(repo["installation_id"]), requested_by=session.login)
    try:
        await nc.jetstream().publish(ingest.CATCH_UP, ingest.encoder.encode(event),
                                     headers={"Nats-Msg-Id": event.delivery_id})
    except (nats_errors.Error, asyncio.TimeoutError) as exc:
        log.warning("catch_up_publish_failed", error=type(exc).__name__)
        return error_page(request, 503, "Briefly unavailable", "The queue did not take the request; please retry shortly.")
    # Said to the author when no GitHub App role reads the queue now: the request waits there
    # (nothing is lost) until one runs. JetStream's view of the durable consumer is the signal.
    consumer = registry.consumer_of(ingest.CATCH_UP)  # the GitHub role's
    reader = await natsutil.consumer_has_reader(nc.jetstream(), consumer.stream, consumer.durable)
    log.info("catch_up_requested", github_repo_id=repo_id, reader=reader)
    outcome = "queued" if reader is False else "checked"
    raise web.HTTPSeeOther(f"/dashboard?{outcome}={repo_id}#repo-{repo_id}")


def setup(app: web.Application) -> None:
    add_page(app, "GET", "/dashboard", dashboard, name="site-dashboard")
    add_page(app, "POST", "/dashboard/check", check_again, name="site-check-again")
