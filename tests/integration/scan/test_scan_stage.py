"""The scan stage end to end on real NATS JetStream and PostgreSQL.

The real indexer indexes releases served by the fake GitHub (versions start
``pending_scan``), its "version indexed" events go on the VERSIONS stream, and the
scan stage's app consumes them through its durable consumer. Visibility is checked
with the public catalog queries the API uses; operator decisions go through the CLI.
"""

import argparse
import asyncio
import hashlib
import uuid

import aiohttp
import msgspec
import nats
import pytest
from indexium_devstack import scankit as kit
from aiohttp.test_utils import TestClient, TestServer

from indexium_contracts import github, ingest, versions as version_events
from indexium_db.pool import create_pool
from indexium_db.queries import catalog as catalog_q, hashes as hashes_q, scan as scan_q
from indexium_search import sqlpath
from indexium_devstack.fakegithub import FakeGitHub
from indexium_indexer.release.job import ReleaseIndexer
from indexium_indexer.scan.app import create_app
from indexium_indexer.scan.settings import Settings
from indexium_jar.http.policy import DownloadPolicy
from indexium_ops import cli
from indexium_platform.settings import load

CLEAN = kit.clean_mod_jar("cleanmod")
BAD = kit.fractureiser_jar("victimmod")


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        yield server


class Stage:
    def __init__(self, gh, nats_url, database_url, db):
        self.gh, self.nats_url, self.database_url, self.db = gh, nats_url, database_url, db
        self.client: TestClient | None = None

    def env(self, **extra) -> dict[str, str]:
        return {"NATS_URL": self.nats_url, "DATABASE_URL": self.database_url,
                "INDEXIUM_DOWNLOAD_HOSTS": f"{self.gh.github_host},{self.gh.cdn_host}", **extra}

    async def start(self, **extra) -> None:
        settings = load(Settings, self.env(INDEXIUM_SCAN_RETRY_BASE_SECONDS="0.05", **extra))
        self.client = TestClient(TestServer(create_app(settings)))
        await self.client.start_server()

    async def stop(self) -> None:
        if self.client is not None:
            await self.client.close()

    async def index(self, owner: str, repo: str, assets, *, publish_before_scan: bool = False) -> uuid.UUID:
        """Index a release with the real indexer and publish its event, as the indexer's worker does."""
        rel = self.gh.add_release(self.gh.add_repo(owner, repo), "v1.0.0", assets=assets)
        hook = msgspec.convert(self.gh.release_payload(rel), github.ReleaseWebhook)
        event = ingest.ReleaseReceived(delivery_id=str(uuid.uuid4()), received_at="2025-01-01T00:00:00Z", webhook=hook)
        pool = await create_pool(self.database_url, max_size=2)
        policy = DownloadPolicy(allowed_hosts=frozenset({self.gh.github_host, self.gh.cdn_host}), timeout=5)
        try:
            async with aiohttp.ClientSession() as session:
                result = await ReleaseIndexer(pool, session, policy, publish_before_scan=publish_before_scan).handle(event)
        finally:
            await pool.close()
        (indexed,) = result.events
        nc = await nats.connect(self.nats_url)
        try:
            await nc.jetstream().publish(version_events.INDEXED, version_events.encoder.encode(indexed))
        finally:
            await nc.drain()
        return uuid.UUID(indexed.version_id)

    async def status(self, version_id: uuid.UUID) -> str:
        return await self.db.fetchval("SELECT status FROM mod_versions WHERE id = $1", version_id)

    async def wait_for(self, version_id: uuid.UUID, *statuses: str, timeout: float = 20.0) -> str:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            status = await self.status(version_id)
            if status in statuses:
                return status
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"version {version_id} stayed {status}")
            await asyncio.sleep(0.1)

    async def metrics_once(self, line: str, timeout: float = 20.0) -> str:
        """/metrics as soon as it holds ``line``: a job's status commits before its gauge and counters move."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            text = await (await self.client.get("/metrics")).text()
            if line in text:
                return text
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"/metrics never showed {line!r}:\n{text}")
            await asyncio.sleep(0.05)

    async def listed_slugs(self) -> set[str]:
        rows, _ = await sqlpath.search(self.db, sqlpath.SearchQuery(q=None, limit=100))
        return {r["slug"] for r in rows}

    async def operator(self, action: str, version_id, by: str = "alice") -> int:
        settings = load(cli.Settings, {"NATS_URL": self.nats_url, "DATABASE_URL": self.database_url})
        ns = argparse.Namespace(action=action, id=str(version_id)[:13], by=by, reason="reviewed by hand",
                                limit=100, all=False)
        return await cli.quarantine(settings, ns)


@pytest.fixture
async def stage(gh, nats_url, database_url, db):
    s = Stage(gh, nats_url, database_url, db)
    yield s
    await s.stop()


async def last_event(nats_url: str, subject: str):
    nc = await nats.connect(nats_url)
    try:
        msg = await nc.jetstream().get_last_msg("VERSIONS", subject)
        return version_events.decoder.decode(msg.data)
    finally:
        await nc.drain()


async def test_clean_publishes_bad_ones_are_quarantined_until_an_operator_decides(stage, capsys):
    clean = await stage.index("alice", "clean", [("clean-1.0.0.jar", CLEAN)])
    bad = await stage.index("mallory", "victim", [("victim-1.0.0.jar", BAD)])
    pb = await stage.index("mallory", "pb", [("pb-1.0.0.jar", kit.process_builder_jar("pbmod"))])
    nested = await stage.index("mallory", "bundle", [("bundle-1.0.0.jar", kit.nesting_jar(BAD, "bundlemod"))])
    assert await stage.status(clean) == "pending_scan"  # the indexer no longer publishes before the scan
    assert await stage.listed_slugs() == set()
    await stage.start()

    assert await stage.wait_for(clean, "public", "quarantined") == "public"
    for v in (bad, pb, nested):
        assert await stage.wait_for(v, "public", "quarantined") == "quarantined"

    # launchers' hashes are filled; the clean one is found by hash, the bad one is not
    sha = {name: hashlib.sha256(data).hexdigest() for name, data in (("clean", CLEAN), ("bad", BAD))}
    row = await stage.db.fetchrow("SELECT sha1, sha256, sha512, scan_status FROM version_files WHERE version_id = $1", clean)
    assert (row["sha1"], row["sha256"], row["sha512"], row["scan_status"]) == (
        hashlib.sha1(CLEAN).hexdigest(), sha["clean"], hashlib.sha512(CLEAN).hexdigest(), "clean")
    assert set(await hashes_q.versions_by_hashes(stage.db, "sha256", [sha["clean"], sha["bad"]])) == {sha["clean"]}

    # quarantined versions are invisible to search, mod pages and version lists
    assert await stage.listed_slugs() == {"cleanmod"}
    assert await catalog_q.mod_by_slug(stage.db, "victimmod") is None
    victim_mod = await stage.db.fetchval("SELECT mod_id FROM mod_versions WHERE id = $1", bad)
    assert await catalog_q.versions_of(stage.db, victim_mod) == []

    findings = await scan_q.version_findings(stage.db, bad)
    assert findings[0]["rule"] == "fractureiser_stage0" and findings[0]["class_name"] == "com.example.victimmod.VictimMod"
    nested_rules = {(f["rule"], f["entry_path"]) for f in await scan_q.version_findings(stage.db, nested)}
    assert ("fractureiser_stage0", "META-INF/jars/inner-1.0.0.jar!/com/example/victimmod/VictimMod.class") in nested_rules
    (auto,) = await scan_q.decisions(stage.db, bad)
    assert (auto["action"], auto["actor"]) == ("quarantined", "scan")
    event = await last_event(stage.nats_url, version_events.SCANNED)
    assert isinstance(event, version_events.VersionScanned)

    metrics = await stage.metrics_once('indexium_scan_jobs_total{outcome="scanned"} 4.0')
    assert "indexium_scan_quarantined_versions 3.0" in metrics
    assert 'indexium_scan_findings_total{rule="fractureiser_stage0"}' in metrics
    assert 'indexium_scan_files_total{result="clean"} 1.0' in metrics

    # the operator queue, then decisions with who and when
    capsys.readouterr()
    assert await stage.operator("list", None) == 0
    listed = capsys.readouterr().out
    assert "victimmod" in listed and "pbmod" in listed and "cleanmod" not in listed

    assert await stage.operator("approve", bad, by="alice") == 0
    assert await stage.status(bad) == "public"
    assert "victimmod" in await stage.listed_slugs()
    assert set(await hashes_q.versions_by_hashes(stage.db, "sha256", [sha["bad"]])) == {sha["bad"]}
    assert await stage.operator("reject", pb, by="bob") == 0
    assert await stage.status(pb) == "rejected" and "pbmod" not in await stage.listed_slugs()
    decisions = [(d["action"], d["actor"]) for d in await scan_q.decisions(stage.db, bad)]
    assert decisions == [("quarantined", "scan"), ("approved", "alice")]
    reviewed = await last_event(stage.nats_url, version_events.REVIEWED)
    assert (reviewed.decision, reviewed.by, reviewed.visible) == ("rejected", "bob", False)
    assert await stage.operator("approve", clean) == 1  # not held: nothing to approve



async def test_a_modpack_carrying_a_bad_jar_in_overrides_is_held(stage):
    """A pack that carries code is scanned code (issue 34): a jar under a .mrpack's overrides/
    is walked like a nested jar, and its finding holds the pack's version; a pack of downloads
    only (its files on allowed hosts) and a clean jar in overrides/ publish."""
    from indexium_devstack import packs  # noqa: PLC0415

    listed = [packs.pack_file("mods/listed.jar", b"listed", "https://cdn.modrinth.com/data/x/listed.jar")]
    bad = await stage.index("mallory", "trojan-pack", [("Trojan-1.0.mrpack", packs.mrpack(
        listed, name="Trojan Pack", overrides={"mods/helper.jar": BAD, "config/a.toml": b"x = 1"}))])
    clean = await stage.index("alice", "honest-pack", [("Honest-1.0.mrpack", packs.mrpack(
        listed, name="Honest Pack", overrides={"mods/extra.jar": CLEAN}))])
    assert await stage.status(bad) == "pending_scan"
    await stage.start()
    assert await stage.wait_for(clean, "public", "quarantined") == "public"
    assert await stage.wait_for(bad, "public", "quarantined") == "quarantined"
    findings = {(f["rule"], f["entry_path"]) for f in await scan_q.version_findings(stage.db, bad)}
    assert ("fractureiser_stage0", "overrides/mods/helper.jar!/com/example/victimmod/VictimMod.class") in findings
    (auto,) = await scan_q.decisions(stage.db, bad)
    assert (auto["action"], auto["actor"]) == ("quarantined", "scan")
    assert await stage.listed_slugs() == {"honest-pack"}


async def test_publish_before_scan_shows_at_once_and_hides_on_a_finding(stage):
    bad = await stage.index("mallory", "early", [("early-1.0.0.jar", BAD)], publish_before_scan=True)
    assert await stage.status(bad) == "public" and await stage.listed_slugs() == {"victimmod"}
    await stage.start()
    assert await stage.wait_for(bad, "quarantined") == "quarantined"
    assert await stage.listed_slugs() == set()


async def test_truncated_download_is_dead_lettered_and_the_version_stays_hidden(stage):
    version = await stage.index("carol", "cut", [("cut-1.0.0.jar", CLEAN)])
    stage.gh.set_mode(stage.gh.repo("carol/cut").release("v1.0.0").asset("cut-1.0.0.jar"), "truncate")
    await stage.start(INDEXIUM_SCAN_MAX_ATTEMPTS="2")
    deadline = asyncio.get_running_loop().time() + 20
    while not await stage.db.fetchval("SELECT count(*) FROM dead_letters WHERE consumer = 'scan'"):
        assert asyncio.get_running_loop().time() < deadline, "never dead-lettered"
        await asyncio.sleep(0.1)
    row = await stage.db.fetchrow("SELECT category, error, attempts FROM dead_letters WHERE consumer = 'scan'")
    assert row["category"] == "retries_exhausted" and row["attempts"] == 2 and "network_error" in row["error"]
    assert await stage.status(version) == "pending_scan"
    assert await stage.listed_slugs() == set()


async def test_the_scan_makes_exactly_one_request_per_file_its_download(stage):
    # Streamed jars (data descriptors: zero sizes in every local header) and a plain one; the
    # indexer read each once (tail), the scan must then only download each file once.
    streamed = kit.clean_mod_jar("streamedmod", data_descriptors=True)
    bad_streamed = kit.fractureiser_jar("streamedbad", data_descriptors=True)
    # (The same mod id: one project with two files. Two ids would be two projects since 0025.)
    plain = kit.clean_mod_jar("streamedmod")
    good = await stage.index("erin", "streamed", [("streamed-1.0.0.jar", streamed), ("plain-1.0.0.jar", plain)])
    bad = await stage.index("mallory", "streamedbad", [("streamedbad-1.0.0.jar", bad_streamed)])
    (indexed,) = [e for e in await indexed_events(stage.nats_url) if e.version_id == str(good)]
    assert {f.filename: bool(f.entry_sizes) for f in indexed.files} == {
        "streamed-1.0.0.jar": True, "plain-1.0.0.jar": False}
    assets = [stage.gh.state.repos[name].releases[0].asset(f) for name, f in (
        ("erin/streamed", "streamed-1.0.0.jar"), ("erin/streamed", "plain-1.0.0.jar"),
        ("mallory/streamedbad", "streamedbad-1.0.0.jar"))]
    stage.gh.reset_stats()
    await stage.start()
    assert await stage.wait_for(good, "public", "quarantined") == "public"
    assert await stage.wait_for(bad, "public", "quarantined") == "quarantined"
    for asset in assets:
        stats = stage.gh.stats(asset)
        assert (stats.requests, stats.ranges, stats.bytes_sent) == (1, (), asset.size), (asset.name, stats)


async def indexed_events(nats_url: str) -> list:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        sub = await js.subscribe(version_events.INDEXED, ordered_consumer=True)
        out = []
        while True:
            try:
                msg = await sub.next_msg(timeout=0.5)
            except nats.errors.TimeoutError:
                return out
            out.append(version_events.decoder.decode(msg.data))
    finally:
        await nc.drain()
