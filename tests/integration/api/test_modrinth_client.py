"""A real launcher library against a real API process over real PostgreSQL data: the unmodified
@xmcl/modrinth npm package (installed from package-lock.json with `npm ci` when node_modules is
missing), configured only with our base URL. Every answer it returns is also validated against
Modrinth's published OpenAPI document."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess

CLIENT_DIR = Path(__file__).parent / "modrinth_client"
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def sha1(n: int) -> str:
    return f"{n:040x}"


@pytest.fixture(scope="module")
def node_client() -> Path:
    """node_modules from the committed lock file (once per clone)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.fail("Node.js and npm are needed to run @xmcl/modrinth (apt-get install nodejs npm)")
    if not (CLIENT_DIR / "node_modules" / "@xmcl" / "modrinth").is_dir():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=CLIENT_DIR, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    return CLIENT_DIR


async def _mod(conn, repo: int, slug: str, name: str, summary: str):
    await mods_q.upsert_author(conn, repo, f"owner{repo}")
    card = mods_q.Card(name=name, summary=summary, description=summary, authors=["Someone"], licenses=["MIT"],
                     links={}, environment="client")
    return await mods_q.create(conn, github_repo_id=repo, repo_full_name=f"owner{repo}/{slug}", owner_id=repo,
                             owner_login=f"owner{repo}", manifest_id=slug, default_branch="main", categories=[],
                             card=card)


_asset = iter(range(1, 10_000))


async def _version(conn, mod, number: str, published: datetime, files: list[tuple[str, str, int]]):
    vid = await versions_q.upsert_version(
        conn, mod_id=mod["id"], version_number=number, github_release_id=next(_asset), tag_name=number,
        name=number, changelog=f"changes in {number}", version_type="release", published_at=published,
        status="public", game_versions=sorted({g for _, g, _ in files}), loaders=sorted({lo for lo, _, _ in files}))
    rows = [versions_q.FileRow(
        github_asset_id=next(_asset), filename=f"{mod['slug']}-{number}-{lo}.jar",
        url=f"https://github.com/o/{mod['slug']}/releases/download/{number}/{lo}.jar", size=100 + n,
        content_type=None, github_digest=None, sidecar_url=None, loaders=[lo], game_versions=[gv],
        manifests=[{"loader": lo, "manifest_path": "x", "mod_id": mod["slug"], "version": number}],
        is_primary=i == 0, download_count=1) for i, (lo, gv, n) in enumerate(files)]
    ids = await versions_q.replace_files(conn, vid, rows)
    for fid, (_, _, n) in zip(ids, files):
        await conn.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                           fid, sha1(n), f"{n:064x}", f"{n:0128x}")
    await mods_q.refresh_rollup(conn, mod["id"])


@pytest.fixture(scope="module")
async def client_db(cloned_database):
    async with cloned_database(f"indexium_xmcl_{os.getpid()}", replace=True) as dsn:
        conn = await connect(dsn)
        api = await _mod(conn, 1, "fabric-api", "Fabric API", "Core hooks")
        await _version(conn, api, "0.90.0", T0, [("fabric", "1.20.1", 50)])
        sodium = await _mod(conn, 2, "sodium", "Sodium", "Fast rendering engine")
        await _version(conn, sodium, "1.0.0", T0, [("fabric", "1.20.1", 1)])
        # 2.0.0 carries a fabric 1.20.1 file and a forge 1.19.2 file: no file is forge + 1.20.1.
        await _version(conn, sodium, "2.0.0", T0 + timedelta(days=2), [("fabric", "1.20.1", 2), ("forge", "1.19.2", 3)])
        # The old line's hotfix, published after 2.0.0: never an update for 2.0.0.
        await _version(conn, sodium, "1.5.0", T0 + timedelta(days=3), [("fabric", "1.20.1", 4)])
        forgey = await _mod(conn, 3, "forgey", "Forgey", "A forge mod")
        await _version(conn, forgey, "3.0", T0, [("forge", "1.20.1", 60)])
        await conn.close()
        yield dsn


@pytest.fixture(scope="module")
def live_api(client_db, tmp_path_factory):
    env = {"DATABASE_URL": client_db, "NATS_URL": f"nats://127.0.0.1:{free_port()}", "INDEXIUM_LOG_LEVEL": "warning"}
    proc = ServiceProcess(BY_NAME["api"], port=free_port(), env=env,
                          log_path=tmp_path_factory.mktemp("api") / "api.log").start()
    try:
        proc.wait_ready(60)
        yield proc.url
    finally:
        code = proc.stop(30)
        assert "unhandled_error" not in proc.log_path.read_text()
        assert code == 0


def drive(node_client: Path, base_url: str) -> dict:
    done = subprocess.run(["node", "drive.mjs", base_url, sha1(2), sha1(1), sha1(3)], cwd=node_client,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout)


def test_xmcl_modrinth_client_works_unchanged(node_client, live_api, modrinth_schema):
    out = drive(node_client, live_api)  # @xmcl/modrinth appends /v2/... to the host itself

    assert [h["slug"] for h in out["search"]["hits"]] == ["sodium"]
    modrinth_schema.check(out["search"], "/search")
    # Forge + 1.20.1 must hold on one file: sodium's forge file is 1.19.2, so only forgey.
    assert [h["slug"] for h in out["searchFacets"]["hits"]] == ["forgey"]

    project = out["project"]
    modrinth_schema.check(project, "/project/{id|slug}")
    assert project["slug"] == "sodium" and out["projectById"] == project
    assert [p["slug"] for p in out["projects"]] == ["sodium", "fabric-api"]
    modrinth_schema.check(out["projects"], "/projects")

    assert [v["version_number"] for v in out["versions"]] == ["2.0.0", "1.5.0", "1.0.0"]
    modrinth_schema.check(out["versions"], "/project/{id|slug}/version")
    assert out["versionsForge120"] == []
    assert out["version"] == out["versions"][0]
    modrinth_schema.check(out["version"], "/version/{id}")
    assert [v["id"] for v in out["versionsById"]] == [out["versions"][0]["id"]]

    assert out["byHash"]["version_number"] == "2.0.0"
    modrinth_schema.check(out["byHash"], "/version_file/{hash}")
    assert {h: v["version_number"] for h, v in out["byHashes"].items()} == {sha1(2): "2.0.0", sha1(3): "2.0.0"}
    modrinth_schema.check(out["byHashes"], "/version_files", "post")

    # Never a downgrade: 2.0.0 stays 2.0.0 although 1.5.0 was published later; 1.0.0 goes to 2.0.0.
    assert {h: v["version_number"] for h, v in out["latest"].items()} == {sha1(1): "2.0.0", sha1(2): "2.0.0"}
    modrinth_schema.check(out["latest"], "/version_files/update", "post")
    assert out["latestAny"][sha1(1)]["version_number"] == "2.0.0"
    assert out["latestOne"]["version_number"] == "2.0.0"
    modrinth_schema.check(out["latestOne"], "/version_file/{hash}/update", "post")

    assert any(g["version"] == "1.20.1" for g in out["gameVersions"])
    modrinth_schema.check(out["gameVersions"], "/tag/game_version")
    assert {"fabric", "forge"} <= {x["name"] for x in out["loaders"]}
    modrinth_schema.check(out["loaders"], "/tag/loader")
