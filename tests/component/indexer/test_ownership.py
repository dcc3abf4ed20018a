"""Ownership of bytes and mod ids through the release job and the scan stage (both in-process,
jars served by FakeGitHub), seen through the public API and the operators' decision code.

The hostile probe this answers: ``mallory/almanac-plus`` published the exact bytes of
``fieldnotes/harvest-almanac``'s jar, after which ``GET /v2/version_file/{sha1}`` and
``POST /v2/version_file/{sha1}/update`` answered with mallory's project.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

import aiohttp
import msgspec
import pytest

from indexium_contracts import github, versions as version_events
from indexium_devstack import jars
from indexium_indexer.github import card
from indexium_indexer.scan.archive import ScanLimits
from indexium_indexer.scan.job import VersionScanner
from indexium_indexer.scan.metrics import ScanMetrics
from indexium_indexer.scan.pipeline import ScanContext
from indexium_jar.http.remote import DownloadPolicy
from indexium_jar.model import ModRecord
from indexium_db import review
from indexium_platform.metrics import ServiceMetrics

T0 = 1_700_000_000.0  # the original's upload; an impostor's copy is always later (GitHub's clock)
DAY = 86_400.0
ALMANAC = jars.fabric_jar("harvestalmanac", "1.0.0", "Harvest Almanac", "Seasons and crops.")


def asset(name: str, content: bytes, at: float, **extra) -> dict:
    return {"name": name, "content": content, "created_at": at, **extra}


@pytest.fixture
async def scan(gh, pool):
    """Scan the versions a job result reports, as the scan stage does (same process)."""
    parse, hashing = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    async with aiohttp.ClientSession() as session:
        ctx = ScanContext(session=session, policy=DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host})),
                          parse_executor=parse, hash_executor=hashing, limits=ScanLimits(), max_bytes=64 << 20)
        scanner = VersionScanner(pool, ctx, ScanMetrics(ServiceMetrics("scan")))

        async def run(result):
            return [await scanner.handle(e) for e in result.events if isinstance(e, version_events.VersionIndexed)]

        yield run
    parse.shutdown()
    hashing.shutdown()


async def publish(gh, releases, scan, full_name: str, tag: str, assets: list[dict], **repo_kw):
    owner, name = full_name.split("/")
    try:
        repo = gh.repo(full_name)
    except KeyError:
        repo = gh.add_repo(owner, name, **repo_kw)
    result = await releases.handle(gh.add_release(repo, tag, assets))
    await scan(result)
    return result


async def status_and_reason(db, full_name: str, tag: str):
    return await db.fetchrow(
        """SELECT v.status, (SELECT d.reason FROM quarantine_decisions d WHERE d.version_id = v.id
                             ORDER BY d.created_at DESC, d.id DESC LIMIT 1) AS reason
           FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.repo_full_name = $1 AND v.version_number = $2""",
        full_name, tag)


async def project_id(db, full_name: str) -> str:
    return await db.fetchval("SELECT public_id FROM mods WHERE repo_full_name = $1", full_name)


async def lookups(api, data: bytes) -> dict[str, str | None]:
    """Which project each launcher lookup of these bytes answers with (None: not found)."""
    sha1, sha512 = hashlib.sha1(data).hexdigest(), hashlib.sha512(data).hexdigest()
    out = {}
    async with api.get(f"/v2/version_file/{sha1}") as resp:
        out["v2 GET version_file"] = (await resp.json())["project_id"] if resp.status == 200 else None
    async with api.post(f"/v2/version_file/{sha1}/update", json={"loaders": ["fabric"]}) as resp:
        out["v2 POST version_file update"] = (await resp.json())["project_id"] if resp.status == 200 else None
    async with api.post("/v2/version_files", json={"hashes": [sha512], "algorithm": "sha512"}) as resp:
        out["v2 POST version_files"] = (await resp.json()).get(sha512, {}).get("project_id")
    async with api.post("/v2/version_files/update", json={"hashes": [sha1], "algorithm": "sha1"}) as resp:
        out["v2 POST version_files update"] = (await resp.json()).get(sha1, {}).get("project_id")
    async with api.get(f"/api/v1/versions/by-hash/{sha1}") as resp:
        out["v1 by-hash"] = (await resp.json())["mod"] if resp.status == 200 else None
    async with api.post("/api/v1/versions/update-check", json={"hashes": [sha1]}) as resp:
        out["v1 update-check"] = (await resp.json()).get(sha1, {}).get("mod")
    return out


def answered_by(project: str, slug: str) -> dict[str, str]:
    return {"v2 GET version_file": project, "v2 POST version_file update": project,
            "v2 POST version_files": project, "v2 POST version_files update": project,
            "v1 by-hash": slug, "v1 update-check": slug}


async def test_the_hostile_probe_a_reupload_never_answers_a_lookup_nor_an_update(gh, releases, scan, api, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    original = await project_id(db, "fieldnotes/harvest-almanac")
    # The impostor's tag sorts after the original's: before, every lookup answered with it.
    await publish(gh, releases, scan, "mallory/almanac-plus", "9.9.9", [asset("almanac-plus.jar", ALMANAC, T0 + DAY)])

    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")
    row = await status_and_reason(db, "mallory/almanac-plus", "9.9.9")
    assert row["status"] == "quarantined"
    assert "re-upload: almanac-plus.jar has the bytes first published by fieldnotes/harvest-almanac" in row["reason"]
    assert "claims the mod id harvestalmanac of fieldnotes/harvest-almanac" in row["reason"]
    async with api.get("/api/v1/mods", params={"q": "harvest almanac"}) as resp:
        assert [h["slug"] for h in (await resp.json())["hits"]] == ["harvestalmanac"]
    async with api.get("/v2/search", params={"query": "almanac"}) as resp:
        assert [h["project_id"] for h in (await resp.json())["hits"]] == [original]


async def test_an_impostor_indexed_first_loses_the_bytes_and_the_id_when_the_original_arrives(gh, releases, scan,
                                                                                              api, db):
    first = await publish(gh, releases, scan, "mallory/almanac-plus", "9.9.9",
                          [asset("almanac-plus.jar", ALMANAC, T0 + DAY)])
    assert (await status_and_reason(db, "mallory/almanac-plus", "9.9.9"))["status"] == "public"  # nobody else yet
    result = await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                           [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    original = await project_id(db, "fieldnotes/harvest-almanac")

    assert (await status_and_reason(db, "fieldnotes/harvest-almanac", "1.0.0"))["status"] == "public"
    row = await status_and_reason(db, "mallory/almanac-plus", "9.9.9")
    assert row["status"] == "quarantined" and "fieldnotes/harvest-almanac" in row["reason"]
    # The job reports the impostor's version too, so every API replica drops it at once.
    (moved,) = [e for e in result.events if isinstance(e, version_events.VersionStatusChanged)]
    assert moved.version_id == first.events[0].version_id and (moved.status, moved.visible) == ("quarantined", False)
    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")
    assert await db.fetchval("SELECT m.repo_full_name FROM mod_id_claims c JOIN mods m ON m.id = c.mod_id"
                             " WHERE c.manifest_mod_id = 'harvestalmanac' AND c.state = 'holder'") == \
        "fieldnotes/harvest-almanac"
    # The id's own slug follows it; the impostor keeps its project id, under another slug.
    slugs = await db.fetch("SELECT repo_full_name, slug FROM mods ORDER BY slug")
    assert [tuple(r) for r in slugs] == [("fieldnotes/harvest-almanac", "harvestalmanac"),
                                        ("mallory/almanac-plus", "harvestalmanac-mallory")]
    assert result.events[0].slug == "harvestalmanac" and moved.slug == "harvestalmanac-mallory"


async def test_without_a_digest_the_scan_finds_the_reupload_before_any_lookup_can(gh, releases, scan, api, db):
    # The same owner's mirror: the mod id is shared (same owner), so only the bytes decide.
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0, digest=None)])
    original = await project_id(db, "fieldnotes/harvest-almanac")
    repo = gh.add_repo("fieldnotes", "almanac-mirror")
    indexed = await releases.handle(gh.add_release(repo, "2.0.0", [asset("mirror.jar", ALMANAC, T0 + DAY, digest=None)]))
    # No digest: nothing to check at index time, and no hash stored either, so nothing finds it.
    assert (await status_and_reason(db, "fieldnotes/almanac-mirror", "2.0.0"))["status"] == "public"
    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")
    (scanned,) = await scan(indexed)
    assert (scanned.event.status, scanned.event.visible) == ("quarantined", False)
    row = await status_and_reason(db, "fieldnotes/almanac-mirror", "2.0.0")
    assert row["status"] == "quarantined"
    assert row["reason"] == "re-upload: mirror.jar has the bytes first published by fieldnotes/harvest-almanac"
    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")


async def test_the_same_bytes_twice_in_one_project_are_no_reupload(gh, releases, scan, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0", [asset("a.jar", ALMANAC, T0)])
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0-again", [asset("a.jar", ALMANAC, T0 + DAY)])
    assert {r["status"] for r in await db.fetch("SELECT status FROM mod_versions")} == {"public"}


async def test_another_owners_mod_id_is_held_for_review_and_the_author_is_told(gh, releases, scan, api, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    original = await project_id(db, "fieldnotes/harvest-almanac")
    other = jars.fabric_jar("harvestalmanac", "2.0.0", "Harvest Almanac", "Seasons, crops and more.")
    await publish(gh, releases, scan, "mallory/almanac-plus", "2.0.0", [asset("plus.jar", other, T0 + DAY)])
    row = await status_and_reason(db, "mallory/almanac-plus", "2.0.0")
    assert row["status"] == "quarantined"
    assert row["reason"] == "claims the mod id harvestalmanac of fieldnotes/harvest-almanac"
    assert not await db.fetchval("SELECT listed FROM mods WHERE repo_full_name = 'mallory/almanac-plus'")
    # A dependant resolves the id to the original.
    dependant = jars.fabric_jar("almanacaddon", "1.0.0", "Almanac Addon", depends={"harvestalmanac": "*"})
    await publish(gh, releases, scan, "carol/addon", "1.0.0", [asset("addon.jar", dependant, T0 + 2 * DAY)])
    async with api.get("/v2/project/almanacaddon/dependencies") as resp:
        assert [p["id"] for p in (await resp.json())["projects"]] == [original]


async def test_an_existing_project_releasing_another_owners_id_keeps_its_name_and_icon(gh, releases, scan, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    await publish(gh, releases, scan, "mallory/tools", "1.0.0",
                  [asset("tools.jar", jars.fabric_jar("mallorytools", "1.0.0", "Mallory Tools"), T0)])
    icon_before = await db.fetchval("SELECT etag FROM mod_icons i JOIN mods m ON m.id = i.mod_id"
                                    " WHERE m.repo_full_name = 'mallory/tools'")
    lookalike = jars.fabric_jar("harvestalmanac", "3.0.0", "Harvest Almanac", "Seasons and crops.")
    await publish(gh, releases, scan, "mallory/tools", "3.0.0", [asset("tools-3.jar", lookalike, T0 + DAY)])
    assert (await status_and_reason(db, "mallory/tools", "3.0.0"))["status"] == "quarantined"
    mod = await db.fetchrow("SELECT name, listed FROM mods WHERE repo_full_name = 'mallory/tools'")
    assert tuple(mod) == ("Mallory Tools", True)  # still listed by its own 1.0.0, under its own name
    assert await db.fetchval("SELECT etag FROM mod_icons i JOIN mods m ON m.id = i.mod_id"
                             " WHERE m.repo_full_name = 'mallory/tools'") == icon_before


async def test_the_same_owner_and_another_loader_are_not_held(gh, releases, scan, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    legacy = jars.fabric_jar("harvestalmanac", "0.9.0", "Harvest Almanac", "The 1.19 line.", minecraft="1.19.2")
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac-1.19", "0.9.0", [asset("legacy.jar", legacy, T0 + DAY)])
    port = jars.forge_jar("harvestalmanac", "1.0.0", "Harvest Almanac (Forge port)")
    await publish(gh, releases, scan, "mallory/almanac-forge", "1.0.0", [asset("forge.jar", port, T0 + DAY)])
    rows = await db.fetch("SELECT m.repo_full_name, v.status FROM mod_versions v JOIN mods m ON m.id = v.mod_id")
    assert {r["repo_full_name"]: r["status"] for r in rows} == {
        "fieldnotes/harvest-almanac": "public", "fieldnotes/harvest-almanac-1.19": "public",
        "mallory/almanac-forge": "public"}
    claims = await db.fetch("SELECT m.repo_full_name, c.loader, c.state FROM mod_id_claims c"
                            " JOIN mods m ON m.id = c.mod_id ORDER BY 1")
    assert [tuple(r) for r in claims] == [("fieldnotes/harvest-almanac", "fabric", "holder"),
                                         ("fieldnotes/harvest-almanac-1.19", "fabric", "same_owner"),
                                         ("mallory/almanac-forge", "forge", "holder")]


async def test_a_transferred_and_renamed_repository_keeps_its_mod_and_is_no_impostor(gh, releases, scan, api, db):
    repo = gh.add_repo("fieldnotes", "harvest-almanac")
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    original = await project_id(db, "fieldnotes/harvest-almanac")
    # Transferred to another account (its owner id changes) and renamed: the repository id stays.
    del gh.state.repos[repo.full_name.lower()]
    repo.owner, repo.name = gh.state.user("almanac-org", type="Organization"), "almanac"
    gh.state.repos[repo.full_name.lower()] = repo
    newer = jars.fabric_jar("harvestalmanac", "1.1.0", "Harvest Almanac", "Seasons and crops.")
    await publish(gh, releases, scan, "almanac-org/almanac", "1.1.0", [asset("almanac-1.1.0.jar", newer, T0 + DAY)])
    row = await db.fetchrow("SELECT slug, repo_full_name, public_id, listed FROM mods")
    assert tuple(row) == ("harvestalmanac", "almanac-org/almanac", original, True)
    assert (await status_and_reason(db, "almanac-org/almanac", "1.1.0"))["status"] == "public"
    assert await db.fetchval("SELECT state FROM mod_id_claims") == "holder"
    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")
    async with api.post(f"/v2/version_file/{hashlib.sha1(ALMANAC).hexdigest()}/update", json={}) as resp:
        assert (await resp.json())["version_number"] == "1.1.0"  # the update check follows the project


async def test_a_fork_says_so_on_its_page_and_in_api_v1(gh, releases, scan, api):
    jar = jars.fabric_jar("forkedmod", "1.0.0", "Forked Mod")
    await publish(gh, releases, scan, "someone/forked-mod", "1.0.0", [asset("f.jar", jar, T0)], fork=True)
    await publish(gh, releases, scan, "someone/plain-mod", "1.0.0",
                  [asset("p.jar", jars.fabric_jar("plainmod", "1.0.0", "Plain Mod"), T0)])
    async with api.get("/api/v1/mods/forkedmod") as resp:
        assert (await resp.json())["fork"] is True
    async with api.get("/api/v1/mods/plainmod") as resp:
        assert (await resp.json())["fork"] is False
    async with api.get("/mods/forkedmod") as resp:
        assert "a fork: GitHub marks someone/forked-mod as a fork of another repository" in await resp.text()
    async with api.get("/mods/plainmod") as resp:
        assert "a fork:" not in await resp.text()


async def test_an_approved_claim_is_a_separate_project_that_never_takes_the_originals_answers(gh, releases, scan,
                                                                                                api, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    original = await project_id(db, "fieldnotes/harvest-almanac")
    fork_jars = [jars.fabric_jar("harvestalmanac", v, "Harvest Almanac Continued", "A continuation.") for v in
                 ("5.0.0", "5.1.0")]
    for tag, data in zip(("5.0.0", "5.1.0"), fork_jars):
        await publish(gh, releases, scan, "bob/almanac-continued", tag, [asset(f"c-{tag}.jar", data, T0 + DAY)],
                      fork=True)
    held = await db.fetch("SELECT v.id, v.status FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                          " WHERE m.repo_full_name = 'bob/almanac-continued' ORDER BY v.version_number")
    assert [r["status"] for r in held] == ["quarantined", "quarantined"]

    reviewed = await review.decide(db, held[0]["id"], "approve", "operator", "a legitimate continuation")
    # The claim is settled: the other version held only for it is released too, with its event.
    assert [(e.version_number, e.status, e.visible) for e in reviewed.also] == [("5.1.0", "public", True)]
    assert {r["status"] for r in await db.fetch(
        "SELECT status FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
        " WHERE m.repo_full_name = 'bob/almanac-continued'")} == {"public"}
    fork = await db.fetchrow("SELECT slug, public_id, listed FROM mods WHERE repo_full_name = 'bob/almanac-continued'")
    assert fork["listed"] and fork["slug"] == "harvestalmanac-bob"
    assert await db.fetchval("SELECT state FROM mod_id_claims c JOIN mods m ON m.id = c.mod_id"
                             " WHERE m.repo_full_name = 'bob/almanac-continued'") == "approved"
    # Its own bytes answer with itself; the original's never do, and the id stays the original's.
    assert await lookups(api, ALMANAC) == answered_by(original, "harvestalmanac")
    assert (await lookups(api, fork_jars[1]))["v2 GET version_file"] == fork["public_id"]
    async with api.post(f"/v2/version_file/{hashlib.sha1(ALMANAC).hexdigest()}/update", json={}) as resp:
        assert (await resp.json())["version_number"] == "1.0.0"  # never the fork's 5.1.0
    dependant = jars.fabric_jar("almanacaddon", "1.0.0", "Almanac Addon", depends={"harvestalmanac": "*"})
    await publish(gh, releases, scan, "carol/addon", "1.0.0", [asset("addon.jar", dependant, T0 + 2 * DAY)])
    async with api.get("/v2/project/almanacaddon/dependencies") as resp:
        assert [p["id"] for p in (await resp.json())["projects"]] == [original]
    # A later release of the approved project is not held again.
    later = jars.fabric_jar("harvestalmanac", "5.2.0", "Harvest Almanac Continued", "A continuation.")
    await publish(gh, releases, scan, "bob/almanac-continued", "5.2.0", [asset("c-5.2.0.jar", later, T0 + 3 * DAY)])
    assert (await status_and_reason(db, "bob/almanac-continued", "5.2.0"))["status"] == "public"


async def test_a_reupload_cannot_be_approved_and_a_rejected_claim_stays_held(gh, releases, scan, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    await publish(gh, releases, scan, "mallory/almanac-plus", "9.9.9", [asset("almanac-plus.jar", ALMANAC, T0 + DAY)])
    copy = await db.fetchval("SELECT v.id FROM mod_versions v JOIN mods m ON m.id = v.mod_id"
                             " WHERE m.repo_full_name = 'mallory/almanac-plus'")
    with pytest.raises(review.NotReviewable, match="re-upload: almanac-plus.jar has the bytes first published by"):
        await review.decide(db, copy, "approve", "operator", "")
    assert (await review.decide(db, copy, "reject", "operator", "impostor")).status == "rejected"
    assert await db.fetchval("SELECT state FROM mod_id_claims c JOIN mods m ON m.id = c.mod_id"
                             " WHERE m.repo_full_name = 'mallory/almanac-plus'") == "rejected"
    other = jars.fabric_jar("harvestalmanac", "9.9.10", "Harvest Almanac", "Seasons and crops!")
    await publish(gh, releases, scan, "mallory/almanac-plus", "9.9.10", [asset("again.jar", other, T0 + 2 * DAY)])
    row = await status_and_reason(db, "mallory/almanac-plus", "9.9.10")
    assert row["status"] == "quarantined"
    assert row["reason"] == "claims the mod id harvestalmanac of fieldnotes/harvest-almanac"


async def test_a_branch_manifest_claiming_another_owners_id_does_not_rename_a_project(gh, releases, scan, db):
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", ALMANAC, T0)])
    await publish(gh, releases, scan, "mallory/tools", "1.0.0",
                  [asset("tools.jar", jars.fabric_jar("mallorytools", "1.0.0", "Mallory Tools"), T0)])
    tools = gh.repo("mallory/tools")
    repo = msgspec.convert(gh.repo_json(tools), github.Repository)

    def record(mod_id: str, name: str) -> ModRecord:
        return ModRecord(loader="fabric", manifest_path="fabric.mod.json", mod_id=mod_id, version="2", name=name)

    # The GitHub role's card refresh after a push: a manifest naming another owner's id names nothing.
    await card.refresh(db, repo, record("harvestalmanac", "Harvest Almanac"))
    assert await db.fetchval("SELECT name FROM mods WHERE repo_full_name = 'mallory/tools'") == "Mallory Tools"
    await card.refresh(db, repo, record("mallorytools", "Mallory's Tools"))
    assert await db.fetchval("SELECT name FROM mods WHERE repo_full_name = 'mallory/tools'") == "Mallory's Tools"


async def test_a_project_that_takes_its_ids_slug_over_announces_the_slug_it_left(gh, releases, scan, api, db):
    # The impostor's asset is older than the original's first one, so the original starts under
    # another slug; its next release carries an asset older still (GitHub's clock says who was
    # first), the id and its slug follow it, and the slug it leaves must be announced: no row has
    # it any more, and only an event naming it makes every API replica drop it.
    await publish(gh, releases, scan, "mallory/almanac-plus", "9.9.9", [asset("almanac-plus.jar", ALMANAC, T0 + DAY)])
    await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.0.0",
                  [asset("harvest-almanac-1.0.0.jar", jars.fabric_jar("harvestalmanac", "1.0.0", "Harvest Almanac",
                                                                      "Seasons."), T0 + 2 * DAY)])
    before = await db.fetchval("SELECT slug FROM mods WHERE repo_full_name = 'fieldnotes/harvest-almanac'")
    assert before != "harvestalmanac"
    result = await publish(gh, releases, scan, "fieldnotes/harvest-almanac", "1.1.0",
                           [asset("harvest-almanac-1.1.0.jar", jars.fabric_jar("harvestalmanac", "1.1.0",
                                                                               "Harvest Almanac", "Seasons."), T0)])
    slugs = dict(await db.fetch("SELECT repo_full_name, slug FROM mods"))
    assert slugs == {"fieldnotes/harvest-almanac": "harvestalmanac", "mallory/almanac-plus": "harvestalmanac-mallory"}
    (left,) = [e for e in result.events if isinstance(e, version_events.ModChanged)]
    assert (left.slug, left.cause) == (before, "ownership.slug_moved")
    assert left.mod_id == str(await db.fetchval("SELECT id FROM mods WHERE slug = 'harvestalmanac'"))
    async with api.get(f"/api/v1/mods/{before}") as resp:
        assert resp.status == 404
