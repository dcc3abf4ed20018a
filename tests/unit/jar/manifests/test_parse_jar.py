"""parse_jar: every manifest of a jar, jar-level facts, nested jars."""

import json

from indexium_jar.manifests import WANTED_NAMES, parse_jar
from indexium_jar.model import Dependency, ParseResult

MANIFEST = b"Manifest-Version: 1.0\r\nImplementation-Version: 1.4.0\r\nFabric-Minecraft-Version: 1.20.1\r\n\r\n"
FABRIC = b'{"schemaVersion":1,"id":"walljump-fabric","version":"1.4.0","depends":{"minecraft":"~1.20"}}'
QUILT = (b'{"schema_version":1,"quilt_loader":{"id":"walljump-quilt","version":"1.4.0",'
         b'"depends":[{"id":"minecraft","versions":">=1.20"}]}}')
FORGE = (b'modLoader="javafml"\nloaderVersion="[47,)"\nlicense="MIT"\n[[mods]]\nmodId="walljump"\nversion="${file.jarVersion}"\n'
         b'[[dependencies.walljump]]\nmodId="minecraft"\nmandatory=true\nversionRange="[1.20.1,1.21)"\n')
NEOFORGE = (b'loaderVersion="[4,)"\nlicense="MIT"\n[[mods]]\nmodId="walljump"\nversion="${file.jarVersion}"\n'
            b'[[dependencies.walljump]]\nmodId="minecraft"\ntype="required"\nversionRange="[1.21.1]"\n')


def test_wanted_names():
    assert WANTED_NAMES == {
        "fabric.mod.json", "quilt.mod.json", "quilt.mod.json5", "META-INF/mods.toml", "META-INF/neoforge.mods.toml",
        "mcmod.info", "META-INF/MANIFEST.MF", "plugin.yml", "paper-plugin.yml", "bungee.yml",
        "velocity-plugin.json", "litemod.json", "META-INF/jarjar/metadata.json",
    }


def test_multi_loader_jar_gives_one_record_per_manifest_with_differing_ids():
    files = {"META-INF/MANIFEST.MF": MANIFEST, "fabric.mod.json": FABRIC, "quilt.mod.json": QUILT, "META-INF/mods.toml": FORGE}
    result = parse_jar(files, list(files))
    assert isinstance(result, ParseResult) and result.problems == ()
    assert [(r.loader, r.mod_id) for r in result.records] == [
        ("fabric", "walljump-fabric"), ("quilt", "walljump-quilt"), ("forge", "walljump")]
    forge = result.records[2]
    assert forge.version == "1.4.0"  # ${file.jarVersion} ← Implementation-Version
    assert forge.game_versions.versions[-1] == "1.20.1"
    assert result.records[0].game_versions.source == "depends.minecraft"  # depends wins over the Loom attribute


def test_both_toml_files_with_a_zero_byte_mods_toml():
    # create_radar: an empty mods.toml next to the real neoforge.mods.toml
    files = {"META-INF/mods.toml": b"", "META-INF/neoforge.mods.toml": NEOFORGE}
    result = parse_jar(files, list(files))
    (rec,) = result.records
    assert rec.loader == "neoforge" and rec.version == "0.0NONE"  # no MANIFEST.MF at all
    assert result.problems == ()
    assert any("is empty" in w for w in rec.warnings)


def test_zero_byte_mods_toml_alone_is_a_problem():
    result = parse_jar({"META-INF/mods.toml": b""}, ["META-INF/mods.toml"])
    assert result.records == () and result.problems[0].code == "empty_manifest"


def test_both_toml_files_with_content_give_forge_and_neoforge_records():
    files = {"META-INF/mods.toml": FORGE, "META-INF/neoforge.mods.toml": NEOFORGE}
    result = parse_jar(files, list(files))
    assert [(r.loader, r.manifest_path) for r in result.records] == [
        ("forge", "META-INF/mods.toml"), ("neoforge", "META-INF/neoforge.mods.toml")]


def test_server_plugin_family_in_one_jar():
    files = {
        "plugin.yml": b"name: ViaVersion\nversion: 4.9.2\nmain: a.Bukkit\napi-version: 1.13\n",
        "bungee.yml": b"name: ViaVersion\nversion: 4.9.2\nmain: a.Bungee\n",
        "velocity-plugin.json": b'{"id":"viaversion","version":"4.9.2","main":"a.Velocity"}',
        "fabric.mod.json": b'{"schemaVersion":1,"id":"viafabric","version":"0.4.12"}',
    }
    result = parse_jar(files, list(files))
    assert [r.loader for r in result.records] == ["fabric", "bukkit", "bungeecord", "velocity"]


def test_nested_jars_from_manifests_jarjar_metadata_and_entry_names():
    jarjar = json.dumps({"jars": [{"identifier": {"group": "io.github.llamalad7", "artifact": "mixinextras-neoforge"},
                                   "version": {"range": "[0.3.5,)", "artifactVersion": "0.3.5"},
                                   "path": "META-INF/jarjar/mixinextras-neoforge-0.3.5.jar", "isObfuscated": False}]})
    files = {
        "fabric.mod.json": b'{"schemaVersion":1,"id":"abc","version":"1","jars":[{"file":"META-INF/jars/declared.jar"}]}',
        "META-INF/neoforge.mods.toml": NEOFORGE,
        "META-INF/jarjar/metadata.json": jarjar.encode(),
    }
    entries = [*files, "META-INF/jars/declared.jar", "META-INF/jars/undeclared.jar", "META-INF/jars/sub/deep.jar",
               "META-INF/jarjar/mixinextras-neoforge-0.3.5.jar", "META-INF/jarjar/other.jar", "x/META-INF/jars/no.jar"]
    fabric, neo = parse_jar(files, entries).records
    assert fabric.nested_jars == ("META-INF/jars/declared.jar", "META-INF/jars/undeclared.jar")
    assert neo.nested_jars == ("META-INF/jarjar/mixinextras-neoforge-0.3.5.jar", "META-INF/jarjar/other.jar")
    assert Dependency("mixinextras-neoforge", "embedded", "[0.3.5,)") in neo.dependencies


def test_broken_jarjar_metadata_is_a_problem():
    files = {"META-INF/neoforge.mods.toml": NEOFORGE, "META-INF/jarjar/metadata.json": b"{oops"}
    result = parse_jar(files, list(files))
    assert len(result.records) == 1 and result.problems[0].manifest_path == "META-INF/jarjar/metadata.json"


def test_fml_library_jars():
    lib = b"Manifest-Version: 1.0\r\nFMLModType: GAMELIBRARY\r\n\r\n"
    result = parse_jar({"META-INF/MANIFEST.MF": lib}, ["META-INF/MANIFEST.MF"])
    assert result.records == () and result.problems[0].code == "library"
    result = parse_jar({"META-INF/MANIFEST.MF": lib.replace(b"GAMELIBRARY", b"LIBRARY"), "META-INF/mods.toml": FORGE}, [])
    (rec,) = result.records
    assert any("FMLModType=LIBRARY" in w for w in rec.warnings)


def test_leftover_mcmod_info_is_dropped_beside_a_toml_but_its_leak_is_recorded():
    files = {"META-INF/neoforge.mods.toml": NEOFORGE, "mcmod.info": b'[{"modid":"${mod_id}","version":"${version}"}]'}
    result = parse_jar(files, list(files))
    assert [r.manifest_path for r in result.records] == ["META-INF/neoforge.mods.toml"]
    assert result.problems[0].code == "template_leak"
    files["mcmod.info"] = b'[{"modid":"walljump","version":"1"}]'
    (rec,) = parse_jar(files, list(files)).records
    assert any("mcmod.info" in w for w in rec.warnings)


def test_no_manifests_at_all():
    assert parse_jar({}, ["a/B.class"]) == ParseResult(records=())


def test_entry_names_default_to_the_fetched_files():
    files = {"fabric.mod.json": FABRIC, "META-INF/jars/x.jar": b""}
    (rec,) = parse_jar(files).records
    assert rec.nested_jars == ("META-INF/jars/x.jar",)
