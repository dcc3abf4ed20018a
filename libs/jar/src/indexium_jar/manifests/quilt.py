"""quilt.mod.json / quilt.mod.json5, read the way quilt-loader reads them.

Sources: ``QuiltMC/rfcs`` ``specification/0002-quilt.mod.json.md``; ``QuiltMC/quilt-loader``
``metadata/qmj/{ModMetadataReader,V1ModMetadataReader}.java``. quilt.mod.json is strict
JSON; quilt.mod.json5 is JSON5 and wins when both exist (ClasspathModCandidateFinder).
"""

from __future__ import annotations

import re
from typing import Any


from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import from_named_version, resolve
from indexium_jar.model import Dependency, DependencyKind, GameVersions, ModRecord, Person

PATH_JSON = "quilt.mod.json"
PATH_JSON5 = "quilt.mod.json5"
MOD_ID = re.compile(r"[a-z][a-z0-9-_]{1,63}")
_ENVIRONMENTS = {"*": "both", "client": "client", "dedicated_server": "server"}


def parse(data: bytes, jar: helpers.Jar, path: str = PATH_JSON) -> helpers.Output:
    text, warnings = helpers.decode_utf8(data, path)
    try:
        if path.endswith(".json5"):
            import json5  # (here, not at the top: only quilt.mod.json5 needs it)

            root = json5.loads(text)
        else:
            root, extra = helpers.loads_gson_strict(text)
            warnings += extra
    except Exception as exc:  # json5 raises assorted errors; a parser must never raise
        return [helpers.problem(path, "invalid_json", f"{path} could not be parsed: {exc}")]
    if not isinstance(root, dict):
        return [helpers.problem(path, "invalid_manifest", f"{path} root must be an object")]
    if root.get("schema_version") != 1 or isinstance(root.get("schema_version"), bool):
        return [helpers.problem(path, "unsupported_schema", f"schema_version {root.get('schema_version')!r} is not 1")]
    ql = root.get("quilt_loader")
    if not isinstance(ql, dict):
        return [helpers.problem(path, "invalid_manifest", "quilt_loader must be an object")]
    mod_id, version = ql.get("id"), ql.get("version")
    if bad := helpers.check_id(path, mod_id, MOD_ID):
        return [bad]
    if not isinstance(version, str) or not version:
        return [helpers.problem(path, "missing_version", "quilt_loader.version must be a non-empty string")]
    warnings += helpers.version_warnings(version)
    meta = ql.get("metadata") if isinstance(ql.get("metadata"), dict) else {}
    deps: list[Dependency] = []
    minecraft: list[Any] = []
    for key, kind in (("depends", "required"), ("breaks", "incompatible")):
        items = ql.get(key) or []
        if not isinstance(items, list):
            warnings.append(f"quilt_loader.{key} must be an array; ignored")
            items = []
        for item in items:
            _dependency(item, kind, deps, minecraft, warnings, key)
    game, notes = _game_versions(minecraft, jar)
    env_raw = (root.get("minecraft") or {}).get("environment", "*") if isinstance(root.get("minecraft"), dict) else "*"
    environment = _ENVIRONMENTS.get(env_raw) if isinstance(env_raw, str) else None
    if environment is None:
        warnings.append(f"unknown minecraft.environment {env_raw!r}; treated as both sides")
    return [ModRecord(
        loader="quilt", manifest_path=path, mod_id=mod_id, version=version,
        name=helpers.text(meta.get("name")), description=helpers.text(meta.get("description")),
        authors=_contributors(meta.get("contributors")), licenses=_licenses(meta.get("license")),
        links=helpers.links_from(meta.get("contact")), icon=helpers.pick_icon(meta.get("icon")),
        environment=environment or "both", game_versions=game, dependencies=tuple(deps),
        nested_jars=tuple(helpers.string_list(ql.get("jars"))), warnings=tuple(warnings + notes),
    )]


def _dependency(item: Any, kind: DependencyKind, out: list[Dependency], minecraft: list[Any],
                warnings: list[str], key: str, any_of: bool = False) -> None:
    """A string id, an object, or an array meaning "any of" (for ``depends``)."""
    if isinstance(item, list):
        for alternative in item:
            _dependency(alternative, kind, out, minecraft, warnings, key, any_of=True)
        return
    if isinstance(item, str):
        item = {"id": item}
    if not isinstance(item, dict) or not helpers.text(item.get("id")):
        warnings.append(f"{key} entry {item!r} has no id; ignored")
        return
    dep_id = item["id"].split(":", 1)[-1]  # "group:id" is allowed; the id is what others see
    versions = item.get("versions")
    if versions is None and "version" in item:
        # Real quirk (walljump-unofficial): the loader only reads "versions", so the
        # singular key imposes no constraint at all.
        warnings.append(f"{key}.{dep_id} uses 'version', which quilt-loader ignores; no constraint")
    if dep_id == "minecraft" and kind == "required" and versions is not None:
        minecraft.append(versions)
    optional = item.get("optional") is True or (any_of and kind == "required")
    out.append(Dependency(
        mod_id=dep_id, kind="optional" if optional else kind,
        version_range=None if versions is None else (versions if isinstance(versions, str) else helpers.compact_json(versions)),
        side=_ENVIRONMENTS.get(env, "both") if isinstance(env := item.get("environment", "*"), str) else "both",
    ))


def _contributors(value: Any) -> tuple[Person, ...]:
    """``{"Name": "Owner"}`` or ``{"Name": ["Owner", "Developer"]}``."""
    if not isinstance(value, dict):
        return ()
    people = []
    for name, role in value.items():
        roles = helpers.string_list(role)
        if str(name).strip():
            people.append(Person(name=str(name).strip(), role=", ".join(roles) or None))
    return tuple(people)


def _licenses(value: Any) -> tuple[str, ...]:
    """An SPDX string, ``{name, id, url, description}``, or an array of either."""
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
        elif isinstance(item, dict) and (label := helpers.text(item.get("id")) or helpers.text(item.get("name"))):
            out.append(label)
    return tuple(out)


def _game_versions(minecraft: list[Any], jar: helpers.Jar) -> tuple[GameVersions, list[str]]:
    if len(minecraft) == 1:
        return resolve("quilt", minecraft[0], "quilt_loader.depends.minecraft", jar.table)
    if minecraft:  # several minecraft entries are alternatives of an "any of" array
        return resolve("quilt", minecraft, "quilt_loader.depends.minecraft", jar.table)
    if loom := jar.attribute("Fabric-Minecraft-Version"):
        return from_named_version(loom, "MANIFEST.MF:Fabric-Minecraft-Version", jar.table, inferred=True)
    return GameVersions(), []


FORMATS = (Format("quilt", JAR, 110, (".jar",), (PATH_JSON5, PATH_JSON), parse,
                  (LoaderName("quilt", "Quilt", ("fabric",)),), MOD,  # Quilt loads Fabric mods
                  (PATH_JSON,), "Quilt mod: quilt.mod.json(5)", first_entry_only=True),)
