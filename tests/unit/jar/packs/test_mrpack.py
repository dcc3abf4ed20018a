"""Modrinth modpacks (.mrpack): modrinth.index.json validated and bounded, read from a zip."""

from __future__ import annotations

import copy

import pytest

from indexium_jar.packs import mrpack

from .packkit import build, read

SHA1 = "a" * 40
SHA512 = "b" * 128


def index(**over):
    doc = {
        "formatVersion": 1, "game": "minecraft", "versionId": "1.4.0", "name": "Fabulously Optimized",
        "summary": "Fast and pretty", "dependencies": {"minecraft": "1.20.1", "fabric-loader": "0.15.11"},
        "files": [
            {"path": "mods/sodium.jar", "hashes": {"sha1": SHA1, "sha512": SHA512}, "env": {"client": "required",
             "server": "unsupported"}, "downloads": ["https://cdn.modrinth.com/data/AANobbMI/sodium.jar"],
             "fileSize": 1000},
            {"path": "mods/lib.jar", "hashes": {"sha1": SHA1.upper(), "sha512": SHA512},
             "downloads": ["https://github.com/o/r/releases/download/v1/lib.jar"]},
        ],
    }
    doc.update(over)
    return doc


def parse(doc, extra=None):
    return read(build({"modrinth.index.json": doc, **(extra or {})}), file_name="pack.mrpack")


def test_a_modpack():
    names, wanted, out = parse(index(), {"overrides/config/sodium.json": "{}", "overrides/mods/custom.jar": b"PK",
                                         "client-overrides/mods/zoom.jar": b"PK"})
    assert wanted == ["modrinth.index.json"]
    rec = out.record
    assert (rec.project_type, rec.loaders, rec.name, rec.version, rec.description) == (
        "modpack", ("fabric",), "Fabulously Optimized", "1.4.0", "Fast and pretty")
    assert rec.game_versions.versions == ("1.20.1",) and rec.game_versions.source == "dependencies.minecraft"
    assert [f.path for f in rec.files] == ["mods/sodium.jar", "mods/lib.jar"]
    first = rec.files[0]
    assert (first.env_client, first.env_server, first.file_size) == ("required", "unsupported", 1000)
    assert rec.files[1].hashes["sha1"] == SHA1  # lower-cased
    assert rec.nested_jars == ("overrides/mods/custom.jar", "client-overrides/mods/zoom.jar")
    assert rec.held_for_review == ()


@pytest.mark.parametrize(("dep", "loader"), [("quilt-loader", "quilt"), ("forge", "forge"), ("neoforge", "neoforge")])
def test_loader_names_follow_modrinth(dep, loader):
    rec = parse(index(dependencies={"minecraft": "1.21.1", dep: "1"}))[2].record
    assert rec.loaders == (loader,)


def test_downloads_outside_modrinths_hosts_hold_the_pack_for_review():
    doc = index()
    doc["files"][1]["downloads"] = ["https://evil.example/lib.jar", "http://github.com/x.jar",
                                    "https://cdn.modrinth.com/data/x.jar"]
    rec = parse(doc)[2].record
    assert rec.files[0].off_host_downloads == ()
    assert rec.files[1].off_host_downloads == ("https://evil.example/lib.jar", "http://github.com/x.jar")
    assert rec.held_for_review and "1 of 2 files" in rec.held_for_review[0] and "evil.example" in rec.held_for_review[0]


@pytest.mark.parametrize("path", ["../escape.jar", "mods/../../x", "/etc/passwd", "C:/x.jar", "mods\\x.jar",
                                  "mods//x.jar", "", "./mods/x.jar", 7])
def test_path_traversal_is_a_problem(path):
    doc = index()
    doc["files"][0]["path"] = path
    out = parse(doc)[2]
    assert out.record is None and out.problems[0].code == "path_traversal"


def test_file_count_is_capped():
    doc = index()
    doc["files"] = [copy.deepcopy(doc["files"][0]) for _ in range(mrpack.MAX_FILES + 1)]
    out = parse(doc)[2]
    assert out.record is None and out.problems[0].code == "too_many_files"


def test_unusable_entries_are_skipped_with_a_note():
    doc = index()
    doc["files"] += [{"path": "mods/nohash.jar", "downloads": ["https://cdn.modrinth.com/a"]},
                     {"path": "mods/badhash.jar", "hashes": {"sha1": "zz", "sha512": SHA512}, "downloads": ["x"]},
                     {"path": "mods/nodl.jar", "hashes": {"sha1": SHA1, "sha512": SHA512}, "downloads": []},
                     "not an object"]
    rec = parse(doc)[2].record
    assert len(rec.files) == 2 and sum("skipped" in w for w in rec.warnings) == 4


@pytest.mark.parametrize(("over", "code"), [
    ({"formatVersion": 2}, "unsupported_format_version"),
    ({"game": "terraria"}, "not_minecraft"),
    ({"files": {"a": 1}}, "invalid_manifest"),
])
def test_manifest_level_problems(over, code):
    out = parse(index(**over))[2]
    assert out.record is None and code in [p.code for p in out.problems]


def test_missing_game_version_and_loader_are_notes():
    rec = parse(index(dependencies={"minecraft": "0.0-fake", "somethingelse": "1"}))[2].record
    assert rec.game_versions.raw == "0.0-fake" and rec.game_versions.versions == () and rec.loaders == ()
    assert any("not in the versions table" in w for w in rec.warnings)
    assert any("unknown dependencies ignored: somethingelse" in w for w in rec.warnings)
    assert any("vanilla pack" in w for w in rec.warnings)


def test_not_json_is_a_problem():
    out = read(build({"modrinth.index.json": "nope"}))[2]
    assert out.problems[0].code == "invalid_json"


def test_notes_about_single_files_are_bounded():
    doc = index()
    doc["files"] += [{"path": f"mods/x{i}.jar", "downloads": ["https://cdn.modrinth.com/a"]} for i in range(100)]
    rec = parse(doc)[2].record
    assert sum("skipped" in w for w in rec.warnings) == mrpack.MAX_NOTES + 1
    assert any("80 more unusable files skipped" in w for w in rec.warnings)
