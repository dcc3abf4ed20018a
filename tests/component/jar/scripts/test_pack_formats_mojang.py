"""``pack_formats.py --mojang``, the pack-format table from Mojang's own metadata, run as the docs
say (a subprocess) against a Mojang-shaped server on loopback: piston-meta's manifest, each
version's JSON, and client jars whose version.json is read with Range requests (the server
counts them: a few per jar, never the whole jar)."""

from __future__ import annotations

import asyncio
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest
from aiohttp import web

ROOT = Path(__file__).resolve().parents[4]
SCRIPT = ROOT / "libs/jar/scripts/pack_formats.py"

# Newest first, as Mojang lists them; 18w47b is the first client jar with a version.json.
VERSIONS = [
    ("25w31a", "snapshot", "2025-07-29T12:00:00+00:00",
     {"resource_major": 65, "resource_minor": 1, "data_major": 83, "data_minor": 0}),
    ("1.21", "release", "2024-06-13T08:24:03+00:00", {"resource": 34, "data": 48}),
    ("1.20.1", "release", "2023-06-12T13:25:51+00:00", {"resource": 15, "data": 15}),
    ("1.14", "release", "2019-04-23T14:52:44+00:00", 4),
    ("18w47b", "snapshot", "2018-11-23T10:46:41+00:00", 4),
    ("18w47a", "snapshot", "2018-11-21T12:05:27+00:00", None),  # older: not read at all
]


def _client_jar(vid: str, pack_version) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("version.json", json.dumps({"id": vid, "name": vid, "stable": False, "pack_version": pack_version}))
        for i in range(400):  # a client jar's thousands of classes, some of them
            z.writestr(f"net/minecraft/C{i}.class", bytes(range(256)) * 8)
    return out.getvalue()


@pytest.fixture
async def mojang(tmp_path):
    jars = {}
    for vid, _, _, pv in VERSIONS:
        if pv is not None:
            (tmp_path / f"{vid}.jar").write_bytes(_client_jar(vid, pv))
            jars[vid] = tmp_path / f"{vid}.jar"
    seen: dict[str, list[str]] = {"jar": [], "meta": []}

    async def manifest(request):
        base = f"http://{request.host}"
        seen["meta"].append("manifest")
        return web.json_response({"latest": {}, "versions": [
            {"id": vid, "type": t, "releaseTime": when, "time": when, "url": f"{base}/v1/packages/x/{vid}.json"}
            for vid, t, when, _ in VERSIONS]})

    async def version(request):
        vid = request.match_info["vid"]
        seen["meta"].append(vid)
        return web.json_response({"id": vid, "downloads": {"client": {
            "url": f"http://{request.host}/v1/objects/x/{vid}/client.jar"}}})

    async def client(request):
        seen["jar"].append(request.headers.get("Range", "whole"))
        return web.FileResponse(jars[request.match_info["vid"]])

    app = web.Application()
    app.router.add_get("/mc/game/version_manifest_v2.json", manifest)
    app.router.add_get("/v1/packages/x/{vid}.json", version)
    app.router.add_get("/v1/objects/x/{vid}/client.jar", client)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    yield f"127.0.0.1:{port}", seen
    await runner.cleanup()


async def test_the_table_from_mojangs_metadata(mojang, tmp_path):
    host, seen = mojang
    out = tmp_path / "pack_formats.json"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), "--mojang", f"http://{host}/mc/game/version_manifest_v2.json",
        "--allow-host", host, "--source", "Mojang-shaped test server", "--out", str(out),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
    _, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    table = json.loads(out.read_text())
    assert (table["source"], table["newest"], table["oldest"]) == ("Mojang-shaped test server", "25w31a", "18w47b")
    assert [(r["id"], r["type"], r["resource"], r["data"]) for r in table["versions"]] == [
        ("25w31a", "snapshot", [65, 1], [83, 0]), ("1.21", "release", [34, 0], [48, 0]),
        ("1.20.1", "release", [15, 0], [15, 0]), ("1.14", "release", [4, 0], [4, 0]),
        ("18w47b", "snapshot", [4, 0], [4, 0])]
    assert "18w47a" not in seen["meta"]  # older than the first version.json: never asked for
    assert "whole" not in seen["jar"] and len(seen["jar"]) <= 3 * 5  # Range reads, a few per jar


async def test_hosts_outside_the_allow_list_are_refused(mojang, tmp_path):
    host, seen = mojang
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), "--mojang", f"http://{host}/mc/game/version_manifest_v2.json",
        "--source", "x", "--out", str(tmp_path / "t.json"),  # Mojang's hosts only: loopback refused
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0 and b"not allowed" in err and seen["meta"] == []
    assert not (tmp_path / "t.json").exists()
