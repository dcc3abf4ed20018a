"""Shader packs: Iris/OptiFine (shaders/) and Canvas pipelines; game versions from the release."""

from __future__ import annotations

import pytest

from indexium_jar.gameversions import default_table
from indexium_jar.packs.shaderpack import infer_game_versions

from .packkit import build, mcmeta, read

SHADERS = {"shaders/composite.fsh": "void main(){}", "shaders/lang/en_US.lang": "x=y"}


def test_optional_iris_features_still_load_in_optifine():
    _, _, out = read(build({**SHADERS, "shaders/shaders.properties": "iris.features.optional = SSBO\n"
                                                                     "iris.features.required =\n"}))
    assert out.record.loaders == ("iris", "optifine")


def test_optifine_format_pack_loads_in_both_and_states_no_version():
    names, wanted, out = read(build({**SHADERS, "shaders/shaders.properties": "sun=true\n"}), release_text="v5.1")
    assert wanted == ["shaders/shaders.properties"]
    rec = out.record
    assert (rec.project_type, rec.loaders) == ("shader", ("iris", "optifine"))
    assert rec.game_versions.versions == () and any("not stated" in w for w in rec.warnings)


def test_iris_features_mean_iris_only():
    _, _, out = read(build({**SHADERS, "shaders/shaders.properties": "# x\niris.features.required = SSBO COMPUTE_SHADERS\n"}),
                     release_text="Complementary r5.2 for MC 1.20.1")
    rec = out.record
    assert rec.loaders == ("iris",)
    assert rec.game_versions.versions == ("1.20.1",) and rec.game_versions.inferred
    assert rec.game_versions.source == "release name"


def test_shaders_one_folder_down_and_without_properties():
    names, wanted, out = read(build({"BSL_v8/shaders/final.fsh": "x", "BSL_v8/readme.txt": "r"}))
    assert wanted == [] and out.record.loaders == ("iris", "optifine")
    assert any("inside BSL_v8/" in w for w in out.record.warnings)


def test_canvas_pipeline_is_a_shader_with_pack_format_versions():
    _, wanted, out = read(build({"pack.mcmeta": mcmeta({"pack_format": 8, "description": "Lumi"}),
                                 "assets/lumi/pipelines/lumi.json5": "{}", "assets/lumi/shaders/a.frag": "x"}))
    rec = out.record
    assert wanted == ["pack.mcmeta"] and (rec.project_type, rec.loaders) == ("shader", ("canvas",))
    assert set(rec.game_versions.versions) >= {"1.18", "1.18.1", "1.18.2"} and not rec.game_versions.inferred


def test_core_shaders_inside_a_resource_pack_do_not_make_it_a_shader_pack():
    _, _, out = read(build({"pack.mcmeta": mcmeta({"pack_format": 15}),
                            "assets/minecraft/shaders/core/rendertype_solid.fsh": "x"}))
    assert out.record.project_type == "resourcepack"


@pytest.mark.parametrize(("text", "expected"), [
    ("Complementary Shaders r5.2 (MC 1.20.1)", ("1.20.1",)),
    ("BSL v8.2.09 for Minecraft 1.19.2", ("1.19.2",)),
    ("pack-2.1+1.21.1", ("1.21.1",)),
    ("Release for 1.18.2", ("1.18.2",)),
    ("mc1.20-1.20.2", ("1.20.2", "1.20.1", "1.20")),
    ("MC 1.21.x", ("1.21.11", "1.21.10", "1.21.9", "1.21.8", "1.21.7", "1.21.6", "1.21.5", "1.21.4", "1.21.3", "1.21.2",
                   "1.21.1", "1.21")),
    ("v1.4.2", ()),  # the pack's own version is not a game version
    ("Shaders 2.0", ()),
    ("MC 9.99", ()),  # not a Minecraft release
])
def test_infer_game_versions(text, expected):
    got = infer_game_versions(text, default_table())
    assert got.versions == expected
    assert got.inferred == bool(expected)


def test_onward_and_long_text_is_bounded():
    got = infer_game_versions("works on MC 1.21.9+", default_table())
    assert got.versions[-1] == "1.21.9" and "26.1" in got.versions
    assert infer_game_versions("x" * 10_000 + " MC 1.20.1", default_table()).versions == ()
