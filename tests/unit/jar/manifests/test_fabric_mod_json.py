"""fabric.mod.json quirks, as fabric-loader reads them."""

import pytest
from indexium_jar.manifests import fabric
from indexium_jar.manifests._common import Jar
from indexium_jar.model import ManifestProblem, ModRecord, Person


def parse_one(data: bytes, manifest=None):
    out = fabric.parse(data, Jar(manifest=manifest or {}))
    assert len(out) == 1
    return out[0]


MINIMAL = b'{"schemaVersion": 1, "id": "examplemod", "version": "1.0.0"}'


def test_minimal_v1():
    rec = parse_one(MINIMAL)
    assert isinstance(rec, ModRecord)
    assert (rec.loader, rec.manifest_path, rec.mod_id, rec.version) == ("fabric", "fabric.mod.json", "examplemod", "1.0.0")
    assert rec.environment == "both" and rec.warnings == ()


def test_bom_is_skipped():
    rec = parse_one(b"\xef\xbb\xbf" + MINIMAL)
    assert rec.mod_id == "examplemod" and rec.warnings == ()


def test_raw_newline_and_tab_inside_strings_are_accepted():
    # cccbridge / make_bubbles_pop: a literal newline inside a JSON string
    rec = parse_one(b'{"schemaVersion":1,"id":"cccbridge","version":"1.0","description":"line one\nline\ttwo"}')
    assert rec.description == "line one\nline\ttwo"


def test_invalid_utf8_is_replaced_with_a_warning():
    rec = parse_one(b'{"schemaVersion":1,"id":"rpmtw","version":"1.0","name":"caf\xe9 mod"}')
    assert rec.name == "caf\ufffd mod"
    assert any("UTF-8" in w for w in rec.warnings)


@pytest.mark.parametrize(
    "data",
    [
        b'{"schemaVersion":1,"id":"x1","version":"1.0", // comment\n}',
        b'{"schemaVersion":1,"id":"x1","version":"1.0",}',
        b"{'schemaVersion':1,'id':'x1','version':'1.0'}",
        b'{"schemaVersion":1,"id":"x1","version":"1.0","n":NaN}',
        b"",
    ],
)
def test_lenient_json_is_rejected_like_the_loader(data):
    (out,) = fabric.parse(data, Jar())
    assert isinstance(out, ManifestProblem) and out.code == "invalid_json"


def test_schema_version_need_not_come_first_and_absent_means_v0():
    rec = parse_one(b'{"id":"later","version":"1.0","schemaVersion":1,"environment":"client"}')
    assert rec.environment == "client"
    v0 = parse_one(b'{"id":"oldmod","version":"0.1","side":"server","requires":{"fabric":"*"}}')
    assert v0.environment == "server"
    assert v0.dependencies[0].mod_id == "fabric" and v0.dependencies[0].kind == "required"


def test_schema_0_people_links_and_dependencies():
    rec = parse_one(
        b'{"id":"oldmod","version":"0.1","authors":["Jane Doe <jane@example.org> (https://jane.example.org)"],'
        b'"links":"https://example.org","recommends":{"modmenu":"*"},"conflicts":{"optifine":"*"},'
        b'"requires":{"minecraft":"1.14.x"}}'
    )
    assert rec.authors == (Person(name="Jane Doe", contact={"email": "jane@example.org", "website": "https://jane.example.org"}),)
    assert rec.links == {"homepage": "https://example.org"}
    kinds = {d.mod_id: d.kind for d in rec.dependencies}
    assert kinds == {"minecraft": "required", "modmenu": "optional", "optifine": "incompatible"}
    assert rec.game_versions.source == "requires.minecraft" and "1.14.4" in rec.game_versions.versions


def test_unsupported_schema_and_bad_schema_type():
    (p,) = fabric.parse(b'{"schemaVersion":2,"id":"abc","version":"1"}', Jar())
    assert p.code == "unsupported_schema"
    (p,) = fabric.parse(b'{"schemaVersion":"1","id":"abc","version":"1"}', Jar())
    assert p.code == "invalid_manifest"


@pytest.mark.parametrize(("mod_id", "code"), [
    ("A", "invalid_id"), ("Bad_Mod", "invalid_id"), ("x", "invalid_id"), ("${mod_id}", "template_leak"),
    ("@MOD_ID@", "template_leak"), (None, "missing_id"), (5, "missing_id"),
])
def test_id_rules(mod_id, code):
    import json

    (p,) = fabric.parse(json.dumps({"schemaVersion": 1, "id": mod_id, "version": "1"}).encode(), Jar())
    assert isinstance(p, ManifestProblem) and p.code == code


def test_missing_version_is_a_problem_and_leaked_version_a_warning():
    (p,) = fabric.parse(b'{"schemaVersion":1,"id":"abc"}', Jar())
    assert p.code == "missing_version"
    rec = parse_one(b'{"schemaVersion":1,"id":"abc","version":"${version}"}')
    assert rec.version == "${version}" and any("${version}" in w for w in rec.warnings)
    rec = parse_one(b'{"schemaVersion":1,"id":"abc","version":"@VERSION@"}')
    assert any("@VERSION@" in w for w in rec.warnings)


def test_authors_as_strings_or_objects_and_contributors():
    rec = parse_one(
        b'{"schemaVersion":1,"id":"abc","version":"1","authors":["Alice",{"name":"Bob","contact":'
        b'{"homepage":"https://bob.dev","email":"bob@x.org"}}],"contributors":["Carol"]}'
    )
    assert rec.authors == (
        Person(name="Alice"),
        Person(name="Bob", contact={"homepage": "https://bob.dev", "email": "bob@x.org"}),
        Person(name="Carol", role="contributor"),
    )


def test_license_string_or_array_and_contact_links():
    rec = parse_one(
        b'{"schemaVersion":1,"id":"abc","version":"1","license":["MIT","Apache-2.0"],"contact":'
        b'{"homepage":"https://a.org","sources":"https://github.com/a/b","email":"a@b.c","irc":"irc://x","issues":"not a url"}}'
    )
    assert rec.licenses == ("MIT", "Apache-2.0")
    assert rec.links == {"homepage": "https://a.org", "sources": "https://github.com/a/b"}
    assert parse_one(b'{"schemaVersion":1,"id":"abc","version":"1","license":"MIT"}').licenses == ("MIT",)


def test_icon_string_or_size_map_picks_largest():
    assert parse_one(b'{"schemaVersion":1,"id":"abc","version":"1","icon":"assets/abc/icon.png"}').icon == "assets/abc/icon.png"
    rec = parse_one(b'{"schemaVersion":1,"id":"abc","version":"1","icon":{"16":"s.png","128":"l.png","64":"m.png"}}')
    assert rec.icon == "l.png"


@pytest.mark.parametrize(("env", "expected"), [("*", "both"), ("", "both"), ("client", "client"), ("SERVER", "server")])
def test_environment(env, expected):
    import json

    rec = parse_one(json.dumps({"schemaVersion": 1, "id": "abc", "version": "1", "environment": env}).encode())
    assert rec.environment == expected


def test_dependencies_with_string_or_array_predicates():
    rec = parse_one(
        b'{"schemaVersion":1,"id":"abc","version":"1","depends":{"minecraft":["1.20","1.20.1"],"fabricloader":">=0.14"},'
        b'"recommends":{"modmenu":"*"},"suggests":{"emi":"*"},"conflicts":{"sodium":"<0.5"},"breaks":{"optifabric":"*"}}'
    )
    by_id = {d.mod_id: d for d in rec.dependencies}
    assert by_id["minecraft"].version_range == '["1.20","1.20.1"]'
    assert by_id["fabricloader"].kind == "required" and by_id["fabricloader"].version_range == ">=0.14"
    assert (by_id["modmenu"].kind, by_id["emi"].kind) == ("optional", "optional")
    assert (by_id["sodium"].kind, by_id["optifabric"].kind) == ("incompatible", "incompatible")
    # conflicts, recommends, suggests: fabric-loader only warns; breaks and depends stop the game
    assert [d.mod_id for d in rec.dependencies if d.warn_only] == ["modmenu", "emi", "sodium"]
    assert rec.game_versions.raw == '["1.20","1.20.1"]'
    assert rec.game_versions.versions == ("1.20.1", "1.20")


def test_game_versions_from_depends_minecraft():
    rec = parse_one(b'{"schemaVersion":1,"id":"abc","version":"1","depends":{"minecraft":">=1.20 <1.21"}}')
    assert rec.game_versions.source == "depends.minecraft" and rec.game_versions.raw == ">=1.20 <1.21"
    assert "1.20.4" in rec.game_versions.versions and "1.21" not in rec.game_versions.versions


def test_game_versions_fall_back_to_loom_manifest_attribute():
    rec = parse_one(MINIMAL, manifest={"Fabric-Minecraft-Version": "1.20.1"})
    assert rec.game_versions.source == "MANIFEST.MF:Fabric-Minecraft-Version"
    assert rec.game_versions.versions == ("1.20.1",)
    assert parse_one(MINIMAL).game_versions.source is None


def test_nested_jars():
    rec = parse_one(
        b'{"schemaVersion":1,"id":"fabric-api","version":"0.91.2+1.20.4","jars":[{"file":"META-INF/jars/a.jar"},'
        b'{"file":"META-INF/jars/b.jar"},{"nofile":1}]}'
    )
    assert rec.nested_jars == ("META-INF/jars/a.jar", "META-INF/jars/b.jar")
    assert any("jars entry" in w for w in rec.warnings)


def test_wrong_types_in_optional_fields_are_tolerated():
    rec = parse_one(b'{"schemaVersion":1,"id":"abc","version":"1","name":5,"authors":"x","depends":[],"icon":7}')
    assert rec.name is None and rec.authors == () and rec.icon is None
    assert any("depends" in w for w in rec.warnings)


def test_contact_links_pass_the_one_url_policy():
    # The manifest links limit of before (http(s) with a host) took each of these.
    rec = parse_one(
        b'{"schemaVersion":1,"id":"abc","version":"1","contact":{"homepage":"https://user:pw@a.org/",'
        b'"issues":"https://a.org/\\"onmouseover=\\"alert(1)","sources":"https:\\\\\\\\evil.example",'
        b'"wiki":"http://a.org/wiki","<b>":"https://a.org","Discord":"  https://discord.gg/x  "}}'
    )
    assert rec.links == {"wiki": "http://a.org/wiki", "discord": "https://discord.gg/x"}
