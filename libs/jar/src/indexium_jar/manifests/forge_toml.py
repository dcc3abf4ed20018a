"""META-INF/mods.toml (Forge ≥1.13) and META-INF/neoforge.mods.toml (NeoForge ≥20.5).

Sources: ``neoforged/FancyModLoader`` ``moddiscovery/{ModFile,ModInfo,ModFileInfo}.java``,
``readers/JarModsDotTomlModFileReader.java``; Forge's MDK template. NeoForge reads only
neoforge.mods.toml (rename, 2024-03-25), Forge only mods.toml, so a jar carrying both is
indexed once per loader.
"""

from __future__ import annotations

import re
from typing import Any

from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import from_forge_version, from_neoforge_version, resolve
from indexium_jar.manifests.lenient_toml import loads_lenient
from indexium_jar.model import Dependency, DependencyKind, GameVersions, ModRecord

FORGE_PATH = "META-INF/mods.toml"
NEOFORGE_PATH = "META-INF/neoforge.mods.toml"
MOD_ID = re.compile(r"(?=.{2,64}$)[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")  # ModInfo
_VALID_VERSION = re.compile(r"\d+.*")  # ModInfo rejects versions not starting with a digit
_GRADLE_LEAK = "property 'archiveVersion'"  # "task ':jar' property 'archiveVersion'" (PrismLauncher)
_MISSING_JAR_VERSION = "0.0NONE"  # ModFile: jarVersion when Implementation-Version is absent
_TYPES: dict[str, DependencyKind] = {
    "REQUIRED": "required", "OPTIONAL": "optional",
    "INCOMPATIBLE": "incompatible", "DISCOURAGED": "incompatible",  # discouraged = soft incompatibility
}
_SIDES = {"BOTH": "both", "CLIENT": "client", "SERVER": "server"}


def parse(data: bytes, jar: helpers.Jar, path: str = FORGE_PATH) -> helpers.Output:
    if not data.strip():
        # create_radar ships a 0-byte mods.toml next to its neoforge.mods.toml.
        return [helpers.problem(path, "empty_manifest", f"{path} is empty; ignored")]
    text, warnings = helpers.decode_utf8(data, path)
    try:
        doc, notes = loads_lenient(text)
    except Exception as exc:  # tomli.TOMLDecodeError, or anything odd: never raise
        return [helpers.problem(path, "invalid_toml", f"{path} is not TOML even for NightConfig: {exc}")]
    warnings += notes
    mods = [m for m in doc.get("mods") or [] if isinstance(m, dict)] if isinstance(doc.get("mods"), list) else []
    if not mods:
        return [helpers.problem(path, "no_mods", f"{path} has no [[mods]] entries")]
    dep_tables = _dependency_tables(doc.get("dependencies"))
    mod_ids = [m.get("modId") for m in mods]
    orphans = [key for key in dep_tables if key not in mod_ids]
    neo = path == NEOFORGE_PATH
    loader = "neoforge" if neo or _names_only_neoforge(dep_tables) else "forge"
    if not helpers.text(doc.get("license")):
        warnings.append("no license (required by the loader)")
    out: helpers.Output = []
    for mod in mods:
        mod_id = mod.get("modId")
        if bad := helpers.check_id(path, mod_id, MOD_ID, "modId"):
            out.append(bad)
            continue
        notes = list(warnings)
        entries = list(dep_tables.get(mod_id, []))
        if orphans and len(mods) == 1:
            # FML reads only dependencies.<modId>; tables under other keys are ignored by the
            # loader but usually carry the intended minecraft range, so we keep them, noted.
            notes.append(f"dependencies keyed by {', '.join(orphans)} (not a [[mods]] modId; ignored by FML) were used")
            entries += [e for key in orphans for e in dep_tables[key]]
        deps = [d for d in (_dependency(e, neo, notes) for e in entries) if d is not None]
        version = _version(mod.get("version"), jar, notes)
        game, game_notes = _game_versions(entries, doc, loader, jar)
        out.append(ModRecord(
            loader=loader, manifest_path=path, mod_id=mod_id, version=version,
            name=helpers.text(mod.get("displayName")), description=helpers.text(mod.get("description")),
            # FML documents a string ("A, B"); arrays are seen too and cost nothing to accept.
            authors=helpers.people_from_names([n for a in helpers.string_list(mod.get("authors")) for n in re.split(r",\s*", a)]),
            licenses=tuple(helpers.string_list(doc.get("license"))),
            links=helpers.links_from({"homepage": mod.get("displayURL"), "issues": doc.get("issueTrackerURL"),
                                "update_json": mod.get("updateJSONURL")}),
            icon=helpers.text(mod.get("logoFile")) or helpers.text(doc.get("logoFile")),
            game_versions=game, dependencies=tuple(deps), warnings=tuple(notes + game_notes),
            environment=_environment(mod, doc),
        ))
    return out


def _environment(mod: dict[str, Any], doc: dict[str, Any]) -> str:
    """FML has no "environment" key; a mod says where it is needed in two other ways.

    ``displayTest="IGNORE_SERVER_VERSION"`` is FML's mark of a server-only mod (clients
    without it may join); ``clientSideOnly=true`` (Forge 1.20.4+) of a client-only one.
    """
    if doc.get("clientSideOnly") is True:
        return "client"
    if mod.get("displayTest") == "IGNORE_SERVER_VERSION":
        return "server"
    return "both"


def _dependency_tables(raw: Any) -> dict[str, list[dict[str, Any]]]:
    """``[[dependencies.<modId>]]`` arrays (a single ``[dependencies.<modId>]`` table also seen)."""
    if not isinstance(raw, dict):
        return {}
    tables: dict[str, list[dict[str, Any]]] = {}
    for key, value in raw.items():
        items = value if isinstance(value, list) else [value]
        tables[str(key)] = [i for i in items if isinstance(i, dict)]
    return tables


def _names_only_neoforge(tables: dict[str, list[dict[str, Any]]]) -> bool:
    """NeoForge 20.2–20.4 still read META-INF/mods.toml; such files depend on neoforge, not forge."""
    ids = {e.get("modId") for entries in tables.values() for e in entries}
    return "neoforge" in ids and "forge" not in ids


def _version(raw: Any, jar: helpers.Jar, notes: list[str]) -> str:
    if not isinstance(raw, str) or not raw.strip():
        notes.append("no version; FML uses its default '1'")
        return "1"
    version = raw
    if helpers.JAR_VERSION_TOKEN in raw:
        # StringSubstitutor replaces the token anywhere: "${file.jarVersion}-forge" works.
        jar_version = jar.attribute("Implementation-Version")
        if not jar_version or _GRADLE_LEAK in jar_version:
            notes.append(f"${{file.jarVersion}} with no usable Implementation-Version; FML substitutes {_MISSING_JAR_VERSION!r}")
            jar_version = _MISSING_JAR_VERSION
        version = raw.replace(helpers.JAR_VERSION_TOKEN, jar_version)
    notes += helpers.version_warnings(version)
    if not _VALID_VERSION.match(version):
        notes.append(f"version {version!r} does not start with a digit; FML would reject the jar")
    return version


def _dependency(entry: dict[str, Any], neo: bool, notes: list[str]) -> Dependency | None:
    mod_id = entry.get("modId")
    if not helpers.text(mod_id):
        notes.append(f"dependency without modId ignored: {entry!r}")
        return None
    kind: DependencyKind = "required"
    discouraged = False
    if "type" in entry:  # NeoForge: upper-cased before DependencyType.valueOf
        kind = _TYPES.get(str(entry["type"]).upper(), "required")
        discouraged = str(entry["type"]).upper() == "DISCOURAGED"  # ModSorter: a warning only
        if str(entry["type"]).upper() not in _TYPES:
            notes.append(f"dependency {mod_id}: unknown type {entry['type']!r}; treated as required")
    elif neo and "mandatory" in entry:
        # NeoForge 21 dropped the `mandatory` fallback (08448988): a leftover
        # mandatory=false no longer makes the dependency optional.
        notes.append(f"dependency {mod_id}: 'mandatory' is ignored by NeoForge 21+; it is required")
    elif not neo:
        mandatory = entry.get("mandatory")
        if isinstance(mandatory, bool):
            kind = "required" if mandatory else "optional"
        else:
            notes.append(f"dependency {mod_id}: no boolean 'mandatory'; treated as required")
    side = entry.get("side", "BOTH")
    if not isinstance(side, str) or side not in _SIDES:  # DependencySide.valueOf is case-sensitive
        notes.append(f"dependency {mod_id}: invalid side {side!r} (values are case-sensitive); treated as BOTH")
    vr = entry.get("versionRange")
    return Dependency(mod_id=mod_id, kind=kind, version_range=vr if isinstance(vr, str) else None,
                      side=_SIDES.get(side, "both") if isinstance(side, str) else "both", warn_only=discouraged)


def _game_versions(entries: list[dict[str, Any]], doc: dict[str, Any], loader: str, jar: helpers.Jar) -> tuple[GameVersions, list[str]]:
    def range_of(dep_id: str) -> str | None:
        return next((e["versionRange"] for e in entries
                     if e.get("modId") == dep_id and isinstance(e.get("versionRange"), str)), None)

    if (mc := range_of("minecraft")) is not None:
        return resolve("maven", mc, "dependencies.minecraft.versionRange", jar.table)
    if loader == "neoforge" and (nf := range_of("neoforge")) is not None:
        found = from_neoforge_version(nf, "dependencies.neoforge.versionRange", jar.table)
    elif loader == "forge" and (fg := range_of("forge")) is not None:
        found = from_forge_version(fg, "dependencies.forge.versionRange", jar.table)
    else:
        found = None
    if found is None and loader == "forge" and isinstance(doc.get("loaderVersion"), str):
        found = from_forge_version(doc["loaderVersion"], "loaderVersion", jar.table)
    return found or (GameVersions(), [])


FORGE = LoaderName("forge", "Forge")
FORMATS = (
    Format("forge", JAR, 120, (".jar",), (FORGE_PATH,), parse, (FORGE,), MOD, (FORGE_PATH,),
           "Forge mod: META-INF/mods.toml"),
    Format("neoforge", JAR, 121, (".jar",), (NEOFORGE_PATH,), parse, (LoaderName("neoforge", "NeoForge"),), MOD,
           (NEOFORGE_PATH,), "NeoForge mod: META-INF/neoforge.mods.toml"),
)
