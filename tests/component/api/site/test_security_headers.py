"""The site's second wall (site/security.py, site/cspreport.py): the Content-Security-Policy and
the other headers on every page, nothing inline for it to refuse, the Sec-Fetch-Site check on
operator actions, and the bounded CSP report route with its metric."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html.parser import HTMLParser

from aiohttp import CookieJar
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_api.site import cspreport
from indexium_api.core.state import API
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_platform.settings import load

from .test_auth import SECRET, _csrf, _sign_in, gh, site  # noqa: F401 - fixtures and helpers

FABRIC_120 = ["fabric"], ["1.20.1"]


def csp_of(resp) -> dict[str, str]:
    header = resp.headers["Content-Security-Policy"]
    return {d.split(" ", 1)[0]: d.split(" ", 1)[1] if " " in d else "" for d in (p.strip() for p in header.split(";"))}


def assert_page_headers(resp, *, private: bool):
    assert resp.headers["Content-Type"] == "text/html; charset=utf-8"
    assert resp.headers["X-Content-Type-Options"] == "nosniff" and resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["Referrer-Policy"] == ("same-origin" if private else "strict-origin-when-cross-origin")
    csp = csp_of(resp)
    assert "unsafe-inline" not in resp.headers["Content-Security-Policy"]
    assert "unsafe-eval" not in resp.headers["Content-Security-Policy"]
    assert csp["default-src"] == "'none'" and csp["frame-ancestors"] == "'none'" and csp["object-src"] == "'none'"
    assert csp["base-uri"] == "'none'" and csp["form-action"] == "'self'" and csp["style-src"] == "'self'"
    assert csp["img-src"] == "'self' https://avatars.githubusercontent.com"
    assert csp["report-uri"] == "/csp-report"
    if private:
        nonce = re.fullmatch(r"'nonce-([A-Za-z0-9_-]{24})' 'strict-dynamic'", csp["script-src"])
        assert nonce, csp["script-src"]
        return nonce[1]
    assert csp["script-src"] == "'self'"
    return None


class _Inline(HTMLParser):
    """What a CSP without 'unsafe-inline' would refuse: inline scripts, handlers, style attributes."""

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.nonces: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "script":
            self.nonces.append(attrs.get("nonce"))
            if not attrs.get("src"):
                self.found.append("inline script")
        if tag == "style":
            self.found.append("style element")
        for name, value in attrs.items():
            if name.startswith("on") or name == "style" or (value or "").strip().lower().startswith("javascript:"):
                self.found.append(f"{tag} {name}")


def inline_of(html: str) -> _Inline:
    parser = _Inline()
    parser.feed(html)
    return parser


async def _listed(db, manifest_id="lumen", *, status="public", repo=1):
    await mods_q.upsert_author(db, 100 + repo, "alice")
    card = mods_q.Card(name="Lumen", summary="Lights", description="Lights.", authors=["alice"], licenses=["MIT"],
                       links={"homepage": "https://lumen.example"}, environment="both")
    mod = await mods_q.create(db, github_repo_id=repo, repo_full_name=f"alice/{manifest_id}", owner_id=100 + repo,
                              owner_login="alice", manifest_id=manifest_id, default_branch="main",
                              categories=["decoration", "lighting"], card=card)
    vid = await versions_q.upsert_version(
        db, mod_id=mod["id"], version_number="1.0.0", github_release_id=repo, tag_name="1.0.0", name="1.0.0",
        changelog="", version_type="release", published_at=datetime.now(UTC), status=status,
        game_versions=["1.20.1"], loaders=["fabric"])
    await versions_q.replace_files(db, vid, [versions_q.FileRow(
        github_asset_id=repo, filename="lumen.jar", url="https://github.com/alice/lumen/releases/download/1/l.jar",
        size=1, content_type=None, github_digest=None, sidecar_url=None, loaders=["fabric"], game_versions=["1.20.1"],
        manifests=[], is_primary=True, download_count=1)])
    await mods_q.refresh_rollup(db, mod["id"])
    return vid


async def test_public_pages_send_the_policy_and_hold_nothing_inline(site, db):
    await _listed(db)
    client = await site()
    for path in ("/", "/?q=lumen", "/upgrade", "/pack", "/pack?loader=fabric&game_version=1.20.1&q=lumen&mod=lumen",
                 "/mods/lumen", "/mods/lumen?range=90d", "/mods/nope"):
        for _ in range(2):  # computed, then from the cache
            resp = await client.get(path)
            assert resp.status == (404 if path == "/mods/nope" else 200)
            assert_page_headers(resp, private=False)
            parsed = inline_of(await resp.text())
            assert parsed.found == [] and parsed.nonces == [None]  # one script, our file, no nonce
    etag = resp.headers.get("ETag") or (await client.get("/mods/lumen")).headers["ETag"]
    again = await client.get("/mods/lumen", headers={"If-None-Match": etag})
    assert again.status == 304 and "'unsafe-inline'" not in again.headers["Content-Security-Policy"]


async def test_private_pages_carry_a_fresh_nonce_on_their_one_script(site, db):
    client = await site(INDEXIUM_ADMIN_LOGINS="alice")
    await _sign_in(client)
    await _listed(db, status="quarantined")
    seen = set()
    for path, status in (("/dashboard", 200), ("/review", 200), ("/auth/github/callback?state=x&code=y", 400),
                         ("/no/such/page", 404), ("/dashboard/subscriptions", 200)):
        resp = await client.get(path, headers={"Accept": "text/html"})
        assert resp.status == status, path
        nonce = assert_page_headers(resp, private=True)
        parsed = inline_of(await resp.text())
        assert parsed.found == [] and parsed.nonces == [nonce], path
        seen.add(nonce)
    assert len(seen) == 5  # one per response


async def test_json_icons_and_static_files_are_never_sniffed(site, db):
    await _listed(db)
    client = await site()
    for path in ("/api/v1/mods/lumen", "/v2/project/lumen", "/static/site/site.js", "/static/site/site.css",
                 "/api/v1/mods/nope", "/healthz"):
        resp = await client.get(path)
        assert resp.headers["X-Content-Type-Options"] == "nosniff", path


async def test_operator_actions_refuse_requests_another_site_made(site, db):
    client = await site(INDEXIUM_ADMIN_LOGINS="alice")
    await _sign_in(client)
    vid = await _listed(db, status="quarantined")
    token = await _csrf(client)
    form = {"csrf_token": token, "action": "approve", "note": "from elsewhere"}
    for value in ("cross-site", "same-site", "none"):
        headers = {"Sec-Fetch-Site": value}
        r = await client.post(f"/review/{vid}", data=form, headers=headers, allow_redirects=False)
        assert r.status == 403 and "own pages" in await r.text()
        assert_page_headers(r, private=True)
        r = await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": "1"}, headers=headers,
                              allow_redirects=False)
        assert r.status == 403
        r = await client.post("/auth/sign-out", data={"csrf_token": token}, headers=headers, allow_redirects=False)
        assert r.status == 403
    assert await db.fetchval("SELECT status FROM mod_versions WHERE id = $1", vid) == "quarantined"
    assert await db.fetchval("SELECT count(*) FROM site_sessions") == 1  # still signed in
    # The operator's own form (same-origin, and a client sending no such header) still works with its token.
    r = await client.post(f"/review/{vid}", data={**form, "csrf_token": "forged"},
                          headers={"Sec-Fetch-Site": "same-origin"}, allow_redirects=False)
    assert r.status == 403  # CSRF stays
    r = await client.post(f"/review/{vid}", data=form, headers={"Sec-Fetch-Site": "same-origin"},
                          allow_redirects=False)
    assert r.status == 303
    assert await db.fetchval("SELECT status FROM mod_versions WHERE id = $1", vid) == "public"


def _metric(text: str, name: str, **labels) -> float:
    want = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in text.splitlines():
        if line.startswith(f"{name}{{{want}}} "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_csp_reports_are_counted_by_directive_and_bounded(site):
    client = await site()

    async def metrics():
        return await (await client.get("/metrics")).text()

    legacy = {"csp-report": {"document-uri": "http://x/mods/lumen?q=<b>", "violated-directive": "script-src-elem",
                             "effective-directive": "script-src-elem", "blocked-uri": "inline",
                             "original-policy": "default-src 'none'"}}
    r = await client.post("/csp-report", data=json.dumps(legacy), headers={"Content-Type": "application/csp-report"})
    assert r.status == 204
    batch = [{"type": "csp-violation", "url": "http://x/review", "body": {"effectiveDirective": d, "blockedURL": b}}
             for d, b in (("script-src-attr", "inline"), ("img-src", "https://evil.example/x.png"),
                          ("<script>alert(1)</script>", "javascript:alert(1)"))]
    batch.append({"type": "deprecation", "body": {"id": "x"}})
    r = await client.post("/csp-report", data=json.dumps(batch), headers={"Content-Type": "application/reports+json"})
    assert r.status == 204
    text = await metrics()
    name = "indexium_api_csp_violations_total"
    assert _metric(text, name, directive="script-src-elem") == 1 and _metric(text, name, directive="script-src-attr") == 1
    assert _metric(text, name, directive="img-src") == 1 and _metric(text, name, directive="other") == 1
    assert "alert" not in text  # a label is never the report's text

    for data, ctype, status in (("not json", "application/csp-report", 400), ("{}", "application/json", 400),
                                ("x" * (cspreport.BODY_MAX + 1), "application/csp-report", 413),
                                (json.dumps(legacy), "text/plain", 415)):
        r = await client.post("/csp-report", data=data, headers={"Content-Type": ctype})
        assert r.status == status, (ctype, status)
        assert r.headers["Content-Type"].startswith("application/json")  # the API's error envelope
    text = await metrics()
    assert _metric(text, "indexium_api_csp_reports_total", outcome="counted") == 2
    assert _metric(text, "indexium_api_csp_reports_total", outcome="malformed") == 3
    assert _metric(text, "indexium_api_csp_reports_total", outcome="too_large") == 1

    # Anyone can post: past the replica's bucket a report is refused unread and only counted.
    bucket = client.app[cspreport.BUCKET]
    bucket.tokens, bucket.rate = 0.0, 0.0
    for _ in range(50):
        r = await client.post("/csp-report", data=json.dumps(legacy), headers={"Content-Type": "application/csp-report"})
        assert r.status == 429 and r.headers["Retry-After"] == "1"
    text = await metrics()
    assert _metric(text, "indexium_api_csp_reports_total", outcome="limited") == 50
    assert _metric(text, name, directive="script-src-elem") == 1


def test_the_bucket_refills_at_its_rate():
    now = [0.0]
    bucket = cspreport.Bucket(2.0, 3.0, clock=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] = 1.0
    assert [bucket.take() for _ in range(3)] == [True, True, False]


def test_a_signed_in_users_avatar_passes_the_url_policy():
    from structlog.testing import capture_logs  # noqa: PLC0415

    from indexium_api.core import sessions  # noqa: PLC0415

    with capture_logs() as logged:
        assert sessions._avatar({"avatar_url": "https://avatars.githubusercontent.com/u/1?v=4"}) == (
            "https://avatars.githubusercontent.com/u/1?v=4")
        assert sessions._avatar({"avatar_url": "javascript:alert(document.cookie)"}) is None
        assert sessions._avatar({}) is None
    assert [(e["event"], e["reason"]) for e in logged] == [("url_refused", "not_http")]
