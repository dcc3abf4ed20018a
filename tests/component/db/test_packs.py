"""0023_project_types: a project's type, a pack file's record and a modpack's files on a real PostgreSQL."""

from datetime import UTC, datetime

from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_jar import formats

from .test_migrations_and_queries import CARD, make_mod

SHA1, SHA512 = "a" * 40, "b" * 128


def _file(asset_id, **kw):
    return versions_q.FileRow(github_asset_id=asset_id, filename=f"p{asset_id}.mrpack", url=f"https://x/p{asset_id}",
                              size=10, content_type=None, github_digest=None, sidecar_url=None, loaders=["fabric"],
                              game_versions=["1.20.1"], manifests=[], is_primary=True, download_count=0, **kw)


async def _version(db, mod_id, number="1.0", inferred=False):
    vid, _, _ = await versions_q.save_version(
        db, mod_id=mod_id, version_number=number, github_release_id=1, tag_name=number, name=number, changelog="",
        version_type="release", published_at=datetime.now(UTC), status="public", game_versions=["1.20.1"],
        loaders=["fabric"], game_versions_inferred=inferred)
    return vid


async def test_project_type_defaults_to_mod_and_is_set(db):
    mod = await make_mod(db)
    assert await db.fetchval("SELECT project_type FROM mods WHERE id = $1", mod["id"]) == formats.MOD
    await mods_q.set_project_type(db, mod["id"], formats.MODPACK)
    assert await db.fetchval("SELECT project_type FROM mods WHERE id = $1", mod["id"]) == formats.MODPACK
    await mods_q.upsert_author(db, 999, "packer")
    pack = await mods_q.create(db, github_repo_id=9, repo_full_name="packer/rp", owner_id=999, owner_login="packer",
                               manifest_id="rp", default_branch="main", categories=[], card=CARD,
                               project_type=formats.RESOURCEPACK)
    assert await db.fetchval("SELECT project_type FROM mods WHERE id = $1", pack["id"]) == formats.RESOURCEPACK


async def test_a_modpacks_files_are_stored_and_replaced_whole(db):
    mod = await make_mod(db)
    vid = await _version(db, mod["id"], inferred=True)
    files = [versions_q.PackFileRow(path="mods/a.jar", sha1=SHA1, sha512=SHA512,
                                    downloads=["https://github.com/o/r/releases/download/1/a.jar"], file_size=3,
                                    env_client="required", env_server="optional"),
             versions_q.PackFileRow(path="mods/b.jar", sha1="c" * 40, sha512="d" * 128, downloads=["https://x/b"])]
    (fid,) = await versions_q.replace_files(db, vid, [_file(1, project_type=formats.MODPACK, pack={"loaders": ["fabric"]},
                                                              pack_files=files)])
    rows = await versions_q.pack_files(db, fid)
    assert [(r["path"], r["sha1"], r["downloads"], r["env_client"]) for r in rows] == [
        ("mods/a.jar", SHA1, ["https://github.com/o/r/releases/download/1/a.jar"], "required"),
        ("mods/b.jar", "c" * 40, ["https://x/b"], None)]
    stored = await db.fetchrow("SELECT project_type, pack, game_versions_inferred FROM version_files WHERE id = $1", fid)
    assert stored["project_type"] == formats.MODPACK and stored["pack"] == {"loaders": ["fabric"]}
    assert await db.fetchval("SELECT game_versions_inferred FROM mod_versions WHERE id = $1", vid) is True
    await versions_q.replace_files(db, vid, [_file(1, project_type=formats.MODPACK, pack={}, pack_files=files[:1])])
    assert [r["path"] for r in await versions_q.pack_files(db, fid)] == ["mods/a.jar"]


async def test_related_slugs_name_the_packs_of_a_mod_and_the_mods_of_a_pack_whatever_their_state(db):
    from indexium_db.queries import site as site_q  # noqa: PLC0415

    mods = {}
    for i, name in enumerate(("lumen", "other", "bystander", "fastpack", "slowpack"), start=1):
        mods[name] = await make_mod(db, repo_id=i, manifest_id=name)
    sha = {n: f"{i:0128x}" for i, n in enumerate(("lumen", "other", "bystander"), start=1)}
    for name in ("lumen", "other", "bystander"):
        vid = await _version(db, mods[name]["id"])
        fid, = await versions_q.replace_files(db, vid, [_file(1)])
        await db.execute("UPDATE version_files SET sha512 = $2 WHERE id = $1", fid, sha[name])
    for pack, holds, status in (("fastpack", ("lumen", "other"), "public"), ("slowpack", ("lumen",), "quarantined")):
        vid = await _version(db, mods[pack]["id"])
        await db.execute("UPDATE mod_versions SET status = $2 WHERE id = $1", vid, status)
        await versions_q.replace_files(db, vid, [_file(2, project_type=formats.MODPACK, pack={}, pack_files=[
            versions_q.PackFileRow(path=f"mods/{h}.jar", sha1=SHA1, sha512=sha[h], downloads=["https://x/y"])
            for h in holds])])
    slugs = {n: m["slug"] for n, m in mods.items()}
    # A held pack version still relates (its state may change): invalidation over-approximates.
    assert await site_q.related_slugs(db, slugs["lumen"]) == sorted([slugs["fastpack"], slugs["slowpack"]])
    assert await site_q.related_slugs(db, slugs["fastpack"]) == sorted([slugs["lumen"], slugs["other"]])
    assert await site_q.related_slugs(db, slugs["bystander"]) == []
    assert await site_q.related_slugs(db, "no-such-project") == []
    assert len(await site_q.related_slugs(db, slugs["lumen"], limit=1)) == 1
