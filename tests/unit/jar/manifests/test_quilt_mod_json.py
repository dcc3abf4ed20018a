"""quilt.mod.json / quilt.mod.json5 quirks, as quilt-loader reads them."""

from indexium_jar.manifests import parse_jar, quilt
from indexium_jar.manifests._common import Jar
from indexium_jar.model import ManifestProblem, Person


def qmj(body: str, extra: str = "") -> bytes:
    return ('{"schema_version":1,"quilt_loader":{"id":"examplemod","version":"1.0.0"%s}%s}' % (body, extra)).encode()


def parse_one(data: bytes, path: str = "quilt.mod.json"):
    (rec,) = quilt.parse(data, Jar(), path)
    return rec


def test_minimal():
    rec = parse_one(qmj(""))
    assert (rec.loader, rec.mod_id, rec.version, rec.manifest_path) == ("quilt", "examplemod", "1.0.0", "quilt.mod.json")


def test_strict_json_rejects_comments_but_json5_accepts_them():
    data = b'{\n // comment\n "schema_version":1,"quilt_loader":{"id":"examplemod","version":"1.0",},}'
    (p,) = quilt.parse(data, Jar(), "quilt.mod.json")
    assert isinstance(p, ManifestProblem) and p.code == "invalid_json"
    rec = parse_one(data, "quilt.mod.json5")
    assert rec.mod_id == "examplemod" and rec.manifest_path == "quilt.mod.json5"


def test_json5_wins_over_json():
    files = {"quilt.mod.json": qmj(""), "quilt.mod.json5": b"{schema_version:1,quilt_loader:{id:'fivemod',version:'2.0'}}"}
    result = parse_jar(files, list(files))
    (rec,) = result.records
    assert rec.mod_id == "fivemod" and rec.manifest_path == "quilt.mod.json5"
    assert any("quilt.mod.json5 takes precedence" in w for w in rec.warnings)


def test_dependency_forms():
    rec = parse_one(qmj(',"depends":["quilt_base",{"id":"org.quiltmc:qsl","versions":">=6.0"},'
                        '{"id":"modmenu","optional":true,"environment":"client"},'
                        '[{"id":"sodium"},{"id":"embeddium"}]],"breaks":[{"id":"optifine","reason":"no"}]'))
    deps = {d.mod_id: d for d in rec.dependencies}
    assert deps["quilt_base"].kind == "required" and deps["quilt_base"].version_range is None
    assert deps["qsl"].version_range == ">=6.0"  # "group:id" keeps the id
    assert deps["modmenu"].kind == "optional" and deps["modmenu"].side == "client"
    assert deps["sodium"].kind == "optional" and deps["embeddium"].kind == "optional"  # any-of alternatives
    assert deps["optifine"].kind == "incompatible"


def test_versions_any_all_and_arrays():
    rec = parse_one(qmj(',"depends":[{"id":"minecraft","versions":{"all":[">=1.20-","<1.20.2-"]}}]'))
    assert rec.game_versions.source == "quilt_loader.depends.minecraft"
    assert rec.game_versions.raw == '{"all":[">=1.20-","<1.20.2-"]}'
    assert rec.game_versions.versions[:2] == ("1.20.1", "1.20") and "1.20.2" not in rec.game_versions.versions
    rec = parse_one(qmj(',"depends":[{"id":"minecraft","versions":{"any":["=1.19.2","=1.20.1"]}}]'))
    assert rec.game_versions.versions == ("1.20.1", "1.19.2")
    rec = parse_one(qmj(',"depends":[{"id":"minecraft","versions":["=1.19.2","=1.20.1"]}]'))
    assert rec.game_versions.versions == ("1.20.1", "1.19.2")


def test_singular_version_key_imposes_no_constraint():
    # walljump-unofficial writes "version"; quilt-loader only reads "versions"
    rec = parse_one(qmj(',"depends":[{"id":"minecraft","version":">=1.20"}]'))
    (dep,) = rec.dependencies
    assert dep.version_range is None
    assert rec.game_versions.versions == ()
    assert any("'version'" in w for w in rec.warnings)


def test_metadata_contributors_license_icon_contact():
    rec = parse_one(qmj(
        ',"metadata":{"name":"Example","description":"multi\\nline","contributors":{"Haven":"Owner",'
        '"Glitch":["Developer","Artist"]},"license":[{"name":"Terralith License","id":"LicenseRef-Terralith",'
        '"url":"https://x"},"MIT"],"icon":{"32":"a.png","256":"b.png"},"contact":{"homepage":"https://q.org",'
        '"email":"a@b.c"}}'))
    assert rec.name == "Example" and rec.description == "multi\nline"
    assert rec.authors == (Person(name="Haven", role="Owner"), Person(name="Glitch", role="Developer, Artist"))
    assert rec.licenses == ("LicenseRef-Terralith", "MIT")
    assert rec.icon == "b.png" and rec.links == {"homepage": "https://q.org"}
    assert parse_one(qmj(',"metadata":{"license":{"name":"Custom"}}')).licenses == ("Custom",)
    assert parse_one(qmj(',"metadata":{"license":"CC0-1.0"}')).licenses == ("CC0-1.0",)


def test_environment_and_jars():
    rec = parse_one(qmj(',"jars":["META-INF/jars/lib.jar"]', ',"minecraft":{"environment":"dedicated_server"}'))
    assert rec.environment == "server" and rec.nested_jars == ("META-INF/jars/lib.jar",)
    assert parse_one(qmj("", ',"minecraft":{"environment":"client"}')).environment == "client"


def test_problems():
    assert quilt.parse(b'{"schema_version":2,"quilt_loader":{}}', Jar())[0].code == "unsupported_schema"
    assert quilt.parse(b'{"schema_version":1}', Jar())[0].code == "invalid_manifest"
    assert quilt.parse(b'{"schema_version":1,"quilt_loader":{"id":"${mod_id}","version":"1"}}', Jar())[0].code == "template_leak"
    assert quilt.parse(b'{"schema_version":1,"quilt_loader":{"id":"abc"}}', Jar())[0].code == "missing_version"
    rec = parse_one(b'{"schema_version":1,"quilt_loader":{"id":"abc","version":"${version}"}}')
    assert any("${version}" in w for w in rec.warnings)
