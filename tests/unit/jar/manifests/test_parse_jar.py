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
        "velocity-plugin.json", "META-INF/sponge_plugins.json", "litemod.json", "META-INF/jarjar/metadata.json", "neimod.info", "cccmod.info",
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


# --- two-phase parse: MANIFEST.MF only when a parser needs it --------------------------------

FABRIC_NO_MC = b'{"schemaVersion":1,"id":"walljump-fabric","version":"1.4.0"}'
ALL = ["META-INF/MANIFEST.MF", "fabric.mod.json", "META-INF/mods.toml", "a/B.class"]


def test_a_manifest_that_names_everything_does_not_want_manifest_mf():
    result = parse_jar({"fabric.mod.json": FABRIC}, ALL)
    assert result.wants == () and result.records[0].game_versions.source == "depends.minecraft"


def test_fabric_without_minecraft_wants_manifest_mf_then_uses_loom_attribute():
    first = parse_jar({"fabric.mod.json": FABRIC_NO_MC}, ALL)
    assert first.wants == ("META-INF/MANIFEST.MF",)
    assert first.records[0].game_versions.versions == ()  # provisional
    final = parse_jar({"fabric.mod.json": FABRIC_NO_MC, "META-INF/MANIFEST.MF": MANIFEST}, ALL)
    game = final.records[0].game_versions
    assert final.wants == () and game.versions == ("1.20.1",)
    assert game.source == "MANIFEST.MF:Fabric-Minecraft-Version" and game.inferred


def test_jar_version_token_wants_manifest_mf():
    assert parse_jar({"META-INF/mods.toml": FORGE}, ALL).wants == ("META-INF/MANIFEST.MF",)
    (rec,) = parse_jar({"META-INF/mods.toml": FORGE, "META-INF/MANIFEST.MF": MANIFEST}, ALL).records
    assert rec.version == "1.4.0"
    literal = FORGE.replace(b"${file.jarVersion}", b"2.0")
    # FMLModType on a mods.toml jar is checked only when MANIFEST.MF is read anyway
    assert parse_jar({"META-INF/mods.toml": literal}, ALL).wants == ()


def test_a_jar_without_manifest_mf_is_final_at_once():
    names = ["fabric.mod.json", "META-INF/mods.toml"]
    assert parse_jar({"fabric.mod.json": FABRIC_NO_MC}, names).wants == ()
    assert parse_jar({"META-INF/mods.toml": FORGE}, names).records[0].version == "0.0NONE"


def test_a_jar_without_loader_manifest_wants_manifest_mf_to_say_why():
    result = parse_jar({}, ["META-INF/MANIFEST.MF", "a/B.class"])
    assert result.records == () and result.wants == ("META-INF/MANIFEST.MF",)


def test_entries_to_read():
    from indexium_jar.manifests import entries_to_read

    assert entries_to_read(["fabric.mod.json", "META-INF/MANIFEST.MF", "x.class"]) == (
        ["fabric.mod.json"], ["META-INF/MANIFEST.MF"])
    assert entries_to_read(["META-INF/MANIFEST.MF", "x.class"]) == (["META-INF/MANIFEST.MF"], [])
    assert entries_to_read(["META-INF/neoforge.mods.toml", "META-INF/jarjar/metadata.json"]) == (
        ["META-INF/neoforge.mods.toml", "META-INF/jarjar/metadata.json"], [])


# --- model: jar-level nested jars, inferred game versions, optional versions -----------------


def test_jar_level_nested_jars_even_without_records():
    entries = ["META-INF/jars/a.jar", "META-INF/jarjar/b.jar", "lib/c.jar"]
    assert parse_jar({}, entries).nested_jars == ("META-INF/jars/a.jar", "META-INF/jarjar/b.jar")
    files = {"fabric.mod.json": b'{"schemaVersion":1,"id":"abc","version":"1","jars":[{"file":"x/declared.jar"}]}'}
    result = parse_jar(files, [*files, *entries])
    assert result.nested_jars == ("x/declared.jar", "META-INF/jars/a.jar", "META-INF/jarjar/b.jar")
    assert result.records[0].nested_jars == ("x/declared.jar", "META-INF/jars/a.jar")  # what fabric loads


def test_versions_deduced_from_the_loader_are_flagged_inferred():
    forge = b'loaderVersion="[47,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
    (rec,) = parse_jar({"META-INF/mods.toml": forge}).records
    assert rec.game_versions.inferred and rec.game_versions.source == "loaderVersion"
    (rec,) = parse_jar({"META-INF/mods.toml": FORGE, "META-INF/MANIFEST.MF": MANIFEST}).records
    assert not rec.game_versions.inferred  # declared by the minecraft dependency
    neo = b'loaderVersion="[4,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n[[dependencies.abc]]\nmodId="neoforge"\ntype="required"\nversionRange="[21.1.0,)"\n'
    (rec,) = parse_jar({"META-INF/neoforge.mods.toml": neo}).records
    assert rec.game_versions.inferred and rec.game_versions.versions == ("1.21.1",)


def test_formats_without_a_required_version_give_none():
    import msgspec

    files = {"mcmod.info": b'[{"modid":"abc","name":"A"}]', "bungee.yml": b"name: Proxy\nmain: a.B\n",
             "velocity-plugin.json": b'{"id":"proxy","main":"a.B"}', "litemod.json": b'{"name":"Lite"}'}
    result = parse_jar(files)
    assert [r.version for r in result.records] == [None, None, None, None]
    assert msgspec.to_builtins(result.records[0])["version"] is None  # stored as null, not ""
    (rec,) = parse_jar({"META-INF/mods.toml": b'license="MIT"\n[[mods]]\nmodId="abc"\n'}).records
    assert rec.version == "1"  # FML's default, as the loader sees it
