"""Real clients take our pack exports: minecraft-launcher-lib's ``.mrpack`` installer (PyPI,
unmodified) downloads every file from the fake GitHub and checks the sha1 the pack states, and a
TOML parser reads the packwiz export, whose every hash is checked against the jar bytes.

The installer's Minecraft and loader installation needs the internet (Mojang's and the loaders'
servers), so it is skipped with its own ``skipDependenciesInstall`` option; the mods are what we
export. Jars are real Fabric jars (``indexium_devstack.jars``) served by the fake GitHub: each
download goes to the github host's ``browser_download_url`` and is redirected to its CDN host.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import tomllib
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from minecraft_launcher_lib import mrpack

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_devstack.fakegithub import FakeGitHub
from indexium_devstack.jars import fabric_jar
from indexium_platform.settings import load

pytestmark = pytest.mark.integration
GAME = "1.21.4"
T0 = datetime(2025, 6, 1, tzinfo=UTC)
# mod id -> (name, version, fabric.mod.json depends, environment)
MODS = {
    "app": ("App", "1.0.0", {"lib": ">=1.0", "fabricloader": ">=0.16"}, "*"),
    "lib": ("Lib", "1.2.0", {}, "*"),
    "shader": ("Shader", "3.0.0", {}, "client"),
    "backup": ("Backup", "2.0.0", {}, "server"),  # server-only: a client installs no copy
}


async def _publish(gh: FakeGitHub, db) -> dict[str, bytes]:
    """Each mod as a GitHub release with a real jar, and as the indexer would have stored it."""
    jars = {}
    for n, (mod_id, (name, version, depends, env)) in enumerate(MODS.items(), start=1):
        data = fabric_jar(mod_id, version, name, minecraft=GAME, depends=depends, environment=env)
        jars[mod_id] = data
        repo = gh.add_repo("author", mod_id)
        rel = gh.add_release(repo, version, assets=[(f"{mod_id}-{version}.jar", data)])
        asset = rel.asset(f"{mod_id}-{version}.jar")
        await mods_q.upsert_author(db, n, "author")
        card = mods_q.Card(name=name, summary="", description="", authors=["author"], licenses=["MIT"], links={},
                           environment={"*": "both"}.get(env, env))
        mod = await mods_q.create(db, github_repo_id=n, repo_full_name=f"author/{mod_id}", owner_id=n,
                                  owner_login="author", manifest_id=mod_id, default_branch="main", categories=[],
                                  card=card)
        vid = await versions_q.upsert_version(
            db, mod_id=mod["id"], version_number=version, github_release_id=n, tag_name=version, name=version,
            changelog="", version_type="release", published_at=T0, status="public", game_versions=[GAME],
            loaders=["fabric"])
        record = {"loader": "fabric", "mod_id": mod_id, "version": version,
                  "dependencies": [{"mod_id": k, "kind": "required", "version_range": v} for k, v in depends.items()]}
        if env != "*":
            record["environment"] = env
        (fid,) = await versions_q.replace_files(db, vid, [versions_q.FileRow(
            github_asset_id=asset.id, filename=asset.name, url=gh.download_url(asset), size=len(data),
            content_type="application/java-archive", github_digest=f"sha256:{hashlib.sha256(data).hexdigest()}",
            sidecar_url=None, loaders=["fabric"], game_versions=[GAME], manifests=[record], is_primary=True,
            download_count=0, asset_created_at=T0)])
        await db.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1", fid,
                         hashlib.sha1(data).hexdigest(), hashlib.sha256(data).hexdigest(),
                         hashlib.sha512(data).hexdigest())
        await mods_q.refresh_rollup(db, mod["id"])
    return jars


@pytest.fixture
async def stack(database_url, db):
    async with FakeGitHub() as gh:
        jars = await _publish(gh, db)
        env = {"DATABASE_URL": database_url, "NATS_URL": f"nats://127.0.0.1:{free_port()}"}
        client = TestClient(TestServer(create_app(load(Settings, env))))
        await client.start_server()
        try:
            yield gh, client, jars
        finally:
            await client.close()


BODY = {"loader": "fabric", "game_version": GAME, "mods": ["app", "shader", "backup"], "name": "Players' pack"}


async def test_minecraft_launcher_lib_installs_the_exported_mrpack(stack, tmp_path: Path):
    gh, client, jars = stack
    resp = await client.post("/api/v1/packs/export?format=mrpack", json=BODY)
    assert resp.status == 200, await resp.text()
    pack = tmp_path / "pack.mrpack"
    pack.write_bytes(await resp.read())
    info = mrpack.get_mrpack_information(pack)
    assert (info["name"], info["minecraftVersion"], info["formatVersion"]) == ("Players' pack", GAME, 1)
    instance = tmp_path / "instance"
    # The installer is synchronous (requests): in a thread, so the fake GitHub on this loop answers.
    await asyncio.to_thread(mrpack.install_mrpack, pack, tmp_path / "minecraft", instance,
                            mrpack_install_options={"skipDependenciesInstall": True})
    with zipfile.ZipFile(pack) as z:
        index = json.loads(z.read("modrinth.index.json"))
    assert index["dependencies"] == {"minecraft": GAME, "fabric-loader": "0.16.14"}
    stated = {f["path"]: f for f in index["files"]}
    installed = sorted(str(p.relative_to(instance)) for p in instance.rglob("*.jar"))
    # The server-only mod is in the pack for servers, and a client's installer leaves it out.
    assert stated["mods/backup-2.0.0.jar"]["env"] == {"client": "unsupported", "server": "required"}
    assert installed == ["mods/app-1.0.0.jar", "mods/lib-1.2.0.jar", "mods/shader-3.0.0.jar"]
    for path in installed:
        data = (instance / path).read_bytes()
        mod_id = path.removeprefix("mods/").split("-")[0]
        assert data == jars[mod_id]
        assert stated[path]["hashes"] == {"sha1": hashlib.sha1(data).hexdigest(),
                                          "sha512": hashlib.sha512(data).hexdigest()}
        assert stated[path]["fileSize"] == len(data)
        (url,) = stated[path]["downloads"]
        asset = gh.repo(f"author/{mod_id}").releases[0].assets[0]
        assert url == gh.download_url(asset)  # the GitHub asset itself: none of our bytes in between
        assert gh.state.stats_for(asset.id).redirects >= 1  # fetched through the fake GitHub


async def test_the_packwiz_export_hashes_match_the_jars(stack):
    gh, client, jars = stack
    resp = await client.get("/api/v1/packs/export", params=[
        ("format", "packwiz"), ("loader", "fabric"), ("game_version", GAME), ("name", BODY["name"]),
        *[("mod", m) for m in BODY["mods"]]])
    assert resp.status == 200, await resp.text()
    with zipfile.ZipFile(io.BytesIO(await resp.read())) as z:
        files = {n: z.read(n) for n in z.namelist()}
    pack = tomllib.loads(files["pack.toml"].decode())
    assert pack["versions"] == {"minecraft": GAME, "fabric": "0.16.14"}
    assert pack["index"] == {"file": "index.toml", "hash-format": "sha256",
                             "hash": hashlib.sha256(files["index.toml"]).hexdigest()}
    index = tomllib.loads(files["index.toml"].decode())
    assert index["hash-format"] == "sha256"
    assert {e["file"] for e in index["files"]} == {f"mods/{m}.pw.toml" for m in MODS}
    async with aiohttp.ClientSession() as session:
        for entry in index["files"]:
            raw = files[entry["file"]]
            assert entry["metafile"] is True and entry["hash"] == hashlib.sha256(raw).hexdigest()
            meta = tomllib.loads(raw.decode())
            mod_id = entry["file"].removeprefix("mods/").removesuffix(".pw.toml")
            download = meta["download"]
            assert download["hash-format"] == "sha512"
            assert download["hash"] == hashlib.new(download["hash-format"], jars[mod_id]).hexdigest()
            async with session.get(download["url"]) as got:  # through the redirect, to the CDN host
                assert got.status == 200
                assert hashlib.sha512(await got.read()).hexdigest() == download["hash"]
            assert meta["side"] == {"shader": "client", "backup": "server"}.get(mod_id, "both")
