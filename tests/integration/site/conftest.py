"""Browser tests: Debian's Chromium (/usr/bin/chromium) driven by Playwright, against the API
app (site included) serving on a real port over real PostgreSQL and NATS JetStream, with
FakeGitHub (a real HTTP server on loopback) playing github.com for OAuth and downloads.

Catalogue rows are written through the indexer's own query functions (roll-ups and triggers
run); a quarantined version gets the scan findings the scan stage would have written.
Screenshots go to the test's tmp folder and are copied to /tmp/site-shots/.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_api.core.state import API
from indexium_db.pool import connect
from indexium_contracts import github as github_contract, ingest
from indexium_db.queries import deadletters as deadletters_q, github as github_q, mods as mods_q
from indexium_db.queries import skips as skips_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.procs import BY_NAME, ServiceProcess
from indexium_platform import natsutil
from indexium_platform.settings import load

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SHOTS = Path("/tmp/site-shots")
SESSION_SECRET = secrets.token_urlsafe(40)
AUTHOR, ADMIN, STRANGER = "demo-author", "op-admin", "stranger"
WEBHOOK_SECRET = "site-tests-webhook-secret"  # ingest's, for the tests that send webhooks (pipeline)


@dataclass
class World:
    base: str
    gh: FakeGitHub
    db_url: str
    app: web.Application
    slugs: dict = field(default_factory=dict)
    download_urls: dict = field(default_factory=dict)
    quarantined_id: object = None


async def _add_mod(conn, gh: FakeGitHub, repo, manifest_id: str, name: str, summary: str, releases, world: World,
                   *, repo_state="registered"):
    """A fake GitHub repository with releases, and the rows the indexer would have written."""
    owner = repo.owner
    await mods_q.upsert_author(conn, owner.id, owner.login)
    card = mods_q.Card(name=name, summary=summary, description=f"{summary}.\nMade for the browser tests.",
                     authors=[owner.login], licenses=["MIT"], links={"homepage": "https://example.org/" + manifest_id},
                     environment="both")
    mod = await mods_q.create(conn, github_repo_id=repo.id, repo_full_name=repo.full_name, owner_id=owner.id,
                            owner_login=owner.login, manifest_id=manifest_id, default_branch="main",
                            categories=["decoration"], card=card)
    await github_q.upsert_installation(conn, gh.state.installation_for_repo(repo).id)
    await conn.execute(
        """INSERT INTO github_repositories (github_repo_id, installation_id, full_name, state)
           VALUES ($1, $2, $3, $4)""", repo.id, gh.state.installation_for_repo(repo).id, repo.full_name, repo_state)
    world.slugs[manifest_id] = mod["slug"]
    for i, (tag, status) in enumerate(releases):
        rel = gh.add_release(repo, tag, [(f"{manifest_id}-{tag}.jar", b"PK\x05\x06" + bytes(18))])
        url = gh.release_payload(rel)["release"]["assets"][0]["browser_download_url"]
        world.download_urls[(manifest_id, tag)] = url
        vid = await versions_q.upsert_version(
            conn, mod_id=mod["id"], version_number=tag, github_release_id=rel.id, tag_name=tag, name=f"{name} {tag}",
            changelog="", version_type="release", published_at=datetime.now(UTC) - timedelta(days=30 - i), status=status,
            game_versions=["1.20.1"], loaders=["fabric"])
        file_ids = await versions_q.replace_files(conn, vid, [versions_q.FileRow(
            github_asset_id=rel.assets[0].id, filename=f"{manifest_id}-{tag}.jar", url=url, size=22,
            content_type="application/java-archive", github_digest=None, sidecar_url=None, loaders=["fabric"],
            game_versions=["1.20.1"], manifests=[], is_primary=True, download_count=3)])
        await conn.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                           file_ids[0], secrets.token_hex(20), secrets.token_hex(32), secrets.token_hex(64))
        if status == "quarantined":
            await conn.execute(
                """UPDATE version_files SET scan_status = 'suspicious' WHERE id = $1""", file_ids[0])
            await conn.execute(
                """INSERT INTO scan_findings (file_id, version_id, rule, severity, location, entry_path,
                                              class_name, method, detail)
                   VALUES ($1, $2, 'process_builder', 9, 'static_init', 'META-INF/jars/helper.jar!/com/x/Boot.class',
                           'com/x/Boot', '<clinit>()V', 'new ProcessBuilder(...).start()')""", file_ids[0], vid)
            await conn.execute(
                """INSERT INTO quarantine_decisions (version_id, action, actor, reason, file_sha256)
                   VALUES ($1, 'quarantined', 'scan', 'process_builder in static_init', '{}')""", vid)
            world.quarantined_id = vid
        await mods_q.refresh_rollup(conn, mod["id"])
    return mod


@pytest.fixture
async def world(database_url, nats_url, tmp_path):
    gh = FakeGitHub()
    await gh.start()
    author = gh.state.user(AUTHOR)
    lumen = gh.add_repo(AUTHOR, "lumen-lanterns", description="Lanterns")
    almanac = gh.add_repo(AUTHOR, "harvest-almanac", description="Crops")
    notes = gh.add_repo(AUTHOR, "modding-notes", description="Not a mod")
    gh.add_installation([lumen, almanac, notes], account=author)
    secret_repo = gh.add_repo(STRANGER, "secret-tools")
    gh.add_installation([secret_repo], account=gh.state.user(STRANGER))
    gh.oauth.sign_in_as(AUTHOR)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    settings = load(Settings, {
        "DATABASE_URL": database_url, "NATS_URL": nats_url, "INDEXIUM_PUBLIC_URL": base,
        "INDEXIUM_GITHUB_URL": gh.base_url, "INDEXIUM_GITHUB_API_URL": gh.api_url,
        "INDEXIUM_GITHUB_CLIENT_ID": gh.oauth.client_id, "INDEXIUM_GITHUB_CLIENT_SECRET": gh.oauth.client_secret,
        "INDEXIUM_GITHUB_APP_SLUG": "indexium-test", "INDEXIUM_SESSION_SECRET": SESSION_SECRET,
        "INDEXIUM_ADMIN_LOGINS": ADMIN, "INDEXIUM_API_RATE_LIMIT_PER_MINUTE": "0",
    })
    app = create_app(settings)
    app.router.add_get(POLICY_MISSED_PATH, policy_missed)  # test-only (below): never in the product
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    await asyncio.wait_for(app[API].bus.subscribed.wait(), 30)
    w = World(base=base, gh=gh, db_url=database_url, app=app)
    conn = await connect(database_url)
    try:
        await _add_mod(conn, gh, lumen, "lumenlanterns", "Lumen Lanterns", "Colourful hanging lanterns",
                       [("1.2.0", "public"), ("1.3.0", "quarantined")], w)
        await _add_mod(conn, gh, almanac, "harvestalmanac", "Harvest Almanac", "Seasonal crops and weather",
                       [("0.9.0", "quarantined")], w)
        await _add_mod(conn, gh, secret_repo, "secrettools", "Secret Tools", "Belongs to someone else",
                       [("1.0.0", "public")], w)
        # A release the indexer gave up on, as its consumer records it (the message's own bytes).
        broken = ingest.ReleaseReceived(delivery_id="d-1", received_at="2026-11-30T10:00:00Z",
                                        webhook=github_contract.ReleaseWebhook(
            action="published", release=github_contract.Release(id=999_001, tag_name="1.5.0"),
            repository=github_contract.Repository(id=lumen.id, name=lumen.name, full_name=lumen.full_name,
                                                  owner=github_contract.Account(id=author.id, login=AUTHOR))))
        await deadletters_q.insert(conn, consumer="indexer", subject=ingest.RELEASE, msg_id="d-1", stream_sequence=7,
                                 category="corrupt_zip", error="lumenlanterns-1.5.0.jar: no end of central directory",
                                 attempts=1, payload=ingest.encoder.encode(broken), github_repo_id=lumen.id,
                                 tag_name="1.5.0")
        # An asset the indexer left out (written by the indexer's skips_q.replace_for_release).
        await skips_q.replace_for_release(
            conn, github_release_id=999_002, github_repo_id=lumen.id, owner_github_id=author.id,
            repo_full_name=lumen.full_name, tag_name="1.4.0", release_indexed=False,
            skips=[skips_q.Skip(999_003, "lumenlanterns-1.4.0-dev.jar", "no_manifest",
                              "no fabric.mod.json, quilt.mod.json, mods.toml or mcmod.info in the jar")])
        await conn.execute(
            """INSERT INTO github_repositories (github_repo_id, installation_id, full_name, state, skip_reason)
               VALUES ($1, $2, $3, 'skipped', 'no mod manifest found on the default branch')""",
            notes.id, gh.state.installation_for_repo(notes).id, notes.full_name)
    finally:
        await conn.close()
    # These rows were written without the indexer's events: the replica's search index catches
    # up with them as it does after a dropped event, before any page searches.
    live = app[API].search_index
    assert await live.catch_up() >= 1
    while live.current() is None:
        await asyncio.sleep(0.01)
    yield w
    await runner.cleanup()
    await gh.close()


@pytest.fixture
async def pipeline(world, nats_url, tmp_path):
    """ingest and the indexer as their own processes, on the world's NATS, PostgreSQL and GitHub."""
    import nats  # noqa: PLC0415

    nc = await nats.connect(nats_url)
    await natsutil.ensure_all(nc.jetstream())
    await nc.drain()
    env = {"NATS_URL": nats_url, "DATABASE_URL": world.db_url, "INDEXIUM_WEBHOOK_SECRET": WEBHOOK_SECRET,
           "INDEXIUM_DOWNLOAD_HOSTS": f"{world.gh.github_host},{world.gh.cdn_host}",
           "INDEXIUM_PUBLISH_BEFORE_SCAN": "true", "INDEXIUM_LOG_FORMAT": "json"}
    procs = {name: ServiceProcess(BY_NAME[name], port=free_port(), env=env, log_path=tmp_path / f"{name}.log")
             for name in ("ingest", "indexer")}
    for p in procs.values():
        p.start()
    try:
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in procs.values()))
        yield procs
    finally:
        for p in procs.values():
            await asyncio.to_thread(p.stop, 30)


POLICY_MISSED_PATH = "/__test__/policy-missed"
HOSTILE_SCRIPT = ("fetch('/review').then(r=>r.text()).then(h=>{const d=new DOMParser().parseFromString(h,'text/html');"
                  "for(const f of d.forms){const a=f.getAttribute('action')||'';if(!a.startsWith('/review/'))continue;"
                  "const b=new FormData(f);b.set('action','approve');b.set('note','approved by the homepage link');"
                  "fetch(a,{method:'POST',body:new URLSearchParams(b)})}})")


async def policy_missed(request: web.Request) -> web.Response:
    """Test-only: the mod page as the site would send it had every layer before the CSP missed
    (a javascript: homepage in the template's links, an injected inline script and an inline
    handler), with the site's own headers (security.public): what the browser must refuse."""
    from indexium_api.site import pages, render, security  # noqa: PLC0415

    mod = {"slug": "glowbugs", "name": "Glow Bugs", "summary": "s", "description": "d", "authors": ["mallory"],
           "owner": "mallory", "licenses": ["MIT"], "links": {}, "categories": [], "tags": [], "environment": "both",
           "loaders": ["fabric"], "game_versions": ["1.20.1"], "latest_version": "1", "downloads": 0,
           "repo_full_name": "mallory/glowbugs", "repo_url": None, "created_at": None, "updated_at": None, "has_icon": False, "fork": False,
           "active_servers": 0, "project_type": "mod"}
    context = pages.mod_context(request.app, mod, [], [], [], None, range_key="30d")
    context["links"] = {"homepage": "javascript:" + HOSTILE_SCRIPT}
    html = render.text(request.app, "mod.html", **context).replace(
        "</main>", f"<script>{HOSTILE_SCRIPT}</script><img src=\"/nope.png\" alt=\"\" onerror=\"{HOSTILE_SCRIPT}\"></main>")
    return security.public(web.Response(text=html, content_type="text/html"))


class Browsing:
    """One browser context (its own cookies) with console errors collected and screenshots."""

    def __init__(self, context, shots_dir: Path, name: str):
        self.context, self.shots_dir, self.name = context, shots_dir, name
        self.errors: list[str] = []
        self.page = None
        self.n = 0

    async def open(self):
        self.page = await self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        return self.page

    async def shot(self, label: str) -> Path:
        self.n += 1
        path = self.shots_dir / f"{self.name}-{self.n:02d}-{label}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        SHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SHOTS / path.name)
        return path


@pytest.fixture
async def browser():
    from playwright.async_api import async_playwright  # noqa: PLC0415

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium package (apt-get install chromium)")
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        await b.close()


@pytest.fixture
async def browse(browser, tmp_path, request):
    """``await browse("name", width=1200)`` -> a fresh Browsing (no cookies shared with others)."""
    made: list[Browsing] = []
    test = request.node.name.removeprefix("test_")[:40]

    async def make(name: str = "main", *, width: int = 1200, height: int = 900) -> Browsing:
        ctx = await browser.new_context(viewport={"width": width, "height": height})
        b = Browsing(ctx, tmp_path, f"{test}-{name}")
        await b.open()
        made.append(b)
        return b

    yield make
    for b in made:
        await b.context.close()
