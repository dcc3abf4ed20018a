"""META-INF/mods.toml and META-INF/neoforge.mods.toml quirks, as FML reads them."""

import pytest
from indexium_jar.manifests import forge_toml
from indexium_jar.manifests._common import Jar
from indexium_jar.manifests.lenient_toml import escape_newlines_in_basic_strings, loads_lenient
from indexium_jar.model import ManifestProblem, ModRecord

FORGE = "META-INF/mods.toml"
NEO = "META-INF/neoforge.mods.toml"

HEADER = b'modLoader="javafml"\nloaderVersion="[47,)"\nlicense="MIT"\n'


def parse(data: bytes, path: str = FORGE, manifest=None):
    return forge_toml.parse(data, Jar(manifest=manifest or {}), path)


def one(data: bytes, path: str = FORGE, manifest=None) -> ModRecord:
    (rec,) = parse(data, path, manifest)
    assert isinstance(rec, ModRecord), rec
    return rec


def test_forge_mdk_shape():
    rec = one(HEADER + b'issueTrackerURL="https://github.com/a/b/issues"\n[[mods]]\nmodId="examplemod"\nversion="1.2.3"\n'
              b'displayName="Example Mod"\nauthors="Alice, Bob"\ndisplayURL="https://example.org"\nlogoFile="logo.png"\n'
              b"description='''\nFirst line\nSecond line\n'''\n"
              b'[[dependencies.examplemod]]\nmodId="forge"\nmandatory=true\nversionRange="[47,)"\nordering="NONE"\nside="BOTH"\n'
              b'[[dependencies.examplemod]]\nmodId="minecraft"\nmandatory=true\nversionRange="[1.20.1,1.21)"\nside="BOTH"\n'
              b'[[dependencies.examplemod]]\nmodId="jei"\nmandatory=false\nversionRange="[15,)"\nside="CLIENT"\n')
    assert (rec.loader, rec.mod_id, rec.version, rec.name) == ("forge", "examplemod", "1.2.3", "Example Mod")
    assert rec.description == "First line\nSecond line\n"
    assert [a.name for a in rec.authors] == ["Alice", "Bob"]
    assert rec.links == {"homepage": "https://example.org", "issues": "https://github.com/a/b/issues"}
    assert rec.icon == "logo.png" and rec.licenses == ("MIT",)
    deps = {d.mod_id: d for d in rec.dependencies}
    assert deps["jei"].kind == "optional" and deps["jei"].side == "client"
    assert deps["minecraft"].kind == "required" and deps["minecraft"].version_range == "[1.20.1,1.21)"
    assert rec.game_versions.source == "dependencies.minecraft.versionRange"
    assert rec.game_versions.versions == ("1.20.6", "1.20.5", "1.20.4", "1.20.3", "1.20.2", "1.20.1")
    assert rec.warnings == ()


def test_twilight_forest_raw_newline_in_basic_string_is_repaired():
    data = HEADER + b'[[mods]]\nmodId="twilightforest"\nversion="4.3"\ndescription="An enchanted forest\ndimension." # comment\n'
    rec = one(data)
    assert rec.description == "An enchanted forest\ndimension."
    assert any("raw newline" in w for w in rec.warnings)


def test_repair_leaves_valid_multiline_literals_and_comments_alone():
    text = "a = '''x\ny'''\nb = \"\"\"p\nq\"\"\"\n# \"not\nc = 'lit'\nd = \"esc\\\"aped\nraw\"\n"
    repaired = escape_newlines_in_basic_strings(text)
    doc, notes = loads_lenient(text)
    assert doc == {"a": "x\ny", "b": "p\nq", "c": "lit", "d": 'esc"aped\nraw'} and notes
    assert repaired.count("\\n") == 1


def test_crlf_raw_newline_is_repaired_too():
    rec = one(HEADER.replace(b"\n", b"\r\n") + b'[[mods]]\r\nmodId="abc"\r\nversion="1"\r\ndescription="a\r\nb"\r\n')
    assert rec.description == "a\nb"


def test_hopeless_toml_is_a_problem():
    (p,) = parse(b'[[mods]\nmodId="x"')
    assert isinstance(p, ManifestProblem) and p.code == "invalid_toml"


def test_zero_byte_file_is_an_empty_manifest_problem():
    (p,) = parse(b"")
    assert p.code == "empty_manifest"


def test_two_mods_in_one_file():
    out = parse(HEADER + b'[[mods]]\nmodId="embeddium"\nversion="0.3"\n[[mods]]\nmodId="rubidium"\nversion="0.7"\n'
                b'[[dependencies.embeddium]]\nmodId="minecraft"\nmandatory=true\nversionRange="[1.20.1]"\n')
    assert [r.mod_id for r in out] == ["embeddium", "rubidium"]
    assert out[0].game_versions.versions == ("1.20.1",)
    assert out[1].game_versions.source == "loaderVersion"  # no deps of its own: inferred from Forge 47


@pytest.mark.parametrize(
    ("version", "impl", "expected"),
    [
        ("${file.jarVersion}", "2.3.4", "2.3.4"),
        ("${file.jarVersion}-forge", "2.3.4", "2.3.4-forge"),
        ("mc1.20.1-${file.jarVersion}", "2.3.4", "mc1.20.1-2.3.4"),
        ("${file.jarVersion}", None, "0.0NONE"),
        ("${file.jarVersion}-forge", None, "0.0NONE-forge"),
        ("${file.jarVersion}", "task ':jar' property 'archiveVersion'", "0.0NONE"),  # Gradle leak = missing
    ],
)
def test_file_jar_version_substitution(version, impl, expected):
    manifest = {"Implementation-Version": impl} if impl else {}
    rec = one(HEADER + f'[[mods]]\nmodId="abc"\nversion="{version}"\n'.encode(), manifest=manifest)
    assert rec.version == expected
    assert any("0.0NONE" in w for w in rec.warnings) == (expected.startswith("0.0NONE"))


def test_implementation_version_lookup_is_case_insensitive():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="${file.jarVersion}"\n', manifest={"implementation-version": "9"})
    assert rec.version == "9"


def test_other_version_leaks_warn_and_non_digit_versions_warn():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="${mod_version}"\n')
    assert rec.version == "${mod_version}" and any("${mod_version}" in w for w in rec.warnings)
    assert any("FML would reject" in w for w in rec.warnings)
    assert one(HEADER + b'[[mods]]\nmodId="abc"\n').version == "1"  # FML's default


@pytest.mark.parametrize(("mod_id", "code"), [("${mod_id}", "template_leak"), ("Bad-Id", "invalid_id"), ("a", "invalid_id")])
def test_mod_id_rules(mod_id, code):
    out = parse(HEADER + f'[[mods]]\nmodId="{mod_id}"\nversion="1"\n[[mods]]\nmodId="good.sub_mod"\nversion="1"\n'.encode())
    assert isinstance(out[0], ManifestProblem) and out[0].code == code
    assert isinstance(out[1], ModRecord) and out[1].mod_id == "good.sub_mod"


def test_neoforge_file_and_type_field_upper_cased():
    rec = one(b'loaderVersion="[4,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
              b'[[dependencies.abc]]\nmodId="neoforge"\ntype="REQUIRED"\nversionRange="[21.1.0,)"\n'
              b'[[dependencies.abc]]\nmodId="jei"\ntype="optional"\n'
              b'[[dependencies.abc]]\nmodId="optifine"\ntype="incompatible"\nreason="no"\n'
              b'[[dependencies.abc]]\nmodId="sodium"\ntype="discouraged"\n', NEO)
    assert rec.loader == "neoforge" and rec.manifest_path == NEO
    kinds = {d.mod_id: d.kind for d in rec.dependencies}
    assert kinds == {"neoforge": "required", "jei": "optional", "optifine": "incompatible", "sodium": "incompatible"}
    assert [d.mod_id for d in rec.dependencies if d.warn_only] == ["sodium"]  # DISCOURAGED: a warning only
    # no minecraft dependency: NeoForge 21.1 is Minecraft 1.21.1
    assert rec.game_versions.source == "dependencies.neoforge.versionRange"
    assert rec.game_versions.versions == ("1.21.1",)


def test_neoforge_leftover_mandatory_false_means_required():
    rec = one(b'license="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
              b'[[dependencies.abc]]\nmodId="jei"\nmandatory=false\n', NEO)
    (dep,) = rec.dependencies
    assert dep.kind == "required"
    assert any("mandatory" in w for w in rec.warnings)


def test_forge_mandatory_false_is_optional_and_missing_mandatory_warns():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="1"\n[[dependencies.abc]]\nmodId="jei"\nmandatory=false\n'
              b'[[dependencies.abc]]\nmodId="curios"\n')
    assert [d.kind for d in rec.dependencies] == ["optional", "required"]
    assert any("no boolean 'mandatory'" in w for w in rec.warnings)


def test_side_is_case_sensitive():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="1"\n[[dependencies.abc]]\nmodId="x"\nmandatory=true\nside="client"\n')
    assert rec.dependencies[0].side == "both" and any("invalid side" in w for w in rec.warnings)


def test_dependencies_keyed_by_a_non_mod_id_are_kept_with_a_warning():
    rec = one(HEADER + b'[[mods]]\nmodId="realid"\nversion="1"\n'
              b'[[dependencies.oldid]]\nmodId="minecraft"\nmandatory=true\nversionRange="[1.19.2]"\n')
    assert rec.game_versions.versions == ("1.19.2",)
    assert any("oldid" in w for w in rec.warnings)


def test_mods_toml_for_neoforge_20_4_is_neoforge():
    rec = one(b'loaderVersion="[2,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
              b'[[dependencies.abc]]\nmodId="neoforge"\ntype="required"\nversionRange="[20.4.80-beta,)"\n')
    assert rec.loader == "neoforge" and rec.game_versions.versions == ("1.20.4",)


def test_loader_version_inference_for_forge():
    rec = one(b'loaderVersion="[43,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n')
    assert rec.game_versions.source == "loaderVersion" and rec.game_versions.raw == "[43,)"
    assert rec.game_versions.versions == ("1.19.4", "1.19.3", "1.19.2")
    forge_dep = one(b'license="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
                    b'[[dependencies.abc]]\nmodId="forge"\nmandatory=true\nversionRange="[41.1,)"\n')
    assert forge_dep.game_versions.source == "dependencies.forge.versionRange"
    assert forge_dep.game_versions.versions[-1] == "1.19"


def test_malformed_ranges_give_no_constraint_with_warning():
    # raised-forge: loaderVersion="41,)"; elytratrims: a Fabric predicate in mods.toml
    rec = one(b'loaderVersion="41,)"\nlicense="MIT"\n[[mods]]\nmodId="abc"\nversion="1"\n'
              b'[[dependencies.abc]]\nmodId="minecraft"\nmandatory=true\nversionRange=">=1.20 <=1.20.1"\n')
    assert rec.game_versions.raw == ">=1.20 <=1.20.1" and rec.game_versions.versions == ()
    assert any("no constraint" in w for w in rec.warnings)


def test_bare_version_range_is_a_soft_requirement():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="1"\n'
              b'[[dependencies.abc]]\nmodId="minecraft"\nmandatory=true\nversionRange="1.19.2"\n')
    assert rec.game_versions.versions == ("1.19.2",) and any("soft requirement" in w for w in rec.warnings)


def test_authors_as_an_array_are_accepted():
    rec = one(HEADER + b'[[mods]]\nmodId="abc"\nversion="1"\nauthors=["Alice", "Bob, Carol"]\n')
    assert [a.name for a in rec.authors] == ["Alice", "Bob", "Carol"]


def test_missing_license_warns_and_file_level_logo_is_used():
    rec = one(b'logoFile="pack.png"\n[[mods]]\nmodId="abc"\nversion="1"\n')
    assert rec.icon == "pack.png" and any("license" in w for w in rec.warnings)


def test_no_mods_is_a_problem():
    assert parse(HEADER)[0].code == "no_mods"
    assert parse(HEADER + b"mods = 3\n")[0].code == "no_mods"


@pytest.mark.parametrize("path", [FORGE, NEO])
@pytest.mark.parametrize("extra,top,environment", [
    (b"", b"", "both"),
    (b'displayTest="IGNORE_SERVER_VERSION"\n', b"", "server"),
    (b'displayTest="IGNORE_ALL_VERSION"\n', b"", "both"),
    (b'displayTest="MATCH_VERSION"\n', b"", "both"),
    (b"", b"clientSideOnly=true\n", "client"),
])
def test_environment_from_display_test_and_client_side_only(path, extra, top, environment):
    rec = one(HEADER + top + b'[[mods]]\nmodId="examplemod"\nversion="1.0"\n' + extra, path)
    assert rec.environment == environment
