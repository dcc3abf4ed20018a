"""What the ownership rules hold, as the site shows it: the author's dashboard says why, and the
operators' review queue shows the reasons and offers no approval for a re-upload."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import aiohttp
import pytest
from aiohttp import CookieJar
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_db.queries import mods as mods_q, ownership as own_q, versions as versions_q
from indexium_devstack.fakegithub import FakeGitHub
from indexium_platform.settings import load

T0 = datetime(2025, 3, 1, tzinfo=UTC)


@pytest.fixture
async def gh():
    async with FakeGitHub() as gh:
        alice = gh.state.user("alice")
        gh.state.user("root")
        gh.add_installation([gh.add_repo("alice", "lanterns")], account=alice)
        yield gh


@pytest.fixture
async def site(gh, database_url, nats_url):
    values = {"DATABASE_URL": database_url, "NATS_URL": nats_url, "INDEXIUM_GITHUB_URL": gh.base_url,
              "INDEXIUM_GITHUB_API_URL": gh.api_url, "INDEXIUM_GITHUB_CLIENT_ID": gh.oauth.client_id,
              "INDEXIUM_GITHUB_CLIENT_SECRET": gh.oauth.client_secret,
              "INDEXIUM_SESSION_SECRET": secrets.token_urlsafe(40), "INDEXIUM_ADMIN_LOGINS": "root"}
    client = TestClient(TestServer(create_app(load(Settings, values))), cookie_jar=CookieJar(unsafe=True))
    await client.start_server()
    yield client
    await client.close()


async def sign_in(client: TestClient, gh, login: str) -> None:
    gh.oauth.sign_in_as(login)
    start = await client.get("/auth/github/login", allow_redirects=False)
    async with aiohttp.ClientSession() as s, s.get(start.headers["Location"], allow_redirects=False) as r:
        back = urlsplit(r.headers["Location"])
    assert (await client.get(f"{back.path}?{back.query}", allow_redirects=False)).status == 303


async def project(db, repo_id: int, owner_id: int, owner: str, name: str):
    await mods_q.upsert_author(db, owner_id, owner)
    card = mods_q.Card(name="Lanterns", summary="", description="", authors=[], licenses=[], links={},
                       environment="both")
    return (await mods_q.create(db, github_repo_id=repo_id, repo_full_name=f"{owner}/{name}", owner_id=owner_id,
                                owner_login=owner, manifest_id="lanterns", default_branch="main", categories=[],
                                card=card))["id"]


async def release(db, mod_id, number: str, content: bytes, at: datetime, asset_id: int):
    vid = await versions_q.upsert_version(
        db, mod_id=mod_id, version_number=number, github_release_id=asset_id, tag_name=number, name=number,
        changelog="", version_type="release", published_at=at, status="public", game_versions=["1.20.1"],
        loaders=["fabric"])
    await versions_q.replace_files(db, vid, [versions_q.FileRow(
        github_asset_id=asset_id, filename=f"lanterns-{number}.jar", url="https://x/l.jar", size=len(content),
        content_type=None, github_digest=f"sha256:{hashlib.sha256(content).hexdigest()}", sidecar_url=None,
        loaders=["fabric"], game_versions=["1.20.1"], manifests=[{"loader": "fabric", "mod_id": "lanterns"}],
        is_primary=True, download_count=0, asset_created_at=at)])
    await own_q.claim_mod_ids(db, mod_id, [own_q.Declared("fabric", "lanterns", at)])
    await own_q.reevaluate(db, [vid], affected=True)
    return vid


async def test_the_author_sees_why_and_the_operator_cannot_approve_a_reupload(site, gh, db):
    original = await project(db, 900, 9000, "fieldnotes", "lanterns")
    await release(db, original, "1.0", b"original bytes", T0, 1)
    alices = await project(db, gh.repo("alice/lanterns").id, gh.state.user("alice").id, "alice", "lanterns")
    claim = await release(db, alices, "2.0", b"alice's own bytes", T0 + timedelta(days=1), 2)
    copy = await release(db, alices, "1.0-copy", b"original bytes", T0 + timedelta(days=2), 3)

    await sign_in(site, gh, "alice")
    page = await (await site.get("/dashboard")).text()
    assert "Held for review: claims the mod id lanterns of fieldnotes/lanterns." in page
    assert "re-upload: lanterns-1.0-copy.jar has the bytes first published by fieldnotes/lanterns" in page

    await sign_in(site, gh, "root")
    page = await (await site.get("/review")).text()
    claim_form, copy_form = (page.split(f'action="/review/{v}"', 1)[1].split("</form>", 1)[0] for v in (claim, copy))
    assert 'value="approve"' in claim_form and 'value="reject"' in claim_form
    assert 'value="approve"' not in copy_form and 'value="reject"' in copy_form
    assert "A re-upload of another project's bytes can only be rejected" in page
    token = page.split('name="csrf_token" value="', 1)[1].split('"', 1)[0]
    refused = await site.post(f"/review/{copy}", data={"csrf_token": token, "action": "approve"},
                              allow_redirects=False)
    assert refused.status == 409 and "can only be rejected" in await refused.text()
    assert await db.fetchval("SELECT status FROM mod_versions WHERE id = $1", copy) == "quarantined"


async def test_the_review_queue_says_severity_in_words_and_wraps_class_names_at_dots(site, gh, db):
    mod = await project(db, 901, 9001, "fieldnotes", "lanterns")
    vid = await release(db, mod, "1.0", b"held bytes", T0, 11)
    await db.execute("UPDATE mod_versions SET status = 'quarantined' WHERE id = $1", vid)
    file_id = await db.fetchval("SELECT id FROM version_files WHERE version_id = $1", vid)
    for rule, severity, cls in (("process_builder", 9, "com.example.lumen.internal.BootstrapHelper"),
                                ("dynamic_class_load", 4, "com/example/lumen/Loader$Inner"),
                                ("network", 1, "com.example.lumen.UpdateCheck")):
        await db.execute(
            """INSERT INTO scan_findings (file_id, version_id, rule, severity, location, entry_path, class_name,
                                          method, detail)
               VALUES ($1, $2, $3, $4, 'static_init', 'META-INF/jars/helper.jar!/x.class', $5, 'run()V', 'd')""",
            file_id, vid, rule, severity, cls)
    await sign_in(site, gh, "root")
    page = await (await site.get("/review")).text()
    legend = page.split('<dl class="legend"', 1)[1].split("</dl>", 1)[0]
    assert [w for w in ("high", "medium", "low") if f'<span class="sev sev-{w}">{w}</span>' in legend] == [
        "high", "medium", "low"]
    assert "6 or more" in legend
    rows = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert '<span class="sev sev-high">high</span> <span class="muted score">(9)</span>' in rows
    assert '<span class="sev sev-medium">medium</span>' in rows and '<span class="sev sev-low">low</span>' in rows
    assert '<code class="name">com.<wbr>example.<wbr>lumen.<wbr>internal.<wbr>BootstrapHelper</code>' in rows
    assert "com/<wbr>example/<wbr>lumen/<wbr>Loader$<wbr>Inner" in rows
    assert "META-INF/<wbr>jars/<wbr>helper.<wbr>jar!<wbr>/<wbr>x.<wbr>class" in rows
    css = await (await site.get("/static/site/site.css")).text()
    assert "td code.name { word-break: normal;" in css  # only at the <wbr>s, never mid-word
