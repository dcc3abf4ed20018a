"""mcmod.info quirks, as FML's MetadataCollection (lenient Gson, platform charset) reads them."""

from indexium_jar.manifests import mcmod
from indexium_jar.manifests._common import Jar
from indexium_jar.model import Dependency, ManifestProblem, ModRecord


def parse(data: bytes):
    return mcmod.parse(data, Jar())


ARRAY = b'''[{
  "modid": "ironchest", "name": "Iron Chests", "description": "Bigger chests", "version": "7.0.72",
  "mcversion": "1.12.2", "url": "https://example.org/ironchest", "authorList": ["cpw", "progwml6"],
  "logoFile": "logo.png", "requiredMods": ["Forge@[14.23.5.2768,)"], "dependencies": ["jei"]
}]'''


def test_array_root():
    (rec,) = parse(ARRAY)
    assert isinstance(rec, ModRecord)
    assert (rec.loader, rec.manifest_path, rec.mod_id, rec.version) == ("forge", "mcmod.info", "ironchest", "7.0.72")
    assert [a.name for a in rec.authors] == ["cpw", "progwml6"]
    assert rec.links == {"homepage": "https://example.org/ironchest"} and rec.icon == "logo.png"
    assert rec.dependencies == (Dependency(mod_id="Forge", kind="required", version_range="[14.23.5.2768,)"),
                                Dependency(mod_id="jei", kind="optional"))
    assert rec.game_versions.source == "mcmod.info:mcversion" and rec.game_versions.versions == ("1.12.2",)


def test_mod_list_version_2_root():
    (rec,) = parse(b'{"modListVersion": 2, "modList": [{"modid": "buildcraftcore", "version": "7.99"}]}')
    assert rec.mod_id == "buildcraftcore"


def test_buildcraft_like_many_mods_in_one_file():
    ids = ["buildcraftcore", "buildcraftbuilders", "buildcraftenergy", "buildcraftfactory",
           "buildcraftrobotics", "buildcraftsilicon", "buildcrafttransport"]
    body = ",".join('{"modid":"%s","version":"7.1.23","mcversion":"1.7.10"}' % i for i in ids)
    out = parse(("[" + body + "]").encode())
    assert [r.mod_id for r in out] == ids
    assert all(r.game_versions.versions == ("1.7.10",) for r in out)


def test_raw_newline_in_string_is_accepted():
    (rec,) = parse(b'[{"modid":"ChickenChunks","version":"1.3","description":"Keeps chunks\nloaded"}]')
    assert rec.description == "Keeps chunks\nloaded"


def test_cp1252_bytes_are_decoded_not_rejected():
    (rec,) = parse(b'[{"modid":"accents","version":"1","name":"Caf\xe9 \x93Mod\x94"}]')
    assert rec.name == "Caf\u00e9 \u201cMod\u201d"
    assert any("cp1252" in w for w in rec.warnings)


def test_lenient_syntax_accepted_like_lenient_gson():
    (rec,) = parse(b"[{modid: 'lenient', version: '1', // comment\n authorList: ['a',],},]")
    assert rec.mod_id == "lenient"


def test_broken_json_is_a_recorded_problem():
    (p,) = parse(b'[{"modid": "broken", "version": ')
    assert isinstance(p, ManifestProblem) and p.code == "invalid_json"


def test_template_leak_in_modid_is_a_problem_never_an_id():
    # yawp, a NeoForge jar, ships an unexpanded mcmod.info
    out = parse(b'[{"modid":"${mod_id}","name":"${mod_name}","version":"${version}","mcversion":"${mcversion}"}]')
    assert len(out) == 1 and isinstance(out[0], ManifestProblem) and out[0].code == "template_leak"


def test_leaked_version_and_mcversion_warn():
    (rec,) = parse(b'[{"modid":"abc","version":"${version}","mcversion":"${mcversion}"}]')
    assert rec.version == "${version}"
    assert rec.game_versions.raw == "${mcversion}" and rec.game_versions.versions == ()
    assert any("${version}" in w for w in rec.warnings) and any("${mcversion}" in w for w in rec.warnings)


def test_mcversion_conventions():
    (rec,) = parse(b'[{"modid":"twilightforest","version":"3.11","mcversion":"extension \'minecraft\' property \'mcVersion\'"}]')
    assert rec.game_versions.versions == () and rec.warnings
    (rec,) = parse(b'[{"modid":"abc","version":"1","mcversion":"[1.12,1.12.2]"}]')
    assert rec.game_versions.versions == ("1.12.2", "1.12.1", "1.12")
    (rec,) = parse(b'[{"modid":"abc","version":"1"}]')
    assert rec.game_versions.source is None


def test_authors_key_is_used_with_a_warning():
    (rec,) = parse(b'[{"modid":"abc","version":"1","authors":["Alice"]}]')
    assert [a.name for a in rec.authors] == ["Alice"] and any("authorList" in w for w in rec.warnings)


def test_missing_modid_in_one_entry_does_not_drop_the_others():
    out = parse(b'[{"name":"nameless"},{"modid":"good","version":"1"}, 5]')
    assert [type(o).__name__ for o in out] == ["ManifestProblem", "ModRecord", "ManifestProblem"]
    assert out[0].code == "missing_id"


def test_empty_and_odd_roots():
    assert parse(b"[]")[0].code == "no_mods"
    assert parse(b'{"modListVersion": 2}')[0].code == "no_mods"
    (rec,) = parse(b'{"modid":"single","version":"1"}')
    assert rec.mod_id == "single"
