"""Which release assets are mod jars, sidecars, and the version type of a release."""

from __future__ import annotations

import pytest

from indexium_contracts.github import ReleaseAsset
from indexium_github import assets


def asset(name: str, state: str | None = "uploaded") -> ReleaseAsset:
    import msgspec

    return msgspec.convert({"id": abs(hash(name)) % 10**9, "name": name, "size": 1, "state": state,
                            "browser_download_url": f"https://github.com/o/r/releases/download/v1/{name}"},
                           ReleaseAsset)


def test_only_mod_jars_are_read():
    names = ["mod-1.0.jar", "mod-1.0-sources.jar", "mod-1.0-javadoc.jar", "mod-1.0-dev.jar", "mod-1.0-dev-shadow.jar",
             "mod-1.0.jar.sha256", "README.md", "pack-1.0.zip", "mod-forge-1.0.JAR", "mod-api-sources.jar",
             "Pack 2.mrpack", "notes.txt"]
    got = [a.name for a in assets.mod_jars([asset(n) for n in names])]
    assert got == ["mod-1.0.jar", "pack-1.0.zip", "mod-forge-1.0.JAR", "Pack 2.mrpack"]  # packs are read too
    assert [n for n in got if assets.is_jar(n)] == ["mod-1.0.jar", "mod-forge-1.0.JAR"]
    assert assets.mod_jars([asset("x.jar", state="starter")]) == []  # upload not finished


def test_litemod_files_are_mod_files_and_everything_left_out_has_a_reason():
    names = ["VoxelMap-1.12.2.litemod", "mod-1.0.jar", "mod-1.0-sources.jar", "mod-1.0.jar.sha256",
             "VoxelMap-1.12.2.litemod.sha256", "CHANGELOG.md", "pending.jar"]
    listed = [asset(n) for n in names[:-1]] + [asset("pending.jar", state="starter")]
    assert [a.name for a in assets.mod_jars(listed)] == ["VoxelMap-1.12.2.litemod", "mod-1.0.jar"]
    assert [(a.name, code) for a, code, _ in assets.left_out(listed)] == [
        ("mod-1.0-sources.jar", "build_by_product"), ("CHANGELOG.md", "not_a_mod_file"),
        ("pending.jar", "not_uploaded")]  # sidecars are read with their file, not left out
    assert assets.sidecars(listed)["VoxelMap-1.12.2.litemod"].endswith("VoxelMap-1.12.2.litemod.sha256")


def test_sidecar_is_remembered_per_jar():
    found = assets.sidecars([asset("mod-1.0.jar"), asset("mod-1.0.jar.sha256"), asset("other.jar.SHA256")])
    assert found == {"mod-1.0.jar": "https://github.com/o/r/releases/download/v1/mod-1.0.jar.sha256",
                     "other.jar": "https://github.com/o/r/releases/download/v1/other.jar.SHA256"}


@pytest.mark.parametrize(("tag", "prerelease", "expected"), [
    ("v1.0.0", False, "release"), ("v1.0.0-alpha", False, "release"), ("v1.0.0-beta.2", True, "beta"),
    ("v1.0.0-rc1", True, "beta"), ("v1.0.0-alpha.3", True, "alpha"), ("1.0a2", True, "alpha"),
    ("mc1.20-ALPHA", True, "alpha"),
])
def test_version_type(tag, prerelease, expected):
    assert assets.version_type(tag, prerelease) == expected
