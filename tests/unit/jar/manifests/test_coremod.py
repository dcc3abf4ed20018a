"""1.6–1.12 coremods without mcmod.info (NotEnoughItems-1.7.10's layout), built in the test:
indexed from what they declare to Forge, with the confidence reported as ``inferred``."""

import io
import zipfile

from indexium_devstack import jars
from indexium_jar.metadata import read_source
from indexium_jar.manifests import parse_jar
from indexium_jar.http.remote import DownloadPolicy, MemorySource


def entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist() if not n.endswith("/")}


def test_neimod_info_and_fml_core_plugin_give_a_forge_record_marked_inferred():
    files = entries(jars.coremod_jar())
    assert "mcmod.info" not in files and "neimod.info" in files
    result = parse_jar(files, list(files))
    assert result.problems == () and len(result.records) == 1
    nei = result.records[0]
    assert (nei.loader, nei.mod_id, nei.version, nei.name) == ("forge", "NotEnoughItems", "1.0.5.120",
                                                                 "Not Enough Items")
    assert nei.manifest_path == "neimod.info"
    assert nei.game_versions.versions == ("1.7.10",)
    assert nei.game_versions.inferred and nei.game_versions.source == "neimod.info:mcversion"
    assert "no mcmod.info: read from neimod.info" in nei.warnings[0]
    assert "FMLCorePlugin: codechicken.nei.asm.NEICorePlugin" in nei.warnings[0]


def test_cccmod_info_is_read_the_same_way():
    files = entries(jars.coremod_jar("CodeChickenCore", "1.0.7.47", "CodeChicken Core", info_file="cccmod.info",
                                     core_plugin="codechicken.core.launch.CodeChickenCorePlugin"))
    (record,) = parse_jar(files, list(files)).records
    assert (record.mod_id, record.manifest_path, record.game_versions.inferred) == (
        "CodeChickenCore", "cccmod.info", True)


def test_a_coremod_known_only_by_its_core_plugin_is_indexed_from_manifest_mf():
    files = entries(jars.coremod_jar("FastCraft", "1.25", "FastCraft", info_file=None,
                                     core_plugin="fastcraft.Tweaker"))
    (record,) = parse_jar(files, list(files)).records
    assert record.manifest_path == "META-INF/MANIFEST.MF" and record.loader == "forge"
    assert (record.mod_id, record.version) == ("fastcraft", "1.25")  # Implementation-Title / -Version
    game = record.game_versions
    assert game.inferred and game.source == "META-INF/MANIFEST.MF:FMLCorePlugin" and game.raw == "[1.6,1.13)"
    assert "1.7.10" in game.versions and "1.12.2" in game.versions and "1.13" not in game.versions
    assert any("coremod known only by MANIFEST.MF FMLCorePlugin fastcraft.Tweaker" in w for w in record.warnings)


def test_mcmod_info_wins_over_a_coremod_info_file_and_plain_jars_stay_unindexed():
    files = entries(jars.coremod_jar())
    files["mcmod.info"] = b'[{"modid": "nei", "version": "2.0", "mcversion": "1.7.10"}]'
    (record,) = parse_jar(files, list(files)).records
    assert (record.manifest_path, record.mod_id, record.game_versions.inferred) == ("mcmod.info", "nei", False)
    plain = {"META-INF/MANIFEST.MF": jars.manifest({"Implementation-Version": "1.0"})}
    assert parse_jar(plain, list(plain)).records == ()


async def test_the_reader_fetches_what_a_coremod_declares():
    md = await read_source(MemorySource(jars.coremod_jar(extra_entries=400)), DownloadPolicy(allowed_hosts=frozenset()))
    assert [(r.mod_id, r.manifest_path) for r in md.records] == [("NotEnoughItems", "neimod.info")]
    bare = await read_source(MemorySource(jars.coremod_jar("FastCraft", "1.25", "FastCraft", info_file=None,
                                                           core_plugin="fastcraft.Tweaker", extra_entries=400)),
                             DownloadPolicy(allowed_hosts=frozenset()))
    assert [(r.mod_id, r.manifest_path) for r in bare.records] == [("fastcraft", "META-INF/MANIFEST.MF")]


async def test_a_litemod_file_is_read_for_its_litemod_json():
    md = await read_source(MemorySource(jars.litemod_jar("VoxelMap", "1.9.10", "1.12.2")),
                           DownloadPolicy(allowed_hosts=frozenset()))
    (record,) = md.records
    assert (record.loader, record.mod_id, record.version, record.game_versions.versions) == (
        "liteloader", "VoxelMap", "1.9.10", ("1.12.2",))
