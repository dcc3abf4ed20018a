"""litemod.json (LiteLoader, Minecraft 1.5–1.12): ``name``, ``version``, ``mcversion``, ``revision``.

LiteLoader identifies a mod by its ``name``, so that is the record's id.
"""

from __future__ import annotations

from indexium_jar.formatspec import JAR, MOD, Format, LoaderName
from indexium_jar.manifests import _common as helpers
from indexium_jar.manifests._gamever import from_named_version
from indexium_jar.model import GameVersions, ModRecord

PATH = "litemod.json"


def parse(data: bytes, jar: helpers.Jar) -> helpers.Output:
    text, warnings = helpers.decode_utf8(data, PATH)
    try:
        doc, extra = helpers.loads_gson_strict(text)
    except ValueError as exc:
        return [helpers.problem(PATH, "invalid_json", f"{PATH} is not valid JSON: {exc}")]
    warnings += extra
    if not isinstance(doc, dict):
        return [helpers.problem(PATH, "invalid_manifest", "root must be an object")]
    if bad := helpers.check_id(PATH, doc.get("name"), None, "name"):
        return [bad]
    version = helpers.text(doc.get("version"))
    if version is None:
        warnings.append("no version")
    else:
        warnings += helpers.version_warnings(version)
    game, notes = (from_named_version(doc["mcversion"], "litemod.json:mcversion", jar.table)
                   if helpers.text(doc.get("mcversion")) else (GameVersions(), []))
    return [ModRecord(
        loader="liteloader", manifest_path=PATH, mod_id=doc["name"].strip(), version=version,
        name=doc["name"].strip(), description=helpers.text(doc.get("description")),
        authors=helpers.people_from_names(helpers.string_list(doc.get("author"))),
        links=helpers.links_from({"homepage": doc.get("url")}),
        game_versions=game, warnings=tuple(warnings + notes),
    )]


FORMATS = (Format("liteloader", JAR, 150, (".litemod", ".jar"), (PATH,), lambda data, jar, path: parse(data, jar),
                  (LoaderName("liteloader", "LiteLoader"),), MOD, (), "LiteLoader mod: litemod.json"),)
