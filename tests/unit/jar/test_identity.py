"""The identity rules (indexium_jar.identity): which project each readable file of a release is."""

from __future__ import annotations

import pytest

from indexium_jar import formats
from indexium_jar.identity import Item, group, mod_key, pack_key, pack_name, same_name

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("mod_id, key", [
    ("mymod", "mymod"), ("mymod-forge", "mymod"), ("mymod_neoforge", "mymod"), ("MyMod.Fabric", "mymod"),
    ("mod-fabricated", "mod-fabricated"), ("forge", "forge"), ("a-forge", "a-forge"), ("mono_alpha", "mono_alpha"),
    ("x" * 200, "x" * 160),
])
def test_a_jars_key_is_its_id_lower_cased_without_a_loader_suffix(mod_id, key):
    assert mod_key(mod_id) == key


@pytest.mark.parametrize("file_name, name", [
    ("Crisp-1.2.zip", "Crisp"), ("Complementary_v4.6.zip", "Complementary"), ("pack-mc1.20-1.0.zip", "pack"),
    ("lamps-rp.zip", "lamps-rp"), ("FastPack-1.0.0.mrpack", "FastPack"), ("nover.zip", "nover"),
])
def test_a_nameless_packs_name_is_its_files_up_to_the_version(file_name, name):
    assert pack_name(file_name) == name


def test_a_packs_key_is_its_type_and_its_own_name_else_its_files():
    assert pack_key(formats.MODPACK, "My  Pack", "x-1.0.mrpack") == "modpack:my pack"
    assert pack_key(formats.RESOURCEPACK, None, "Crisp-1.2.zip") == "resourcepack:crisp"


def test_names_compare_without_case_punctuation_or_loader_words():
    assert same_name("My Mod", "my-mod (NeoForge)") and not same_name("My Mod", "My Mod Compat")


def keys(items):
    return [(g.key, g.indexes) for g in group(items)]


def test_loader_variants_of_one_name_are_one_project_and_other_mods_their_own():
    assert keys([Item(0, "mono_alpha", "Mono Alpha", False), Item(1, "mono_beta", "Mono Beta", False),
                 Item(2, "mono_alpha-forge", "Mono Alpha", False)]) == [("mono_alpha", [0, 2]), ("mono_beta", [1])]


def test_one_id_is_one_project_whatever_the_names():
    assert keys([Item(0, "x", "One", False), Item(1, "x", "Two", False)]) == [("x", [0, 1])]


def test_a_suffixed_id_of_another_name_is_keyed_by_its_full_id():
    assert keys([Item(0, "bridge_forge", "Bridge Compat", False), Item(1, "bridge", "Bridge", False)]) == [
        ("bridge_forge", [0]), ("bridge", [1])]


def test_a_pack_beside_a_mod_of_its_name_is_another_project():
    assert keys([Item(0, "lamps", "Lamps", False), Item(1, "resourcepack:lamps", None, True)]) == [
        ("lamps", [0]), ("resourcepack:lamps", [1])]
