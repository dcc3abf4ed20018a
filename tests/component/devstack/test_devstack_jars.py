"""Sample mod jars: real zips with the loaders' metadata, deterministic, sized on demand."""

from __future__ import annotations

import io
import json
import struct
import time
import tomllib
import zipfile
import zlib

import pytest

from indexium_devstack import jars

pytestmark = pytest.mark.component


def _zip(data: bytes) -> zipfile.ZipFile:
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.testzip() is None
    return zf


def _check_png(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append(kind)
        if kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND"
    w, h = struct.unpack(">II", data[16:24])
    assert len(zlib.decompress(idat)) == h * (1 + 4 * w)
    return w, h


def test_fabric_jar():
    data = jars.fabric_jar("lumen", "1.2.0", "Lumen", "Lights caves.", minecraft=">=1.20",
                           authors=("Aurora",))
    zf = _zip(data)
    names = zf.namelist()
    assert names[:2] == ["META-INF/", "META-INF/MANIFEST.MF"]
    mf = zf.read("META-INF/MANIFEST.MF").decode()
    assert mf.startswith("Manifest-Version: 1.0\r\n") and "Implementation-Version: 1.2.0" in mf
    meta = json.loads(zf.read("fabric.mod.json"))
    assert meta["schemaVersion"] == 1 and meta["id"] == "lumen" and meta["version"] == "1.2.0"
    assert meta["name"] == "Lumen" and meta["description"] == "Lights caves."
    assert meta["depends"]["minecraft"] == ">=1.20" and meta["authors"] == ["Aurora"]
    assert _check_png(zf.read(meta["icon"])) == (32, 32)
    assert sum(n.endswith(".class") for n in names) == 8
    assert all(zf.read(n)[:4] == b"\xca\xfe\xba\xbe" for n in names if n.endswith(".class"))
    assert {i.date_time for i in zf.infolist()} == {jars.DATE_TIME}


def test_quilt_forge_neoforge_mcmod_jars():
    q = json.loads(_zip(jars.quilt_jar("copper_circuits", "0.9.0")).read("quilt.mod.json"))
    assert q["quilt_loader"]["id"] == "copper_circuits" and q["quilt_loader"]["version"] == "0.9.0"
    assert {"id": "minecraft", "versions": ">=1.20"} in q["quilt_loader"]["depends"]

    f = tomllib.loads(_zip(jars.forge_jar("quarry", "2.0.1", "Quarry", "Digs.\nFast.",
                                          minecraft=">=1.20.1")).read("META-INF/mods.toml").decode())
    assert f["modLoader"] == "javafml" and f["mods"][0]["modId"] == "quarry"
    assert f["mods"][0]["description"].strip() == "Digs.\nFast."
    deps = {d["modId"]: d for d in f["dependencies"]["quarry"]}
    assert deps["minecraft"]["versionRange"] == "[1.20.1,)" and deps["forge"]["mandatory"] is True

    zf = _zip(jars.neoforge_jar("wayfinder", "5.1.0", description='Maps "with" quotes'))
    n = tomllib.loads(zf.read("META-INF/neoforge.mods.toml").decode())
    assert n["mods"][0]["version"] == "5.1.0"
    assert {d["modId"]: d["type"] for d in n["dependencies"]["wayfinder"]} == {
        "neoforge": "required", "minecraft": "required"}
    assert n["mods"][0]["logoFile"] in zf.namelist()
    legacy = _zip(jars.neoforge_jar("w", legacy_toml=True))
    assert "META-INF/mods.toml" in legacy.namelist()

    m = json.loads(_zip(jars.mcmod_jar("backpacks", "3.4.7", minecraft="1.12.2")).read("mcmod.info"))
    assert m[0]["modid"] == "backpacks" and m[0]["mcversion"] == "1.12.2"


def test_multiloader_jar():
    zf = _zip(jars.multiloader_jar("harvest", "1.4.0+1.21.1", minecraft="1.21.1"))
    names = set(zf.namelist())
    assert {"fabric.mod.json", "quilt.mod.json", "META-INF/mods.toml",
            "META-INF/neoforge.mods.toml"} <= names
    toml = tomllib.loads(zf.read("META-INF/neoforge.mods.toml").decode())
    mc = [d for d in toml["dependencies"]["harvest"] if d["modId"] == "minecraft"][0]
    assert mc["versionRange"] == "[1.21.1]"
    assert json.loads(zf.read("fabric.mod.json"))["depends"]["minecraft"] == "1.21.1"


def test_options_determinism_and_data_descriptors():
    a = jars.fabric_jar("x", "1.0.0", extra_entries=30)
    assert a == jars.fabric_jar("x", "1.0.0", extra_entries=30)
    assert a != jars.fabric_jar("x", "1.0.1", extra_entries=30)
    dd = jars.fabric_jar("x", "1.0.0", data_descriptors=True)
    zf = _zip(dd)
    assert all(i.flag_bits & 0x08 for i in zf.infolist() if not i.is_dir())
    assert not any(i.flag_bits & 0x08 for i in _zip(a).infolist())
    raw = jars.fabric_jar("x", "1.0.0", extra_entries=30, compressible=False)
    assert len(raw) > len(a) * 1.5  # random filler does not deflate
    padded = jars.fabric_jar("x", "1.0.0", pad_bytes=100_000)
    assert len(padded) >= len(jars.fabric_jar("x", "1.0.0")) + 100_000
    no_icon = _zip(jars.fabric_jar("x", "1.0.0", icon_png=False))
    assert "icon" not in json.loads(no_icon.read("fabric.mod.json"))
    assert not any(n.endswith(".png") for n in no_icon.namelist())
    extra = _zip(jars.fabric_jar("x", extra_files={"data/x/readme.txt": b"hi"}))
    assert extra.read("data/x/readme.txt") == b"hi"
    nested_inner = jars.fabric_jar("inner")
    outer = _zip(jars.fabric_jar("outer", nested_jars=[("META-INF/jars/inner.jar", nested_inner)]))
    assert outer.read("META-INF/jars/inner.jar") == nested_inner
    assert json.loads(outer.read("fabric.mod.json"))["jars"] == [{"file": "META-INF/jars/inner.jar"}]


def test_long_manifest_lines_are_wrapped():
    mf = jars.manifest({"Implementation-Title": "A" * 200}).decode()
    assert all(len(line.encode()) <= 72 for line in mf.split("\r\n"))
    unfolded = mf.replace("\r\n ", "")
    assert "Implementation-Title: " + "A" * 200 in unfolded


@pytest.mark.parametrize(
    "size, entries",
    [(10_000, 10), (1_000_000, 1000), (5_000_000, 20_000), (50_000_000, 20_000)],
)
def test_large_jar_exact_size_and_entries(size, entries):
    started = time.monotonic()
    data = jars.large_jar(size, entries)
    elapsed = time.monotonic() - started
    assert len(data) == size
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert len(zf.infolist()) == entries
    assert json.loads(zf.read("fabric.mod.json"))["id"] == "bigmod"
    assert elapsed < 10


def test_large_jar_variants():
    data = jars.large_jar(200_000, 50, loader="neoforge", metadata_last=True)
    zf = zipfile.ZipFile(io.BytesIO(data))
    assert zf.infolist()[-1].filename == "META-INF/neoforge.mods.toml"
    tiny = jars.large_jar(1000, 5000)  # overhead exceeds the size: as small as possible
    assert len(zipfile.ZipFile(io.BytesIO(tiny)).infolist()) == 5000


def test_demo_mods():
    mods = jars.demo_mods()
    assert len(mods) >= 5
    loaders = {loader for m in mods for loader in m.loaders}
    assert {"fabric", "forge", "neoforge", "quilt"} <= loaders
    assert len({v for m in mods for v in m.game_versions}) >= 3
    assert len({m.repo for m in mods}) == len(mods)
    for m in mods:
        assert m.name and m.description.endswith(".") and m.releases
        for rel in m.releases:
            for name, data in rel.assets:
                assert name.endswith(".jar")
                zf = _zip(data)
                assert "META-INF/MANIFEST.MF" in zf.namelist()
                assert {"fabric.mod.json", "quilt.mod.json", "META-INF/mods.toml",
                        "META-INF/neoforge.mods.toml", "mcmod.info"} & set(zf.namelist())
    assert jars.demo_mods()[0].releases[0].assets == mods[0].releases[0].assets


async def test_demo_mods_served_by_fake(gh, http):
    repos = gh.add_demo_mods()
    assert len(repos) == len(jars.demo_mods()) and gh.state.installations
    for repo in repos:
        payload = gh.release_payload(repo.releases[0])
        assert "installation" in payload
        url = payload["release"]["assets"][0]["browser_download_url"]
        async with http.get(url, headers={"Range": "bytes=-22"}) as r:
            assert r.status == 206 and (await r.read())[:4] == b"PK\x05\x06"
