"""Mod identity (the repository), slugs, the icon, and what a corrupt jar does to a version."""

from __future__ import annotations

import hashlib

import pytest

from indexium_db.queries import github as github_q
from indexium_db.queries import mods as mods_q
from indexium_devstack import jars
from indexium_indexer.release.job import PermanentJobError


async def test_slug_comes_from_the_manifest_id_lowercased(gh, releases, db):
    repo = gh.add_repo("eve", "iron-chests-legacy")
    rel = gh.add_release(repo, "7.0.72", [("IronChest-7.0.72.jar", jars.mcmod_jar("IronChest", "7.0.72"))])
    (event,) = (await releases.handle(rel)).events
    assert event.slug == "ironchest"
    assert await db.fetchval("SELECT manifest_id FROM mods") == "IronChest"


async def test_slug_collision_gets_a_deterministic_suffix(gh, releases, db):
    first = gh.add_repo("CaffeineMC", "sodium")
    second = gh.add_repo("Someone", "sodium-fork")
    third = gh.add_repo("Someone", "sodium-other")
    for repo in (first, second, third):
        rel = gh.add_release(repo, "1.0", [("sodium.jar", jars.fabric_jar("sodium", "1.0"))])
        await releases.handle(rel)
    rows = await db.fetch("SELECT github_repo_id, slug FROM mods ORDER BY created_at")
    assert [r["slug"] for r in rows] == ["sodium", "sodium-someone", f"sodium-{third.id}"]


async def test_slug_and_mod_survive_a_repository_rename_and_a_new_manifest_id_of_the_same_name(gh, releases, db):
    repo = gh.add_repo("frank", "oldname")
    await releases.handle(gh.add_release(repo, "1.0", [("m.jar", jars.fabric_jar("oldid", "1.0", name="Frank's"))]))
    repo.name = "newname"  # renamed on GitHub: same repository id
    gh.state.repos["frank/newname"] = gh.state.repos.pop("frank/oldname")
    await releases.handle(gh.add_release(repo, "2.0", [("m2.jar", jars.fabric_jar("newid", "2.0", name="Frank's"))]))
    rows = await db.fetch("SELECT slug, repo_full_name, identity FROM mods")
    assert [tuple(r) for r in rows] == [("oldid", "frank/newname", "newid")]
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2


async def test_a_new_manifest_id_of_another_name_is_another_project_of_the_repository(gh, releases, db):
    repo = gh.add_repo("frank", "tools")
    await releases.handle(gh.add_release(repo, "a-1.0", [("a.jar", jars.fabric_jar("alpha_tool", "1.0"))]))
    await releases.handle(gh.add_release(repo, "b-1.0", [("b.jar", jars.fabric_jar("beta_tool", "1.0"))]))
    rows = await db.fetch("SELECT slug, name, identity FROM mods ORDER BY created_at")
    assert [tuple(r) for r in rows] == [("alpha_tool", "Alpha Tool", "alpha_tool"),
                                        ("beta_tool", "Beta Tool", "beta_tool")]


async def test_icon_is_stored_and_served_with_an_etag(gh, releases, db, api):
    repo = gh.add_repo("grace", "shiny")
    data = jars.fabric_jar("shiny", "1.0")
    await releases.handle(gh.add_release(repo, "1.0", [("shiny.jar", data)]))
    icon = jars.png_icon(32, "shiny")
    async with api.get("/api/v1/mods/shiny/icon") as resp:
        assert resp.status == 200 and resp.content_type == "image/png"
        assert await resp.read() == icon
        etag = resp.headers["ETag"]
    assert etag == '"' + hashlib.sha256(icon).hexdigest()[:32] + '"'
    async with api.get("/api/v1/mods/shiny/icon", headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304
    async with api.get("/api/v1/mods/shiny") as resp:
        assert (await resp.json())["icon_url"] == "/api/v1/mods/shiny/icon"


async def test_a_jar_without_icon_keeps_the_mods_previous_icon(gh, releases, db):
    repo = gh.add_repo("grace", "shiny")
    await releases.handle(gh.add_release(repo, "1.0", [("a.jar", jars.fabric_jar("shiny", "1.0"))]))
    before = await db.fetchval("SELECT etag FROM mod_icons")
    await releases.handle(gh.add_release(repo, "1.1", [("b.jar", jars.fabric_jar("shiny", "1.1", icon_png=False))]))
    assert await db.fetchval("SELECT etag FROM mod_icons") == before


def corrupt(jar: bytes) -> bytes:
    """Damage the manifest's compressed bytes: the directory still checks out, inflating fails."""
    at = jar.index(b"fabric.mod.json") + len(b"fabric.mod.json") + 4
    return jar[:at] + bytes(b ^ 0xFF for b in jar[at : at + 40]) + jar[at + 40 :]


async def test_a_corrupt_jar_beside_a_good_one_holds_the_version_as_suspicious(gh, releases, db):
    repo = gh.add_repo("heidi", "mixed")
    good, bad = jars.fabric_jar("mixed", "1.0"), corrupt(jars.fabric_jar("mixed", "1.0", seed=2))
    result = await releases.handle(gh.add_release(repo, "1.0", [("mixed-fabric.jar", good), ("mixed-x.jar", bad)]))
    assert result.outcome == "indexed" and not result.events[0].visible
    row = await db.fetchrow("SELECT status, suspicious FROM mod_versions")
    assert tuple(row) == ("quarantined", True)
    assert await db.fetchval("SELECT listed FROM mods") is False


async def test_a_release_whose_only_jar_is_corrupt_is_recorded_suspicious_when_the_mod_exists(gh, releases, db):
    repo = gh.add_repo("heidi", "broken")
    bad = gh.add_release(repo, "0.9", [("broken.jar", corrupt(jars.fabric_jar("broken", "0.9")))])
    with pytest.raises(PermanentJobError) as err:
        await releases.handle(bad)
    assert err.value.category == "corrupt_zip"
    assert await db.fetchval("SELECT count(*) FROM mods") == 0  # no mod is made from an unreadable jar

    await releases.handle(gh.add_release(repo, "1.0", [("broken-1.0.jar", jars.fabric_jar("broken", "1.0"))]))
    with pytest.raises(PermanentJobError):
        await releases.handle(bad, "edited")
    rows = await db.fetch("SELECT version_number, status, suspicious, hidden FROM mod_versions ORDER BY 1")
    assert [tuple(r) for r in rows] == [("0.9", "quarantined", True, False), ("1.0", "public", False, False)]
    files = await db.fetch("SELECT f.filename, f.loaders FROM version_files f JOIN mod_versions v "
                           "ON v.id = f.version_id WHERE v.version_number = '0.9'")
    assert [(f["filename"], f["loaders"]) for f in files] == [("broken.jar", [])]
    assert tuple(await db.fetchrow("SELECT listed, latest_version FROM mods")) == (True, "1.0")


async def test_a_held_release_delivered_after_a_rename_does_not_undo_it(gh, releases, db):
    repo = gh.add_repo("heidi", "glow")
    await releases.handle(gh.add_release(repo, "1.0", [("glow-1.0.jar", jars.fabric_jar("glow", "1.0"))]))
    # The GitHub role records a rename, a new default branch and topics; the release webhook
    # below was queued before, so it carries the repository as it was (heidi/glow, main, none).
    await github_q.upsert_installation(db, 77, state="active", account_id=repo.owner.id,
                                       account_login="heidi", account_type="User")
    await github_q.upsert_repository(db, github_repo_id=repo.id, installation_id=77, full_name="heidi/glow-mod",
                                     default_branch="dev", description=None, homepage=None,
                                     topics=["decoration"], private=False, archived=False)
    await mods_q.update_repository(db, repo.id, full_name="heidi/glow-mod", default_branch="dev",
                                   categories=["decoration"])
    bad = gh.add_release(repo, "1.1", [("glow-1.1.jar", corrupt(jars.fabric_jar("glow", "1.1")))])
    with pytest.raises(PermanentJobError):
        await releases.handle(bad)
    assert await db.fetchval("SELECT status FROM mod_versions WHERE version_number = '1.1'") == "quarantined"
    row = await db.fetchrow("SELECT repo_full_name, default_branch, categories FROM mods")
    assert tuple(row) == ("heidi/glow-mod", "dev", ["decoration"])


async def test_a_held_release_delivered_after_a_transfer_writes_nothing_of_the_old_repository(gh, releases, db):
    repo = gh.add_repo("heidi", "glow")
    await releases.handle(gh.add_release(repo, "1.0", [("glow-1.0.jar", jars.fabric_jar("glow", "1.0"))]))
    # Transferred to the lumina organisation (its installation) and renamed since; the release
    # webhook below was queued before: heidi/glow, heidi's account id.
    await github_q.upsert_installation(db, 78, state="active", account_id=4242, account_login="lumina",
                                       account_type="Organization")
    await github_q.upsert_repository(db, github_repo_id=repo.id, installation_id=78, full_name="lumina/glow-mod",
                                     default_branch="main", description=None, homepage=None,
                                     topics=[], private=False, archived=False)
    await mods_q.update_repository(db, repo.id, full_name="lumina/glow-mod", default_branch="main",
                                   owner_id=4242, owner_login="lumina")
    bad = gh.add_release(repo, "1.1", [("glow-1.1.jar", corrupt(jars.fabric_jar("glow", "1.1"))),
                                       ("glow-1.1-sources.jar", b"PK")])
    with pytest.raises(PermanentJobError):
        await releases.handle(bad)
    assert await db.fetchval("SELECT status FROM mod_versions WHERE version_number = '1.1'") == "quarantined"
    # Every row the held release wrote names the repository as recorded: its skipped assets
    # (the dashboards and `indexium_ops skipped --repo` find them by name and owner) and the mod.
    skipped = await db.fetch("SELECT asset_name, repo_full_name, owner_github_id FROM release_asset_skips"
                             " WHERE tag_name = '1.1' ORDER BY asset_name")
    assert [tuple(r) for r in skipped] == [("glow-1.1-sources.jar", "lumina/glow-mod", 4242),
                                          ("glow-1.1.jar", "lumina/glow-mod", 4242)]
    assert tuple(await db.fetchrow("SELECT repo_full_name, author_github_id FROM mods")) == ("lumina/glow-mod", 4242)
    assert await db.fetchval("SELECT login FROM authors WHERE github_id = 4242") == "lumina"


async def test_no_manifest_is_a_permanent_failure_with_the_reasons(gh, releases, db):
    repo = gh.add_repo("ivan", "notamod")
    lib = jars.build_jar([("META-INF/MANIFEST.MF", jars.manifest({"Created-By": "x"})), ("a/B.class", b"\xca\xfe")])
    with pytest.raises(PermanentJobError) as err:
        await releases.handle(gh.add_release(repo, "1.0", [("lib.jar", lib)]))
    assert err.value.category == "no_manifest"
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 0


async def test_a_jar_redirecting_off_the_allowed_hosts_beside_a_good_one_holds_the_version(gh, releases, db):
    repo = gh.add_repo("heidi", "offsite")
    rel = gh.add_release(repo, "1.0", [("offsite-fabric.jar", jars.fabric_jar("offsite", "1.0")),
                                       ("offsite-forge.jar", jars.forge_jar("offsite", "1.0"))])
    gh.redirect_asset_to(rel.assets[1], "https://evil.example.com/offsite-forge.jar")
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and not result.events[0].visible
    assert result.skipped == [("offsite-forge.jar", "download_host_not_allowed")]
    assert tuple(await db.fetchrow("SELECT status, suspicious FROM mod_versions")) == ("quarantined", True)


async def test_other_jars_left_out_of_a_version_are_named(gh, releases, db):
    repo = gh.add_repo("heidi", "partial")
    rel = gh.add_release(repo, "1.0", [("partial-fabric.jar", jars.fabric_jar("partial", "1.0")),
                                       ("partial-gone.jar", jars.forge_jar("partial", "1.0")),
                                       ("partial-lib.jar", jars.build_jar([("com/x/A.class", b"\xca\xfe\xba\xbe")]))])
    gh.set_mode(rel.assets[1], "404")
    result = await releases.handle(rel)
    assert result.outcome == "indexed" and result.events[0].visible  # the readable jar is the version
    assert sorted(result.skipped) == [("partial-gone.jar", "asset_not_found"), ("partial-lib.jar", "no_manifest")]


async def decisions(db):
    return [tuple(r) for r in await db.fetch("SELECT actor, action FROM quarantine_decisions ORDER BY id")]


async def test_the_indexer_holds_a_version_for_a_corrupt_jar_and_lifts_its_hold_once_the_jar_is_gone(gh, releases, db):
    repo = gh.add_repo("heidi", "fixed")
    clean_status = (await releases.handle(gh.add_release(
        repo, "0.1", [("fixed-0.1.jar", jars.fabric_jar("fixed", "0.1"))]))).events[0]
    fresh = await db.fetchval("SELECT status FROM mod_versions WHERE version_number = '0.1'")
    rel = gh.add_release(repo, "1.0", [("fixed-fabric.jar", jars.fabric_jar("fixed", "1.0")),
                                       ("fixed-x.jar", corrupt(jars.fabric_jar("fixed", "1.0", seed=3)))])
    await releases.handle(rel)
    await releases.handle(rel, "edited")  # a redelivery adds no second decision
    assert await decisions(db) == [("indexer", "quarantined")]
    row = await db.fetchrow("SELECT status, suspicious FROM mod_versions WHERE version_number = '1.0'")
    assert tuple(row) == ("quarantined", True)

    gh.remove_asset(rel.assets[1])  # the author deletes the broken jar
    await releases.handle(rel, "edited")
    row = await db.fetchrow("SELECT status, suspicious FROM mod_versions WHERE version_number = '1.0'")
    assert tuple(row) == (fresh, False) and clean_status.visible == (fresh == "public")
    assert await decisions(db) == [("indexer", "quarantined"), ("indexer", "cleared")]


async def test_a_corrupt_jar_added_to_a_version_the_scan_holds_becomes_the_indexers_hold(gh, releases, db):
    repo = gh.add_repo("heidi", "swap")
    rel = gh.add_release(repo, "1.0", [("swap-fabric.jar", jars.fabric_jar("swap", "1.0"))])
    await releases.handle(rel)
    version_id = await db.fetchval("SELECT id FROM mod_versions")
    await db.execute("UPDATE mod_versions SET status = 'quarantined' WHERE id = $1", version_id)
    await db.execute("INSERT INTO quarantine_decisions (version_id, action, actor, reason) "
                     "VALUES ($1, 'quarantined', 'scan', 'digest_mismatch')", version_id)
    gh.add_asset(rel, "swap-x.jar", corrupt(jars.fabric_jar("swap", "1.0", seed=4)))
    await releases.handle(rel, "edited")
    # the scan only lifts holds it made last: this one is now the indexer's
    assert await decisions(db) == [("scan", "quarantined"), ("indexer", "quarantined")]
    assert await db.fetchval("SELECT status FROM mod_versions") == "quarantined"


async def test_an_operator_decision_is_not_overridden_by_a_redelivery(gh, releases, db):
    repo = gh.add_repo("heidi", "approved")
    rel = gh.add_release(repo, "1.0", [("a-fabric.jar", jars.fabric_jar("approved", "1.0")),
                                       ("a-x.jar", corrupt(jars.fabric_jar("approved", "1.0", seed=5)))])
    await releases.handle(rel)
    version_id = await db.fetchval("SELECT id FROM mod_versions")
    await db.execute("UPDATE mod_versions SET status = 'rejected' WHERE id = $1", version_id)
    await db.execute("INSERT INTO quarantine_decisions (version_id, action, actor) VALUES ($1, 'rejected', 'bob')",
                     version_id)
    await releases.handle(rel, "edited")
    assert await db.fetchval("SELECT status FROM mod_versions") == "rejected"
    assert await decisions(db) == [("indexer", "quarantined"), ("bob", "rejected")]
