"""fabric.mod.json, schema 0 and 1, read the way fabric-loader reads it.

Sources: ``FabricMC/fabric-loader`` ``impl/metadata/{ModMetadataParser,V0ModMetadataParser,
V1ModMetadataParser,MetadataVerifier}.java``.
"""

from __future__ import annotations

import re
from typing import Any

from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import from_named_version, resolve
from indexium_jar.model import Dependency, DependencyKind, GameVersions, ModRecord, Person

PATH = "fabric.mod.json"
MOD_ID = re.compile(r"[a-z][a-z0-9-_]{1,63}")  # MetadataVerifier
_V1_KINDS: dict[str, DependencyKind] = {
    "depends": "required", "recommends": "optional", "suggests": "optional",
    "conflicts": "incompatible", "breaks": "incompatible",
}
_V0_KINDS: dict[str, DependencyKind] = {"requires": "required", "recommends": "optional", "conflicts": "incompatible"}
_WARN_ONLY = {"recommends", "suggests", "conflicts"}  # ModSolver: soft; ResultAnalyzer only warns
_ENVIRONMENTS = {"*": "both", "": "both", "universal": "both", "client": "client", "server": "server"}


def parse(data: bytes, jar: helpers.Jar) -> helpers.Output:
    text, warnings = helpers.decode_utf8(data, PATH)
    try:
        root, extra = helpers.loads_gson_strict(text)
    except ValueError as exc:
        # The loader's JsonReader is strict: comments, trailing commas, NaN fail the jar.
        return [helpers.problem(PATH, "invalid_json", f"{PATH} is not valid JSON for fabric-loader: {exc}")]
    warnings += extra
    if not isinstance(root, dict):
        return [helpers.problem(PATH, "invalid_manifest", f"{PATH} root must be an object")]
    schema = root.get("schemaVersion", 0)  # absent → schema 0, wherever the key sits
    if isinstance(schema, bool) or not isinstance(schema, (int, float)) or schema != int(schema):
        return [helpers.problem(PATH, "invalid_manifest", "schemaVersion must be a JSON integer")]
    if schema > 1 or schema < 0:
        return [helpers.problem(PATH, "unsupported_schema", f"schemaVersion {schema} is not supported by fabric-loader")]
    mod_id, version = root.get("id"), root.get("version")
    if bad := helpers.check_id(PATH, mod_id, MOD_ID):
        return [bad]
    if not isinstance(version, str) or not version:
        return [helpers.problem(PATH, "missing_version", "version must be a non-empty string")]
    warnings += helpers.version_warnings(version)
    fields = _v1(root, warnings) if schema == 1 else _v0(root, warnings)
    dependencies = fields.pop("dependencies")
    game, notes = _game_versions(dependencies, root, schema, jar)
    warnings += notes
    return [ModRecord(
        loader="fabric", manifest_path=PATH, mod_id=mod_id, version=version,
        name=helpers.text(root.get("name")), description=helpers.text(root.get("description")),
        game_versions=game, dependencies=tuple(dependencies), warnings=tuple(warnings), **fields,
    )]


def _people(items: Any, role: str | None, v0: bool) -> list[Person]:
    people = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str) and item.strip():
            people.append(_v0_person(item, role) if v0 else Person(name=item.strip(), role=role))
        elif isinstance(item, dict) and helpers.text(item.get("name")):
            contact = helpers.string_map(item.get("contact")) or helpers.string_map(
                {k: item[k] for k in ("email", "website") if k in item})
            people.append(Person(name=item["name"].strip(), role=role, contact=contact))
    return people


def _v0_person(raw: str, role: str | None) -> Person:
    """v0 people are strings like ``Name <email> (website)``."""
    parts, contact = raw.split(" "), {}
    if len(parts) > 1 and (m := re.fullmatch(r"\((.+)\)", parts[-1])):
        contact["website"], parts = m.group(1), parts[:-1]
    if len(parts) > 1 and (m := re.fullmatch(r"<(.+)>", parts[-1])):
        contact["email"], parts = m.group(1), parts[:-1]
    return Person(name=" ".join(parts).strip(), role=role, contact=contact)


def _dependencies(root: dict[str, Any], kinds: dict[str, DependencyKind], warnings: list[str]) -> list[Dependency]:
    out = []
    for key, kind in kinds.items():
        table = root.get(key)
        if table is None:
            continue
        if not isinstance(table, dict):
            warnings.append(f"{key} must be an object; ignored")
            continue
        for dep_id, predicate in table.items():
            if isinstance(predicate, str) or (isinstance(predicate, list) and all(isinstance(p, str) for p in predicate)):
                raw = predicate if isinstance(predicate, str) else helpers.compact_json(predicate)
                out.append(Dependency(mod_id=dep_id, kind=kind, version_range=raw, warn_only=key in _WARN_ONLY))
            else:
                warnings.append(f"{key}.{dep_id} must be a string or an array of strings; ignored")
    return out


def _v1(root: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    licenses = helpers.string_list(root.get("license"))
    environment = root.get("environment", "*")
    env = _ENVIRONMENTS.get(environment.lower() if isinstance(environment, str) else None)
    if env is None or environment == "universal":
        warnings.append(f"unknown environment {environment!r}; treated as both sides")
        env = "both"
    nested = []
    for entry in root.get("jars") or []:
        if isinstance(entry, dict) and helpers.text(entry.get("file")):
            nested.append(entry["file"])
        else:
            warnings.append(f"jars entry {entry!r} has no 'file'; ignored")
    return {
        "authors": tuple(_people(root.get("authors"), None, False) + _people(root.get("contributors"), "contributor", False)),
        "licenses": tuple(licenses),
        "links": helpers.links_from(root.get("contact")),
        "icon": helpers.pick_icon(root.get("icon")),
        "environment": env,
        "nested_jars": tuple(nested),
        "dependencies": _dependencies(root, _V1_KINDS, warnings),
    }


def _v0(root: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    links = root.get("links")
    side = root.get("side", "universal")
    env = _ENVIRONMENTS.get(side) if isinstance(side, str) and side else None
    if env is None:
        warnings.append(f"invalid side {side!r}; treated as both sides")  # loader: "Invalid side type"
    return {
        "authors": tuple(_people(root.get("authors"), None, True) + _people(root.get("contributors"), "contributor", True)),
        "licenses": tuple(helpers.string_list(root.get("license"))),
        "links": helpers.links_from({"homepage": links} if isinstance(links, str) else links),
        "environment": env or "both",
        "dependencies": _dependencies(root, _V0_KINDS, warnings),
    }


def _game_versions(deps: list[Dependency], root: dict[str, Any], schema: int, jar: helpers.Jar) -> tuple[GameVersions, list[str]]:
    key = "depends" if schema == 1 else "requires"
    mc = next((d for d in deps if d.mod_id == "minecraft" and d.kind == "required"), None)
    if mc is not None:
        return resolve("fabric", root[key]["minecraft"], f"{key}.minecraft", jar.table)
    if loom := jar.attribute("Fabric-Minecraft-Version"):
        # Loom writes the compile-target Minecraft version here (JarManifestService).
        return from_named_version(loom, "MANIFEST.MF:Fabric-Minecraft-Version", jar.table, inferred=True)
    return GameVersions(), []


LOADER = LoaderName("fabric", "Fabric")
FORMATS = (Format("fabric", JAR, 100, (".jar",), (PATH,), lambda data, jar, path: parse(data, jar), (LOADER,), MOD,
                  (PATH,), "Fabric mod: fabric.mod.json"),)
