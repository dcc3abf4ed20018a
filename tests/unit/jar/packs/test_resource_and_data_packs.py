"""Resource and data packs built as zips and read back through the central directory,
mapped through the shipped pack-format table."""

from __future__ import annotations

from indexium_jar.packs import classify

from .packkit import build, mcmeta, read


def test_resource_pack_from_pack_format():
    names, wanted, out = read(build({
        "pack.mcmeta": mcmeta({"pack_format": 15, "description": {"text": "Faithful ", "extra": ["32x"]}}),
        "pack.png": b"\x89PNG", "assets/minecraft/textures/block/stone.png": b"x"}))
    assert wanted == ["pack.mcmeta"]
    rec = out.record
    assert (rec.project_type, rec.loaders, rec.icon, rec.description) == ("resourcepack", ("minecraft",), "pack.png",
                                                                          "Faithful 32x")
    assert rec.game_versions.versions[:2] == ("1.20.1", "1.20") and "1.19.4" not in rec.game_versions.versions
    assert rec.game_versions.source == "pack.mcmeta (resource pack format)" and not rec.game_versions.inferred


def test_resource_pack_with_supported_formats_and_no_icon():
    _, _, out = read(build({"pack.mcmeta": mcmeta({"pack_format": 18, "supported_formats": [18, 34]}),
                            "assets/minecraft/lang/en_us.json": "{}"}))
    got = out.record.game_versions.versions
    assert {"1.20.2", "1.20.4", "1.20.6", "1.21", "1.21.1"} <= set(got) and "1.20.1" not in got
    assert out.record.icon is None


def test_a_pack_with_neither_assets_nor_data_is_a_resource_pack():
    assert classify(["pack.mcmeta", "pack.png"]).format == "resourcepack"


def test_data_pack_uses_the_data_column():
    _, _, out = read(build({"pack.mcmeta": mcmeta({"pack_format": 10, "description": "Tweaks"}),
                            "data/tweaks/functions/load.mcfunction": "say hi"}))
    rec = out.record
    assert (rec.project_type, rec.loaders) == ("datapack", ("datapack",))
    # data format 10 is 1.19-1.19.3; as a resource format 10 never shipped in a release
    assert set(rec.game_versions.versions) >= {"1.19", "1.19.2", "1.19.3"} and "1.19.4" not in rec.game_versions.versions


def test_data_pack_that_also_carries_assets_says_so():
    _, _, out = read(build({"pack.mcmeta": mcmeta({"pack_format": 48}), "data/x/tags/a.json": "{}",
                            "assets/x/lang/en_us.json": "{}"}))
    assert out.record.project_type == "datapack"
    assert any("combined data and resource pack" in w for w in out.record.warnings)
    assert {"1.21.1", "1.21", "1.21-rc1"} <= set(out.record.game_versions.versions)  # data 48


def test_broken_pack_mcmeta_is_a_problem_not_an_exception():
    _, _, out = read(build({"pack.mcmeta": "{ not json", "assets/a": "x"}))
    assert out.record is None and out.problems[0].code == "invalid_json"
