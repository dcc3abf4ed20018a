"""plugin.yml, paper-plugin.yml, bungee.yml and velocity-plugin.json."""

from indexium_jar.manifests import plugins
from indexium_jar.manifests._common import Jar
from indexium_jar.model import Dependency, ManifestProblem, ModRecord


def one(out):
    (rec,) = out
    return rec


def test_plugin_yml_float_looking_version_keeps_its_text():
    rec = one(plugins.parse_bukkit(b"name: MyPlugin\nversion: 1.20\nmain: a.b.Main\napi-version: 1.13\n", Jar()))
    assert isinstance(rec, ModRecord)
    assert rec.version == "1.20"  # SafeLoader would say 1.2
    assert (rec.loader, rec.mod_id, rec.environment) == ("bukkit", "MyPlugin", "server")
    assert rec.game_versions.source == "api-version" and rec.game_versions.raw == "1.13"
    assert rec.game_versions.versions[-1] == "1.13" and "1.21.10" in rec.game_versions.versions  # a minimum
    assert one(plugins.parse_bukkit(b"name: P\nversion: 1.10\nmain: M\n", Jar())).version == "1.10"
    odd = one(plugins.parse_bukkit(b"name: P\nversion: 1\nmain: M\napi-version: latest\n", Jar()))
    assert odd.game_versions.versions == () and any("no constraint" in w for w in odd.warnings)


def test_plugin_yml_fields():
    rec = one(plugins.parse_bukkit(
        b"name: Essentials\nversion: '2.20.1'\nmain: com.earth2me.essentials.Essentials\nauthor: zenexer\n"
        b"authors: [ementalo, snowleo]\ndescription: Essentials\nwebsite: https://essentialsx.net\n"
        b"depend: [Vault]\nsoftdepend: [LuckPerms, WorldGuard]\napi-version: '1.20.5'\n", Jar()))
    assert [a.name for a in rec.authors] == ["zenexer", "ementalo", "snowleo"]
    assert rec.links == {"homepage": "https://essentialsx.net"}
    assert rec.dependencies == (Dependency("Vault", "required", side="server"),
                                Dependency("LuckPerms", "optional", side="server"),
                                Dependency("WorldGuard", "optional", side="server"))
    assert rec.game_versions.versions[-1] == "1.20.5"


def test_plugin_yml_problems():
    assert plugins.parse_bukkit(b"name: [unclosed\n", Jar())[0].code == "invalid_yaml"
    assert plugins.parse_bukkit(b"- a\n- b\n", Jar())[0].code == "invalid_manifest"
    assert plugins.parse_bukkit(b"version: 1\nmain: M\n", Jar())[0].code == "missing_id"
    assert plugins.parse_bukkit(b"name: P\nmain: M\n", Jar())[0].code == "missing_version"
    assert plugins.parse_bukkit(b"name: ${project.name}\nversion: 1\nmain: M\n", Jar())[0].code == "template_leak"
    rec = one(plugins.parse_bukkit(b"name: P\nversion: ${project.version}\n", Jar()))
    assert any("${project.version}" in w for w in rec.warnings) and any("main" in w for w in rec.warnings)


def test_paper_plugin_yml():
    rec = one(plugins.parse_bukkit(
        b"name: PaperThing\nversion: 1.0\nmain: a.Main\nbootstrapper: a.Boot\nloader: a.Loader\napi-version: '1.20'\n"
        b"dependencies:\n  server:\n    Vault:\n      load: BEFORE\n      required: false\n"
        b"    ProtocolLib:\n      load: BEFORE\n  bootstrap:\n    Lib:\n      required: true\n", Jar(), "paper-plugin.yml"))
    assert rec.loader == "paper" and rec.manifest_path == "paper-plugin.yml"
    assert {d.mod_id: d.kind for d in rec.dependencies} == {"Vault": "optional", "ProtocolLib": "required", "Lib": "required"}


def test_bungee_yml():
    rec = one(plugins.parse_bungee(b"name: ViaVersion\nmain: a.Bungee\nversion: 4.9.2\nauthor: _MylesC\n"
                                   b"depends: [Lib]\nsoftDepends: [Other]\n", Jar()))
    assert (rec.loader, rec.mod_id, rec.version) == ("bungeecord", "ViaVersion", "4.9.2")
    assert [d.kind for d in rec.dependencies] == ["required", "optional"]
    rec = one(plugins.parse_bungee(b"name: NoVersion\nmain: a.B\n", Jar()))
    assert rec.version is None and rec.warnings  # optional for BungeeCord: absent, not ""


def test_velocity_plugin_json():
    rec = one(plugins.parse_velocity(
        b'{"id":"viaversion","name":"ViaVersion","version":"4.9.2","authors":["_MylesC","creeper123123321"],'
        b'"url":"https://viaversion.com","main":"a.Velocity","dependencies":[{"id":"viabackwards","optional":true},'
        b'{"id":"lib"}]}', Jar()))
    assert (rec.loader, rec.mod_id, rec.name) == ("velocity", "viaversion", "ViaVersion")
    assert [a.name for a in rec.authors] == ["_MylesC", "creeper123123321"]
    assert [(d.mod_id, d.kind) for d in rec.dependencies] == [("viabackwards", "optional"), ("lib", "required")]
    assert isinstance(plugins.parse_velocity(b"{not json", Jar())[0], ManifestProblem)
    assert plugins.parse_velocity(b'{"name":"x"}', Jar())[0].code == "missing_id"


SPONGE = b"""{
  "loader": {"name": "java_plain", "version": "1.0"},
  "license": "MIT",
  "global": {"version": "2.1.0", "links": {"homepage": "https://example.org", "issues": "mailto:x"},
             "contributors": [{"name": "Spongie", "description": "Lead"}],
             "dependencies": [{"id": "spongeapi", "version": "8.0.0", "load-order": "after", "optional": false}]},
  "plugins": [
    {"id": "example", "name": "Example", "entrypoint": "org.example.Example", "description": "Testing"},
    {"id": "example-extra", "version": "0.1", "entrypoint": "org.example.Extra",
     "dependencies": [{"id": "luckperms", "optional": true}]}
  ]
}"""


def test_sponge_plugins_json_gives_one_record_per_plugin_inheriting_global():
    first, second = plugins.parse_sponge(SPONGE, Jar())
    assert (first.loader, first.mod_id, first.version, first.name) == ("sponge", "example", "2.1.0", "Example")
    assert first.manifest_path == "META-INF/sponge_plugins.json" and first.environment == "server"
    assert first.licenses == ("MIT",) and first.links == {"homepage": "https://example.org"}
    assert [a.name for a in first.authors] == ["Spongie"]
    assert first.dependencies == (Dependency("spongeapi", "required", "8.0.0", side="server"),)
    assert (second.version, second.dependencies) == ("0.1", (Dependency("luckperms", "optional", side="server"),))
    assert first.game_versions.versions == ()  # spongeapi is an API version, not a game version


def test_sponge_problems():
    assert plugins.parse_sponge(b"{", Jar())[0].code == "invalid_json"
    assert plugins.parse_sponge(b'{"plugins": []}', Jar())[0].code == "invalid_manifest"
    (bad,) = plugins.parse_sponge(b'{"plugins": [{"id": "Bad Id", "version": "1"}]}', Jar())
    assert isinstance(bad, ManifestProblem) and bad.code == "invalid_id"
    (rec,) = plugins.parse_sponge(b'{"plugins": [{"id": "noversion"}]}', Jar())
    assert rec.version is None and "no version" in rec.warnings
