"""mcmod.info (Forge ≤1.12), read as leniently as FML's ``MetadataCollection`` does.

FML parses it with a lenient Gson ``JsonParser`` through ``new InputStreamReader(is)``,
i.e. the *platform* charset (often cp1252 on Windows) and tolerant syntax; on a parse
error it logs and ignores the file. We record that case as a problem instead of
dropping it silently. ``mcversion`` is a launcher/site convention, not an FML field.
"""

from __future__ import annotations

import re
from typing import Any


from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import from_named_version
from indexium_jar.model import Dependency, GameVersions, ModRecord

PATH = "mcmod.info"
_DEP = re.compile(r"\s*([^@\s]+)\s*(?:@\s*(\S.*?))?\s*")  # "Forge@[10.13.2.1230,)"


def _decode(data: bytes) -> tuple[str, list[str]]:
    try:
        return data.decode("utf-8").removeprefix("\ufeff"), []
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), [f"{PATH} is not UTF-8; decoded as cp1252 (FML uses the platform charset)"]
    except UnicodeDecodeError:
        return data.decode("latin-1"), [f"{PATH} is not UTF-8; decoded as latin-1 (FML uses the platform charset)"]


def _loads_lenient(text: str) -> Any:
    """Strict-ish JSON accepting raw newlines in strings, then JSON5 for comments/quotes/commas."""
    try:
        return helpers.loads_gson_strict(text)[0]
    except ValueError:
        import json5  # (here, not at the top: only a manifest that is not JSON needs it)

        return json5.loads(text)


def parse(data: bytes, jar: helpers.Jar) -> helpers.Output:
    text, warnings = _decode(data)
    try:
        root = _loads_lenient(text)
    except Exception as exc:  # FML logs and ignores the file; we record it
        return [helpers.problem(PATH, "invalid_json", f"{PATH} could not be parsed (FML ignores it too): {exc}")]
    if isinstance(root, list):
        entries = root
    elif isinstance(root, dict) and isinstance(root.get("modList"), list):
        entries = root["modList"]  # {"modListVersion": 2, "modList": [...]}
    elif isinstance(root, dict) and "modid" in root:
        entries, warnings = [root], warnings + ["root is a single mod object, not an array; read anyway"]
    else:
        return [helpers.problem(PATH, "no_mods", f"{PATH} lists no mods")]
    out: helpers.Output = [_mod(e, jar, warnings) if isinstance(e, dict) else
                     helpers.problem(PATH, "invalid_manifest", "a modList entry is not an object") for e in entries]
    return out or [helpers.problem(PATH, "no_mods", f"{PATH} lists no mods")]


def _mod(entry: dict[str, Any], jar: helpers.Jar, shared: list[str]):
    mod_id = entry.get("modid")
    if bad := helpers.check_id(PATH, mod_id, None, "modid"):
        return bad
    warnings = list(shared)
    version = helpers.text(entry.get("version"))
    if version is None:
        warnings.append("no version")  # the real one lives in the @Mod annotation
    else:
        warnings += helpers.version_warnings(version)
    names = helpers.string_list(entry.get("authorList"))
    if not names and (names := helpers.string_list(entry.get("authors"))):
        warnings.append("'authors' is not read by FML (it reads 'authorList'); used anyway")
    deps = _dependencies(entry.get("requiredMods"), "required") + _dependencies(entry.get("dependencies"), "optional")
    game, notes = _game_versions(entry.get("mcversion"), jar)
    return ModRecord(
        loader="forge", manifest_path=PATH, mod_id=mod_id.strip(), version=version,
        name=helpers.text(entry.get("name")), description=helpers.text(entry.get("description")),
        authors=helpers.people_from_names(names),
        links=helpers.links_from({"homepage": entry.get("url"), "update_json": entry.get("updateJSON") or entry.get("updateUrl")}),
        icon=helpers.text(entry.get("logoFile")), game_versions=game, dependencies=tuple(deps),
        warnings=tuple(warnings + notes),
    )


def _dependencies(items: Any, kind: str) -> list[Dependency]:
    """``requiredMods`` are hard requirements; ``dependencies`` only order loading (``after``)."""
    out = []
    for item in helpers.string_list(items):
        if m := _DEP.fullmatch(item):
            out.append(Dependency(mod_id=m.group(1), kind=kind, version_range=m.group(2)))  # type: ignore[arg-type]
    return out


def _game_versions(mcversion: Any, jar: helpers.Jar) -> tuple[GameVersions, list[str]]:
    if not isinstance(mcversion, str) or not mcversion.strip():
        return GameVersions(), []
    if leak := helpers.template_leak(mcversion):
        return GameVersions(source="mcmod.info:mcversion", raw=mcversion), [f"mcversion contains the unexpanded template {leak}"]
    return from_named_version(mcversion, "mcmod.info:mcversion", jar.table)


FORMATS = (Format("forge-mcmod", JAR, 130, (".jar",), (PATH,), lambda data, jar, path: parse(data, jar),
                  (LoaderName("forge", "Forge"),), MOD, (), "Forge 1.12 and older mod: mcmod.info"),)
