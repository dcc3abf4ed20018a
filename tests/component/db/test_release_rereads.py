"""github_release_rereads (0017): one schedule per release, bounded, and each due re-read held
by one replica at a time under a lease that another takes over when it runs out."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from indexium_db.queries import github as github_q

REPO = 186_853_002


async def _schedule(db, release_id: int, *, due_in_s: float = -1.0, max_rows: int = 10) -> str:
    now = datetime.now(UTC)
    return await github_q.schedule_reread(
        db, github_release_id=release_id, github_repo_id=REPO, tag_name="v" + "9" * 400, base_at=now,
        due_at=now + timedelta(seconds=due_in_s), expected_jars=2, seen_assets=[7], max_rows=max_rows)


async def test_one_schedule_per_release_bounded_and_leased_to_one_replica_at_a_time(db):
    await github_q.upsert_installation(db, 957_387)
    await github_q.upsert_repository(db, github_repo_id=REPO, installation_id=957_387, full_name="alice/lumen",
                                     default_branch="main", description=None, homepage=None, topics=[],
                                     private=False, archived=False)
    assert await _schedule(db, 1) == "scheduled"
    assert await _schedule(db, 1) == "exists"  # a redelivery, or the `released` after `published`
    assert await _schedule(db, 2, due_in_s=3600) == "scheduled"
    assert await _schedule(db, 3, max_rows=2) == "full"

    [row] = await github_q.claim_rereads(db, lease_s=0.3, holder="a", limit=10)  # 2 is not due
    assert (row["github_release_id"], row["full_name"], row["installation_id"]) == (1, "alice/lumen", 957_387)
    assert len(row["tag_name"]) == 255 and list(row["seen_assets"]) == [7] and row["expected_jars"] == 2
    assert await github_q.claim_rereads(db, lease_s=0.3, holder="b", limit=10) == []  # a holds it
    await asyncio.sleep(0.4)  # a died: its lease runs out
    [taken] = await github_q.claim_rereads(db, lease_s=30, holder="b", limit=10)
    assert taken["github_release_id"] == 1
    # a, late, can neither move nor end b's re-read.
    later = datetime.now(UTC) + timedelta(seconds=60)
    await github_q.advance_reread(db, 1, "a", step=5, due_at=later, seen_assets=[], error=None)
    await github_q.finish_reread(db, 1, "a")
    assert await db.fetchval("SELECT step FROM github_release_rereads WHERE github_release_id = 1") == 0
    await github_q.advance_reread(db, 1, "b", step=1, due_at=later, seen_assets=[7, 8], error="x")
    row = await db.fetchrow("SELECT * FROM github_release_rereads WHERE github_release_id = 1")
    assert (row["step"], list(row["seen_assets"]), row["lease_until"], row["holder"]) == (1, [7, 8], None, None)
    assert await github_q.next_reread_at(db) == min(row["due_at"], await db.fetchval(
        "SELECT due_at FROM github_release_rereads WHERE github_release_id = 2"))
    assert await github_q.claim_rereads(db, lease_s=30, holder="b", limit=10) == []  # nothing due now
    await db.execute("UPDATE github_release_rereads SET due_at = now() WHERE github_release_id = 1")
    [row] = await github_q.claim_rereads(db, lease_s=30, holder="b", limit=10)
    await github_q.finish_reread(db, 1, "b")
    assert await db.fetchval("SELECT array_agg(github_release_id) FROM github_release_rereads") == [2]


async def test_a_releases_jar_count_spans_every_project_it_went_to(db):
    """A release of two mods makes two projects' versions (0025): "how many jars its releases
    carry" counts the release, not each version, or a re-read would wait for too few."""
    from indexium_db.queries import mods as mods_q, versions as versions_q  # noqa: PLC0415

    await mods_q.upsert_author(db, 1, "alice")
    for rel, published in ((11, datetime(2026, 1, 1, tzinfo=UTC)), (12, datetime(2026, 2, 1, tzinfo=UTC))):
        for manifest_id, files in (("lumen_core", 2), ("lumen_glow", 1)):
            mod = await mods_q.get_by_identity(db, REPO, manifest_id) or await mods_q.create(
                db, github_repo_id=REPO, repo_full_name="alice/lumen", owner_id=1, owner_login="alice",
                manifest_id=manifest_id, default_branch="main", categories=[],
                card=mods_q.Card(manifest_id, "", "", [], [], {}, "both"))
            vid = await versions_q.upsert_version(
                db, mod_id=mod["id"], version_number=f"v{rel}", github_release_id=rel, tag_name=f"v{rel}", name="",
                changelog="", version_type="release", published_at=published, status="public", game_versions=[],
                loaders=[])
            await versions_q.replace_files(db, vid, [versions_q.FileRow(
                github_asset_id=rel * 100 + n + (10 if manifest_id == "lumen_glow" else 0), filename=f"{n}.jar",
                url="https://github.com/x", size=1, content_type=None, github_digest=None, sidecar_url=None,
                loaders=[], game_versions=[], manifests=[], is_primary=n == 0, download_count=0) for n in range(files)])
    assert await github_q.recent_jar_counts(db, REPO, 99, 3) == [3, 3]
