"""Server plugins: plugin.yml (Bukkit/Spigot/Paper), paper-plugin.yml, bungee.yml, velocity-plugin.json,
and Sponge's META-INF/sponge_plugins.json.

Sources: docs.papermc.io (plugin-yml, paper-plugins, velocity-plugin-json), BungeeCord's
``PluginDescription``. YAML is read with PyYAML's ``BaseLoader``, which keeps every scalar
as the text written: ``version: 1.20`` stays "1.20" (SafeLoader would give the float 1.2,
and 16/156 surveyed plugin.yml files write the version unquoted).
"""

from __future__ import annotations

import re
from typing import Any


from indexium_jar.formatspec import JAR, PLUGIN, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import resolve
from indexium_jar.model import Dependency, GameVersions, Loader, ModRecord

BUKKIT_PATH = "plugin.yml"
PAPER_PATH = "paper-plugin.yml"
BUNGEE_PATH = "bungee.yml"
VELOCITY_PATH = "velocity-plugin.json"
# SpongeAPI 8+ (SpongePowered/plugin-meta, written by SpongeGradle's ``sponge { plugin(...) }``).
SPONGE_PATH = "META-INF/sponge_plugins.json"
_SPONGE_ID = re.compile(r"[a-z][a-z0-9_-]{1,63}")


def _load_yaml(data: bytes, path: str) -> tuple[dict[str, Any] | None, list[str], helpers.Output]:
    import yaml  # (here: ~0.1 s of every importing process's start, the API's among them, for plugin jars only)

    text, warnings = helpers.decode_utf8(data, path)
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CBaseLoader", yaml.BaseLoader))  # noqa: S506 - BaseLoader builds only str/list/dict
    except Exception as exc:  # yaml.YAMLError and friends: never raise
        return None, warnings, [helpers.problem(path, "invalid_yaml", f"{path} is not YAML: {exc}")]
    if not isinstance(doc, dict):
        return None, warnings, [helpers.problem(path, "invalid_manifest", f"{path} root must be a mapping")]
    return doc, warnings, []


def _required_name_version(doc: dict[str, Any], path: str, id_key: str = "name") -> helpers.ManifestProblem | None:
    if bad := helpers.check_id(path, doc.get(id_key), None, id_key):
        return bad
    if not helpers.text(doc.get("version")):
        return helpers.problem(path, "missing_version", f"{path} has no version (required by the server)")
    return None


def _authors(doc: dict[str, Any]) -> list[str]:
    return helpers.string_list(doc.get("author")) + helpers.string_list(doc.get("authors"))


def parse_bukkit(data: bytes, jar: helpers.Jar, path: str = BUKKIT_PATH) -> helpers.Output:
    """plugin.yml (loader "bukkit") or paper-plugin.yml (loader "paper")."""
    doc, warnings, failed = _load_yaml(data, path)
    if doc is None:
        return failed
    if bad := _required_name_version(doc, path):
        return [bad]
    if not helpers.text(doc.get("main")):
        warnings.append("no main class (required by the server)")
    paper = path == PAPER_PATH
    deps = _paper_dependencies(doc.get("dependencies"), warnings) if paper else [
        *(Dependency(mod_id=d, kind="required", side="server") for d in helpers.string_list(doc.get("depend"))),
        *(Dependency(mod_id=d, kind="optional", side="server") for d in helpers.string_list(doc.get("softdepend"))),
    ]
    game = GameVersions()
    if api := helpers.text(doc.get("api-version")):
        # api-version is the *minimum* API the plugin was written for, not a range.
        game, notes = resolve("minimum", api.strip(), "api-version", jar.table)
        warnings += notes
    return [_record("paper" if paper else "bukkit", path, doc, warnings, deps, game)]


def _paper_dependencies(raw: Any, warnings: list[str]) -> list[Dependency]:
    """``dependencies: {bootstrap|server: {Name: {required: true, load: ...}}}``."""
    out: list[Dependency] = []
    if not isinstance(raw, dict):
        return out
    for phase in ("server", "bootstrap"):
        table = raw.get(phase)
        for name, spec in (table.items() if isinstance(table, dict) else []):
            required = not (isinstance(spec, dict) and str(spec.get("required", "true")).lower() == "false")
            dep = Dependency(mod_id=str(name), kind="required" if required else "optional", side="server")
            if dep not in out:
                out.append(dep)
    return out


def parse_bungee(data: bytes, jar: helpers.Jar) -> helpers.Output:
    doc, warnings, failed = _load_yaml(data, BUNGEE_PATH)
    if doc is None:
        return failed
    if bad := helpers.check_id(BUNGEE_PATH, doc.get("name"), None, "name"):
        return [bad]
    if not helpers.text(doc.get("version")):
        warnings.append("no version (optional for BungeeCord)")
    deps = [Dependency(mod_id=d, kind="required", side="server") for d in helpers.string_list(doc.get("depends"))]
    deps += [Dependency(mod_id=d, kind="optional", side="server") for d in helpers.string_list(doc.get("softDepends"))]
    return [_record("bungeecord", BUNGEE_PATH, doc, warnings, deps, GameVersions())]


def parse_velocity(data: bytes, jar: helpers.Jar) -> helpers.Output:
    text, warnings = helpers.decode_utf8(data, VELOCITY_PATH)
    try:
        doc, extra = helpers.loads_gson_strict(text)
    except ValueError as exc:
        return [helpers.problem(VELOCITY_PATH, "invalid_json", f"{VELOCITY_PATH} is not valid JSON: {exc}")]
    warnings += extra
    if not isinstance(doc, dict):
        return [helpers.problem(VELOCITY_PATH, "invalid_manifest", "root must be an object")]
    if bad := helpers.check_id(VELOCITY_PATH, doc.get("id"), None):
        return [bad]
    if not helpers.text(doc.get("version")):
        warnings.append("no version (optional for Velocity)")
    deps = [
        Dependency(mod_id=d["id"], kind="optional" if d.get("optional") is True else "required", side="server")
        for d in doc.get("dependencies") or [] if isinstance(d, dict) and helpers.text(d.get("id"))
    ]
    return [_record("velocity", VELOCITY_PATH, doc, warnings, deps, GameVersions(), id_key="id")]


def _record(loader: Loader, path: str, doc: dict[str, Any], warnings: list[str], deps: list[Dependency],
            game: GameVersions, id_key: str = "name") -> ModRecord:
    version = helpers.text(doc.get("version"))  # optional for BungeeCord and Velocity
    warnings = warnings + (helpers.version_warnings(version) if version else [])
    return ModRecord(
        loader=loader, manifest_path=path, mod_id=doc[id_key].strip(), version=version,
        name=helpers.text(doc.get("name")), description=helpers.text(doc.get("description")),
        authors=helpers.people_from_names(_authors(doc)),
        links=helpers.links_from({"homepage": doc.get("website") or doc.get("url")}),
        environment="server",  # plugins run on the server (or proxy) only
        game_versions=game, dependencies=tuple(deps), warnings=tuple(warnings),
    )


def parse_sponge(data: bytes, jar: helpers.Jar) -> helpers.Output:
    """``META-INF/sponge_plugins.json``: one record per ``plugins[]`` entry (loader "sponge").

    ``global`` holds defaults every plugin inherits (version, links, contributors,
    dependencies). A ``spongeapi`` dependency names the API, not a Minecraft version, so no
    game version is recorded.
    """
    text, warnings = helpers.decode_utf8(data, SPONGE_PATH)
    try:
        doc, extra = helpers.loads_gson_strict(text)
    except ValueError as exc:
        return [helpers.problem(SPONGE_PATH, "invalid_json", f"{SPONGE_PATH} is not valid JSON: {exc}")]
    warnings += extra
    if not isinstance(doc, dict) or not isinstance(doc.get("plugins"), list) or not doc["plugins"]:
        return [helpers.problem(SPONGE_PATH, "invalid_manifest", "root must be an object with a plugins array")]
    shared = doc.get("global") if isinstance(doc.get("global"), dict) else {}
    out: helpers.Output = []
    for plugin in doc["plugins"][:64]:
        if not isinstance(plugin, dict):
            continue
        merged = {**shared, **plugin}
        if bad := helpers.check_id(SPONGE_PATH, merged.get("id"), _SPONGE_ID):
            out.append(bad)
            continue
        deps = [
            Dependency(mod_id=d["id"], kind="optional" if d.get("optional") is True else "required",
                       version_range=helpers.text(d.get("version")), side="server")
            for d in merged.get("dependencies") or [] if isinstance(d, dict) and helpers.text(d.get("id"))
        ]
        people = [c.get("name") for c in merged.get("contributors") or [] if isinstance(c, dict)]
        version = helpers.text(merged.get("version"))
        notes = list(warnings) + (helpers.version_warnings(version) if version else ["no version"])
        license_ = helpers.text(doc.get("license"))
        out.append(ModRecord(
            loader="sponge", manifest_path=SPONGE_PATH, mod_id=merged["id"].strip(), version=version,
            name=helpers.text(merged.get("name")), description=helpers.text(merged.get("description")),
            authors=helpers.people_from_names(helpers.string_list(people)),
            licenses=(license_,) if license_ else (), links=helpers.links_from(merged.get("links")),
            environment="server", dependencies=tuple(deps), warnings=tuple(notes)))
    return out


FORMATS = (
    Format("bukkit", JAR, 140, (".jar",), (BUKKIT_PATH,), parse_bukkit, (LoaderName("bukkit", "Bukkit"),), PLUGIN, (),
           "Bukkit/Spigot/Paper plugin: plugin.yml"),
    Format("paper", JAR, 141, (".jar",), (PAPER_PATH,), parse_bukkit,
           (LoaderName("paper", "Paper", ("bukkit",)),), PLUGIN, (),  # Paper loads Bukkit plugins
           "Paper plugin: paper-plugin.yml"),
    Format("bungeecord", JAR, 142, (".jar",), (BUNGEE_PATH,), lambda data, jar, path: parse_bungee(data, jar),
           (LoaderName("bungeecord", "BungeeCord"),), PLUGIN, (), "BungeeCord plugin: bungee.yml"),
    Format("velocity", JAR, 143, (".jar",), (VELOCITY_PATH,), lambda data, jar, path: parse_velocity(data, jar),
           (LoaderName("velocity", "Velocity"),), PLUGIN, (), "Velocity plugin: velocity-plugin.json"),
    Format("sponge", JAR, 144, (".jar",), (SPONGE_PATH,), lambda data, jar, path: parse_sponge(data, jar),
           (LoaderName("sponge", "Sponge"),), PLUGIN, (), "Sponge plugin: META-INF/sponge_plugins.json"),
)
