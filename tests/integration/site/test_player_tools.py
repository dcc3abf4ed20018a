"""The players' tools in a real Chromium: "Build a pack" (two mods, one needing the other, down
to the .mrpack the browser saves) and "Can I upgrade?" (a folder of real jars hashed in the
page, only the hashes sent). No console errors, no request to any origin but ours."""

from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile
from datetime import UTC, datetime, timedelta

from playwright.async_api import expect

from indexium_api.core.state import API
from indexium_db.pool import connect
from indexium_db.queries import github as github_q, mods as mods_q, versions as versions_q

from .conftest import AUTHOR

GAME = "1.21.4"


def jar(mod_id: str, version: str, depends: dict | None = None) -> bytes:
    """A real (tiny) Fabric mod jar: a zip with its fabric.mod.json."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("fabric.mod.json", json.dumps({"schemaVersion": 1, "id": mod_id, "version": version,
                                                  "depends": depends or {}}))
        z.writestr(f"{mod_id}/Main.class", b"\xca\xfe\xba\xbe" + mod_id.encode())
    return out.getvalue()


async def add_mod(conn, world, manifest_id: str, name: str, releases):
    """releases: [(version, game version, {dep: range})]: GitHub releases with the real jar as
    their asset, and the rows the indexer writes for them (manifest records, the jar's hashes)."""
    gh = world.gh
    repo = gh.add_repo(AUTHOR, manifest_id, description=name)
    install = gh.add_installation([repo], account=gh.state.user(AUTHOR))
    owner = repo.owner
    card = mods_q.Card(name=name, summary=f"{name} for the players' tools test", description=name,
                       authors=[owner.login], licenses=["MIT"], links={}, environment="both")
    mod = await mods_q.create(conn, github_repo_id=repo.id, repo_full_name=repo.full_name, owner_id=owner.id,
                              owner_login=owner.login, manifest_id=manifest_id, default_branch="main",
                              categories=["utility"], card=card)
    await github_q.upsert_installation(conn, install.id)
    await conn.execute("INSERT INTO github_repositories (github_repo_id, installation_id, full_name, state) "
                       "VALUES ($1, $2, $3, 'registered')", repo.id, install.id, repo.full_name)
    jars = {}
    for i, (version, game, deps) in enumerate(releases):
        data = jar(manifest_id, version, deps)
        filename = f"{manifest_id}-{version}.jar"
        jars[version] = (filename, data)
        rel = gh.add_release(repo, version, [(filename, data)])
        url = gh.release_payload(rel)["release"]["assets"][0]["browser_download_url"]
        record = {"loader": "fabric", "mod_id": manifest_id, "version": version,
                  "dependencies": [{"mod_id": d, "version_range": r, "kind": "required"} for d, r in deps.items()]}
        vid = await versions_q.upsert_version(
            conn, mod_id=mod["id"], version_number=version, github_release_id=rel.id, tag_name=version,
            name=f"{name} {version}", changelog="", version_type="release",
            published_at=datetime.now(UTC) - timedelta(days=10 - i), status="public", game_versions=[game],
            loaders=["fabric"])
        ids = await versions_q.replace_files(conn, vid, [versions_q.FileRow(
            github_asset_id=rel.assets[0].id, filename=filename, url=url, size=len(data),
            content_type="application/java-archive", github_digest=None, sidecar_url=None, loaders=["fabric"],
            game_versions=[game], manifests=[record], is_primary=True, download_count=1)])
        await conn.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1", ids[0],
                           hashlib.sha1(data).hexdigest(), hashlib.sha256(data).hexdigest(),
                           hashlib.sha512(data).hexdigest())
    await mods_q.refresh_rollup(conn, mod["id"])
    return mod, jars


async def seed_tools(world):
    conn = await connect(world.db_url)
    try:
        glow, glow_jars = await add_mod(conn, world, "glowapp", "Glow App", [
            ("0.9.0", "1.21.1", {"glowlib": ">=1.0"}), ("1.0.0", GAME, {"glowlib": ">=1.1"})])
        lib, lib_jars = await add_mod(conn, world, "glowlib", "Glow Lib", [("1.0.0", "1.21.1", {}),
                                                                          ("1.1.0", GAME, {})])
        old, old_jars = await add_mod(conn, world, "oldthing", "Old Thing", [("2.0.0", "1.21.1", {})])
    finally:
        await conn.close()
    assert await world.app[API].search_index.catch_up() >= 1
    return {"glowapp": glow_jars, "glowlib": lib_jars, "oldthing": old_jars}


def watch_origins(b, base: str) -> list[str]:
    foreign: list[str] = []
    b.page.on("request", lambda r: foreign.append(r.url) if not r.url.startswith(base + "/") else None)
    return foreign


async def test_build_a_pack_and_download_the_mrpack(world, browse, tmp_path):
    await seed_tools(world)
    b = await browse("desktop", width=1280)
    foreign = watch_origins(b, world.base)
    page = b.page
    await page.goto(world.base + "/")
    await page.get_by_role("link", name="Build a pack").click()
    await page.wait_for_url(world.base + "/pack")
    await expect(page.get_by_role("heading", level=1)).to_have_text("Build a pack")
    # With script, a changed select reloads the page for it at once (site.js, data-auto-submit).
    await page.get_by_label("Loader").select_option("quilt")
    await page.wait_for_url(re.compile(r".*loader=quilt.*"))
    await page.get_by_label("Loader").select_option("fabric")
    await page.wait_for_url(re.compile(r".*loader=fabric.*"))
    await page.get_by_label("Game version").select_option(GAME)
    await page.get_by_label("Find a mod to add").fill("glow app")
    await page.get_by_role("button", name="Search", exact=True).click()
    await page.get_by_role("button", name="Add Glow App").click()
    await expect(page.locator("#resolution-h")).to_have_text(f"The pack: 2 mods for Fabric {GAME}")
    rows = page.locator("#resolution tbody tr")
    await expect(rows).to_have_count(2)
    await expect(page.locator("#resolution")).to_contain_text("needed by Glow App 1.0.0: glowlib >=1.1")
    await b.shot("pack-1280")
    async with page.expect_download() as info:
        await page.get_by_role("link", name="Download .mrpack").click()
    download = await info.value
    path = tmp_path / "pack.mrpack"
    await download.save_as(path)
    assert zipfile.is_zipfile(path)
    with zipfile.ZipFile(path) as z:
        index = json.loads(z.read("modrinth.index.json"))
    assert index["formatVersion"] == 1 and index["dependencies"]["minecraft"] == GAME
    assert sorted(f["path"] for f in index["files"]) == ["mods/glowapp-1.0.0.jar", "mods/glowlib-1.1.0.jar"]
    phone = await browse("phone", width=375, height=800)
    await phone.page.goto(page.url)
    await expect(phone.page.locator("#resolution-h")).to_be_visible()
    await phone.shot("pack-375")
    assert b.errors == [] and phone.errors == []
    assert foreign == []


async def test_can_i_upgrade_hashes_a_folder_of_jars(world, browse, tmp_path):
    jars = await seed_tools(world)
    mods = tmp_path / "mods"
    mods.mkdir()
    for name, data in (jars["glowapp"]["0.9.0"], jars["glowlib"]["1.0.0"], jars["oldthing"]["2.0.0"],
                       ("homemade.jar", jar("homemade", "1.0"))):
        (mods / name).write_bytes(data)
    (mods / "notes.txt").write_text("not a jar")
    b = await browse("desktop", width=1280)
    foreign = watch_origins(b, world.base)
    posted: list[str] = []
    b.page.on("request", lambda r: posted.append(r.post_data or "") if r.method == "POST" else None)
    page = b.page
    await page.goto(world.base + "/")
    await page.get_by_role("link", name="Can I upgrade?").click()
    await expect(page.get_by_text("No file leaves your computer.")).to_be_visible()
    await expect(page.get_by_label("SHA-1 hashes of your jars, one a line (up to 500)")).to_be_hidden()
    await page.get_by_label("Upgrade to").select_option(GAME)
    await b.shot("upgrade-empty-1280")
    await page.get_by_label("Your mods folder").set_input_files(str(mods))
    await expect(page.locator("#summary")).to_have_text(f"2 of 4 ready for {GAME}")
    row = page.locator("tr", has_text="glowapp-0.9.0.jar")
    await expect(row).to_contain_text("Glow App 0.9.0")
    await expect(row).to_contain_text("✓ 1.0.0")
    await expect(page.locator("tr", has_text="glowlib-1.0.0.jar")).to_contain_text("✓ 1.1.0")
    old = page.locator("tr", has_text="oldthing-2.0.0.jar")
    await expect(old).to_contain_text("none yet")
    await expect(old).to_contain_text("newest: 2.0.0 for 1.21.1")
    await expect(page.locator("tr", has_text="homemade.jar")).to_contain_text("not on Indexium")
    await b.shot("upgrade-1280")
    # Only hashes were sent: no jar's bytes, not even its name (the rows are labelled in the page).
    assert posted and all("fabric.mod.json" not in p and "PK" not in p and ".jar" not in p for p in posted)
    assert hashlib.sha1(jars["glowapp"]["0.9.0"][1]).hexdigest() in posted[-1]
    phone = await browse("phone", width=375, height=800)
    await phone.page.goto(world.base + "/upgrade")
    await phone.page.get_by_label("Your mods folder").set_input_files(str(mods))
    await expect(phone.page.locator("#summary")).to_have_text(f"2 of 4 ready for {GAME}")
    await phone.shot("upgrade-375")
    assert b.errors == [] and phone.errors == []
    assert foreign == []
