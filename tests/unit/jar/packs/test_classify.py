"""The central directory alone tells the kind; archives that are not packs get their own skip."""

from __future__ import annotations

import pytest

from indexium_jar.formats import PACK_FORMATS as FORMATS
from indexium_jar.packs import Archive, classify, entries_to_read, parse_pack

from .packkit import build, read


@pytest.mark.parametrize(("names", "file_name", "expected"), [
    (["modrinth.index.json", "overrides/a"], "p.mrpack", "modpack"),
    (["pack.mcmeta", "assets/a/pipelines/p.json5"], "", "shader-canvas"),
    (["pack.mcmeta", "data/a/x.json"], "", "datapack"),
    (["pack.mcmeta", "assets/a/x.png"], "", "resourcepack"),
    (["shaders/final.fsh"], "", "shader"),
])
def test_formats(names, file_name, expected):
    assert classify(names, file_name).format == expected


@pytest.mark.parametrize(("entries", "file_name", "code"), [
    ({"manifest.json": {"manifestType": "minecraftModpack"}, "overrides/config/a.cfg": "x"}, "pack.zip",
     "curseforge_modpack"),
    ({"src/main/java/a/A.java": "class A {}", "src/main/java/a/B.java": "class B {}"}, "mod-1.0-sources.zip",
     "sources_archive"),
    ({"a/A.java": "class A {}", "a/B.kt": "x", "README": "r"}, "source.zip", "sources_archive"),
    ({"pack.txt": "My 1.5 pack", "terrain.png": b"x"}, "old.zip", "legacy_texture_pack"),
    ({"readme.txt": "hello", "photo.jpg": b"x"}, "stuff.zip", "not_a_pack"),
])
def test_not_packs_have_their_own_skip(entries, file_name, code):
    names, wanted, out = read(build(entries), file_name=file_name)
    assert wanted == [] and out.record is None and out.skip.code == code and out.skip.reason


def test_sources_with_shaders_are_still_sources():
    assert classify(["shaders/a.fsh", "src/A.java"], "mod-sources.zip").skip == "sources_archive"


def test_a_mod_jar_is_not_a_pack():
    assert classify(["fabric.mod.json", "assets/x/icon.png"]).mod
    out = parse_pack({}, Archive(names=["fabric.mod.json"]))
    assert out.problems[0].code == "mod_archive"


def test_entries_not_given_are_a_problem():
    out = parse_pack({}, Archive(names=["pack.mcmeta", "assets/a"]))
    assert out.problems[0].code == "entry_not_read"


def test_every_format_declares_what_the_registry_needs():
    for fmt in FORMATS:
        assert fmt.suffixes and fmt.loaders and fmt.source_paths and fmt.description and callable(fmt.parser)
    assert {f.project_type for f in FORMATS} == {"modpack", "shader", "datapack", "resourcepack"}


def test_classification_reads_no_entry_and_asks_for_small_ones_only():
    assert entries_to_read(["pack.mcmeta", "pack.png", "assets/a.png"]) == ["pack.mcmeta"]
    assert entries_to_read(["modrinth.index.json", "overrides/mods/a.jar"]) == ["modrinth.index.json"]
    assert entries_to_read(["readme.txt"]) == []
