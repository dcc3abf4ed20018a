"""Ownership of bytes and mod ids in PostgreSQL: the claim trigger's order, the hash lookups that
answer only from the owner, the dependency resolution, the claims' states, and migration 0015's
backfill of rows stored before it."""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime, timedelta

import asyncpg

from indexium_db import migrate
from indexium_db.queries import hashes as hashes_q, modrinth as modrinth_q, mods as mods_q, ownership as own_q
from indexium_db.queries import updates as updates_q
from indexium_db.queries import versions as versions_q

T0 = datetime(2025, 3, 1, tzinfo=UTC)
BYTES = b"the jar's bytes"
SHA256 = hashlib.sha256(BYTES).hexdigest()


async def make_mod(db, repo_id: int, owner_id: int, manifest_id: str = "almanac", owner: str | None = None):
    owner = owner or f"owner{owner_id}"
    await mods_q.upsert_author(db, owner_id, owner)
    card = mods_q.Card(name=manifest_id.title(), summary="", description="", authors=[], licenses=[], links={},
                       environment="both")
    return (await mods_q.create(db, github_repo_id=repo_id, repo_full_name=f"{owner}/{manifest_id}-{repo_id}",
                                owner_id=owner_id, owner_login=owner, manifest_id=manifest_id,
                                default_branch="main", categories=[], card=card))["id"]


async def add_version(db, mod_id, number: str, *, digest: str | None = SHA256, at: datetime | None = None,
                      manifests=None, asset_id: int = 1, status: str = "public"):
    vid = await versions_q.upsert_version(
        db, mod_id=mod_id, version_number=number, github_release_id=abs(hash((mod_id, number))) % 10**9,
        tag_name=number, name=number, changelog="", version_type="release", published_at=at or T0, status=status,
        game_versions=["1.20.1"], loaders=["fabric"])
    await versions_q.replace_files(db, vid, [versions_q.FileRow(
        github_asset_id=asset_id, filename=f"{number}.jar", url=f"https://x/{number}.jar", size=len(BYTES),
        content_type=None, github_digest=f"sha256:{digest}" if digest else None, sidecar_url=None,
        loaders=["fabric"], game_versions=["1.20.1"],
        manifests=manifests if manifests is not None else [{"loader": "fabric", "mod_id": "almanac", "version": "1"}],
        is_primary=True, download_count=0, asset_created_at=at)])
    await mods_q.refresh_rollup(db, mod_id)
    return vid


async def owner_of(db, sha256: str = SHA256):
    return await db.fetchval("SELECT mod_id FROM content_owners WHERE sha256 = $1", sha256)


async def test_the_bytes_belong_to_the_earliest_asset_then_to_the_first_indexed(db):
    a, b, c = [await make_mod(db, i, 100 + i) for i in (1, 2, 3)]
    await add_version(db, b, "1.0", at=T0 + timedelta(days=1))
    assert await owner_of(db) == b
    await add_version(db, c, "1.0", at=T0 + timedelta(days=1))  # a tie: the first indexed keeps it
    assert await owner_of(db) == b
    await add_version(db, a, "1.0", at=T0)  # earlier on GitHub's clock: takes it, whenever indexed
    assert await owner_of(db) == a
    await add_version(db, b, "2.0", at=T0 + timedelta(days=9), asset_id=2)
    assert await owner_of(db) == a
    # A row whose asset time is unknown (stored before 0015) comes after any known time.
    d = await make_mod(db, 4, 104)
    await add_version(db, d, "1.0", digest=SHA256[::-1], at=None)
    await add_version(db, b, "3.0", digest=SHA256[::-1], at=T0 + timedelta(days=30), asset_id=3)
    assert await owner_of(db, SHA256[::-1]) == b


async def test_the_scan_stages_hash_claims_the_bytes_a_digestless_file_never_had(db):
    a, b = await make_mod(db, 1, 101), await make_mod(db, 2, 102)
    va = await add_version(db, a, "1.0", digest=None, at=T0)
    vb = await add_version(db, b, "1.0", digest=None, at=T0 + timedelta(days=1))
    assert await db.fetchval("SELECT count(*) FROM content_owners") == 0
    for vid in (vb, va):  # the copy is scanned first: the original's earlier asset still wins
        await db.execute("UPDATE version_files SET sha1 = $2, sha256 = $3 WHERE version_id = $1",
                         vid, hashlib.sha1(BYTES).hexdigest(), SHA256)
    assert await owner_of(db) == a


async def test_hash_lookups_and_update_checks_answer_only_from_the_owner_even_if_a_copy_is_public(db):
    original, copy = await make_mod(db, 1, 101), await make_mod(db, 2, 102, owner="mallory")
    await add_version(db, original, "1.0", at=T0)
    await add_version(db, copy, "9.9", at=T0 + timedelta(days=1))  # public here: only the queries decide
    newer = await add_version(db, original, "1.1", digest=hashlib.sha256(b"1.1").hexdigest(),
                              at=T0 + timedelta(days=2), asset_id=2)
    await db.execute("UPDATE version_files SET sha1 = $1, sha256 = $2 WHERE content_sha256 = $2",
                     hashlib.sha1(BYTES).hexdigest(), SHA256)
    found = await hashes_q.versions_by_hashes(db, "sha256", [SHA256])
    assert found[SHA256]["mod_slug"] == "almanac"
    every = await hashes_q.files_in_public_versions(db, "sha1", [hashlib.sha1(BYTES).hexdigest()],
                                                    columns="v.id, m.slug", every=True)
    assert [r["slug"] for r in every] == ["almanac"]
    update = await updates_q.newest_versions(db, "sha256", [SHA256], loaders=[], game_versions=[],
                                             version_types=[])
    assert update[SHA256]["id"] == newer  # the owner's own newer version, never the copy's 9.9
    # Nor does the copy's Forge update file promote anything from those bytes.
    assert await modrinth_q.forge_versions(db, copy, ["fabric"]) == []
    assert [r["version_number"] for r in await modrinth_q.forge_versions(db, original, ["fabric"])] == ["1.1", "1.0"]


async def test_claims_hold_share_review_and_take_over_by_asset_time(db):
    fieldnotes, mirror = await make_mod(db, 1, 101, owner="fieldnotes"), await make_mod(db, 2, 101, owner="fieldnotes")
    mallory, early = await make_mod(db, 3, 103, owner="mallory"), await make_mod(db, 4, 104, owner="early")
    pair = [own_q.Declared("fabric", "almanac", T0 + timedelta(days=1))]
    assert await own_q.claim_mod_ids(db, fieldnotes, pair) == set()
    assert await own_q.claim_mod_ids(db, mirror, [own_q.Declared("fabric", "almanac", T0 + timedelta(days=2))]) == set()
    assert await own_q.claim_mod_ids(db, mallory, [own_q.Declared("fabric", "almanac", T0 + timedelta(days=3))]) == set()
    assert await own_q.claim_mod_ids(db, mallory, [own_q.Declared("forge", "almanac", T0 + timedelta(days=3))]) == set()
    states = {(r["mod_id"], r["loader"]): (r["state"], r["holder_mod_id"]) for r in
              await db.fetch("SELECT mod_id, loader, state, holder_mod_id FROM mod_id_claims")}
    assert states == {(fieldnotes, "fabric"): ("holder", None), (mirror, "fabric"): ("same_owner", fieldnotes),
                      (mallory, "fabric"): ("review", fieldnotes), (mallory, "forge"): ("holder", None)}
    # An earlier asset (indexed later) takes the id: the old holder's claim goes to review.
    assert await own_q.claim_mod_ids(db, early, [own_q.Declared("fabric", "almanac", T0)]) == {fieldnotes}
    assert await db.fetchval("SELECT state FROM mod_id_claims WHERE mod_id = $1 AND loader = 'fabric'",
                             fieldnotes) == "review"
    # Claiming again changes nothing; a rejected claim is never promoted by the clock.
    assert await own_q.claim_mod_ids(db, early, [own_q.Declared("fabric", "almanac", T0)]) == set()
    await db.execute("UPDATE mod_id_claims SET state = 'rejected' WHERE mod_id = $1", mallory)
    await db.execute("DELETE FROM mods WHERE id = $1", early)  # the holder gone
    assert await own_q.claim_mod_ids(db, mallory, [own_q.Declared("fabric", "almanac", T0)]) == set()
    assert await db.fetchval("SELECT state FROM mod_id_claims WHERE mod_id = $1 AND loader = 'fabric'",
                             mallory) == "rejected"


async def test_a_dependency_resolves_to_the_holder_never_to_a_claim_in_review(db):
    holder, fork = await make_mod(db, 1, 101), await make_mod(db, 2, 102, owner="bob")
    impostor = await make_mod(db, 3, 103, owner="mallory")
    for mod, n in ((holder, 1), (fork, 2), (impostor, 3)):
        await add_version(db, mod, "1.0", digest=hashlib.sha256(bytes([n])).hexdigest(), at=T0 + timedelta(days=n))
    await own_q.claim_mod_ids(db, holder, [own_q.Declared("fabric", "almanac", T0)])
    await own_q.claim_mod_ids(db, fork, [own_q.Declared("fabric", "almanac", T0 + timedelta(days=1))])
    await own_q.claim_mod_ids(db, impostor, [own_q.Declared("fabric", "almanac", T0 + timedelta(days=2))])
    await db.execute("UPDATE mod_id_claims SET state = 'approved' WHERE mod_id = $1", fork)
    resolve = "SELECT indexium_project_for($1, $2)"
    assert await db.fetchval(resolve, "Almanac", "fabric") == holder
    assert await db.fetchval(resolve, "almanac", "quilt") == holder  # no quilt claimant: the holder still
    await db.execute("UPDATE mods SET listed = false WHERE id = $1", holder)
    assert await db.fetchval(resolve, "almanac", "fabric") == fork  # approved, never the one in review
    await db.execute("UPDATE mods SET listed = false WHERE id = $1", fork)
    assert await db.fetchval(resolve, "almanac", "fabric") is None
    # An id nobody claimed (rows seeded without the release job) falls back to the manifest id.
    assert await db.fetchval(resolve, "unclaimed", "fabric") is None
    other = await make_mod(db, 4, 104, manifest_id="unclaimed")
    await add_version(db, other, "1.0", digest=None, manifests=[])
    assert await db.fetchval(resolve, "unclaimed", "fabric") == other


async def test_a_version_is_held_and_released_by_the_rules_only(db):
    holder, claimant = await make_mod(db, 1, 101), await make_mod(db, 2, 102, owner="bob")
    await add_version(db, holder, "1.0", at=T0)
    await own_q.claim_mod_ids(db, holder, [own_q.Declared("fabric", "almanac", T0)])
    vid = await add_version(db, claimant, "2.0", digest=hashlib.sha256(b"other").hexdigest(), at=T0 + timedelta(1))
    await db.execute("UPDATE version_files SET scan_status = 'clean' WHERE version_id = $1", vid)
    await own_q.claim_mod_ids(db, claimant, [own_q.Declared("fabric", "almanac", T0 + timedelta(1))])
    changed, held = await own_q.reevaluate(db, [vid])
    assert [(c.status, c.reason) for c in changed] == [("quarantined", "claims the mod id almanac of owner101/almanac-1")]
    assert held == {vid} and not await db.fetchval("SELECT listed FROM mods WHERE id = $1", claimant)
    assert await own_q.reevaluate(db, [vid]) == ([], {vid})  # held already: no second decision
    await db.execute("UPDATE mod_id_claims SET state = 'approved' WHERE mod_id = $1", claimant)
    changed, held = await own_q.reevaluate(db, [vid])
    assert [(c.status, c.visible) for c in changed] == [("public", True)] and held == set()
    assert await db.fetchval("SELECT listed FROM mods WHERE id = $1", claimant)
    actions = [tuple(r) for r in await db.fetch(
        "SELECT action, actor FROM quarantine_decisions WHERE version_id = $1 ORDER BY id", vid)]
    assert actions == [("quarantined", "ownership"), ("cleared", "ownership")]


async def test_migration_0015_records_the_owners_of_rows_stored_before_it(pg_server):
    name = f"indexium_own{os.getpid()}"
    admin = await asyncpg.connect(pg_server.admin_dsn)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
    await admin.execute(f'CREATE DATABASE "{name}"')
    try:
        db = await asyncpg.connect(pg_server.dsn(name))
        try:
            await db.execute("CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                             " applied_at timestamptz NOT NULL DEFAULT now())")
            for version, sql in migrate.available():
                if version >= "0015":
                    break
                await db.execute(sql)
                await db.execute("INSERT INTO schema_migrations (version) VALUES ($1)", version)
            rows = []
            for repo, owner, published in ((1, 101, T0 + timedelta(days=5)), (2, 102, T0), (3, 101, T0 + timedelta(9))):
                await db.execute("INSERT INTO authors (github_id, login) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                                 owner, f"o{owner}")
                mod = await db.fetchval(
                    "INSERT INTO mods (github_repo_id, repo_full_name, slug, manifest_id, name, author_github_id)"
                    " VALUES ($1, $2, $3, 'almanac', 'Almanac', $4) RETURNING id", repo, f"o{owner}/r{repo}",
                    f"almanac-{repo}", owner)
                vid = await db.fetchval(
                    "INSERT INTO mod_versions (mod_id, version_number, github_release_id, tag_name, published_at,"
                    " status) VALUES ($1, '1', $2, '1', $3, 'public') RETURNING id", mod, repo, published)
                await db.execute(
                    "INSERT INTO version_files (version_id, github_asset_id, filename, url, size, github_digest,"
                    " manifests) VALUES ($1, $2, 'a.jar', 'https://x', 1, $3, $4)", vid, repo, f"sha256:{SHA256}",
                    '[{"loader": "fabric", "mod_id": "Almanac", "version": "1"}]')
                rows.append(mod)
            assert (await migrate.migrate(db))[0] == "0015_ownership"  # and any later ones
            assert await db.fetchval("SELECT mod_id FROM content_owners WHERE sha256 = $1", SHA256) == rows[1]
            claims = {r["mod_id"]: (r["state"], r["decided_by"]) for r in
                      await db.fetch("SELECT mod_id, state, decided_by FROM mod_id_claims")}
            # The earliest holds; listed before the rule, the other owner's stays (approved, said by whom).
            assert claims == {rows[1]: ("holder", None), rows[0]: ("approved", "0015_ownership"),
                              rows[2]: ("approved", "0015_ownership")}
        finally:
            await db.close()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def test_an_approved_claimant_never_takes_the_holders_name(db):
    holder, fork = await make_mod(db, 1, 101), await make_mod(db, 2, 102, owner="bob")
    vid = await add_version(db, fork, "1.0", at=T0 + timedelta(days=1))
    await own_q.claim_mod_ids(db, holder, [own_q.Declared("fabric", "almanac", T0)])
    await own_q.claim_mod_ids(db, fork, [own_q.Declared("fabric", "almanac", T0 + timedelta(days=1))])
    assert await own_q.decide_claims(db, vid, "approved", "operator") == 1
    assert await db.fetchval("SELECT name FROM mods WHERE id = $1", fork) == "Almanac (bob)"
    # Whoever writes the card next (a release, a push) writes the holder's name in vain.
    await mods_q.update_card(db, fork, name="ALMANAC")
    assert await db.fetchval("SELECT name FROM mods WHERE id = $1", fork) == "ALMANAC (bob)"
    await mods_q.update_card(db, fork, name="Almanac Continued")
    assert await db.fetchval("SELECT name FROM mods WHERE id = $1", fork) == "Almanac Continued"
    assert await db.fetchval("SELECT name FROM mods WHERE id = $1", holder) == "Almanac"
