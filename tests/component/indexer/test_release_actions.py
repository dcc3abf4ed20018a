"""Every release action, end to end through the job: GitHub-shaped payload in, rows out."""

from __future__ import annotations

from indexium_devstack import jars


async def version_rows(db):
    return await db.fetch(
        "SELECT version_number, version_type, status, hidden, hidden_reason, name, changelog, suspicious "
        "FROM mod_versions ORDER BY version_number")


async def outcome(db, delivery_id):
    return await db.fetchval("SELECT outcome FROM webhook_deliveries WHERE delivery_id = $1", delivery_id)


async def test_published_and_released_index_a_public_version(gh, releases, db):
    repo = gh.add_repo("alice", "lumen", description="Light mod")
    first = gh.add_release(repo, "v1.0.0", [("lumen-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0"))], body="Notes")
    result = await releases.handle(first, "published", "p-1")
    assert result.outcome == "indexed" and result.requests >= 1
    (event,) = result.events
    assert event.slug == "lumen" and event.version_number == "v1.0.0" and event.visible
    second = gh.add_release(repo, "v1.1.0", [("lumen-1.1.0.jar", jars.fabric_jar("lumen", "1.1.0"))])
    assert (await releases.handle(second, "released", "r-1")).outcome == "indexed"
    rows = await version_rows(db)
    assert [(r["version_number"], r["status"], r["hidden"], r["version_type"]) for r in rows] == [
        ("v1.0.0", "public", False, "release"), ("v1.1.0", "public", False, "release")]
    assert rows[0]["changelog"] == "Notes"
    mod = await db.fetchrow("SELECT slug, listed, latest_version FROM mods")
    assert tuple(mod) == ("lumen", True, "v1.1.0")
    assert await outcome(db, "p-1") == "indexed" and await outcome(db, "r-1") == "indexed"


async def test_prereleases_are_beta_or_alpha_by_their_tag(gh, releases, db):
    repo = gh.add_repo("alice", "lumen")
    beta = gh.add_release(repo, "v2.0.0-rc.1", [("lumen.jar", jars.fabric_jar("lumen", "2.0.0-rc.1"))], prerelease=True)
    alpha = gh.add_release(repo, "v2.0.0-alpha.3", [("lumen-a.jar", jars.fabric_jar("lumen", "2.0.0-alpha.3"))],
                           prerelease=True)
    await releases.handle(beta, "prereleased")
    await releases.handle(alpha, "prereleased")
    assert {r["version_number"]: r["version_type"] for r in await version_rows(db)} == {
        "v2.0.0-rc.1": "beta", "v2.0.0-alpha.3": "alpha"}


async def test_edited_reindexes_the_same_version(gh, releases, db):
    repo = gh.add_repo("alice", "lumen")
    rel = gh.add_release(repo, "v1.0.0", [("lumen.jar", jars.fabric_jar("lumen", "1.0.0", minecraft="1.20.1"))])
    await releases.handle(rel)
    rel.name, rel.body = "Lumen 1.0.0 (fixed)", "Better notes"
    gh.replace_asset_content(rel.assets[0], jars.fabric_jar("lumen", "1.0.0", minecraft="1.21.1"))
    assert (await releases.handle(rel, "edited")).outcome == "indexed"
    (row,) = await version_rows(db)
    assert (row["name"], row["changelog"]) == ("Lumen 1.0.0 (fixed)", "Better notes")
    files = await db.fetch("SELECT game_versions FROM version_files")
    assert [list(f["game_versions"]) for f in files] == [["1.21.1"]]


async def test_unpublished_and_deleted_hide_the_version_without_deleting_it(gh, releases, db):
    repo = gh.add_repo("alice", "lumen")
    old = gh.add_release(repo, "v1.0.0", [("lumen-1.jar", jars.fabric_jar("lumen", "1.0.0"))])
    new = gh.add_release(repo, "v1.1.0", [("lumen-2.jar", jars.fabric_jar("lumen", "1.1.0"))])
    await releases.handle(old)
    await releases.handle(new)
    result = await releases.handle(new, "unpublished", "u-1")
    assert result.outcome == "hidden" and [e.version_number for e in result.events] == ["v1.1.0"]
    assert await db.fetchval("SELECT latest_version FROM mods") == "v1.0.0"
    await releases.handle(old, "deleted", "x-1")
    rows = await version_rows(db)
    assert [(r["version_number"], r["hidden"], r["hidden_reason"]) for r in rows] == [
        ("v1.0.0", True, "release deleted"), ("v1.1.0", True, "release unpublished")]
    assert await db.fetchval("SELECT count(*) FROM version_files") == 2  # kept
    assert tuple(await db.fetchrow("SELECT listed, latest_version FROM mods")) == (False, None)
    assert await outcome(db, "u-1") == "hidden"
    # published again: visible again
    await releases.handle(new, "published")
    assert tuple(await db.fetchrow("SELECT listed, latest_version FROM mods")) == (True, "v1.1.0")


async def test_draft_created_is_ignored(gh, releases, db):
    repo = gh.add_repo("alice", "lumen")
    draft = gh.add_release(repo, "v3.0.0", [("lumen.jar", jars.fabric_jar("lumen", "3.0.0"))], draft=True)
    result = await releases.handle(draft, "created", "c-1")
    assert (result.outcome, result.events, result.requests) == ("ignored", [], 0)
    assert gh.stats(draft.assets[0]).requests == 0  # not even read
    assert await db.fetchval("SELECT count(*) FROM mods") == 0
    assert await outcome(db, "c-1") == "ignored"


async def test_a_release_without_jars_is_ignored(gh, releases, db):
    repo = gh.add_repo("alice", "lumen")
    rel = gh.add_release(repo, "v1", [("notes.txt", b"hello"), ("lumen-sources.jar", jars.fabric_jar("lumen"))])
    assert (await releases.handle(rel)).outcome == "ignored"
    assert gh.stats(rel.assets[1]).requests == 0
