"""Shader packs: Iris/OptiFine (``shaders/`` at the root) and Canvas pipelines.

* Iris and OptiFine read a zip whose root holds ``shaders/`` (Iris also finds it one folder
  down). A ``shaders/shaders.properties`` with ``iris.features.required`` needs Iris; any
  other (``iris.features.optional`` included: OptiFine ignores ``iris.*`` keys) is an
  OptiFine-format pack, which both load. Such an archive states
  no game version: :func:`infer_game_versions` reads one from the release's name or tag
  ("for MC 1.20.1", "v3.2+1.21"), marked inferred, or says "not stated".
* Canvas's "pipelines" are resource packs: ``pack.mcmeta`` plus
  ``assets/<namespace>/pipelines/*.json5`` (vram-guild/canvas wiki, "Making a Pipeline");
  their game versions come from ``pack_format`` like any resource pack's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from indexium_jar.formatspec import PACK, SHADER, Format, LoaderName
from indexium_jar.gameversions import VersionTable
from indexium_jar.manifests._common import decode_utf8
from indexium_jar.model import GameVersions, PackParseResult, PackRecord
from indexium_jar.packs import _mcmeta, notpacks
from indexium_jar.packs._common import Archive
from indexium_jar.packs.resourcepack import ICON

PROPERTIES = "shaders/shaders.properties"
MAX_PROPERTIES_BYTES = 1 << 20
_MAX_RELEASE_TEXT = 500
_V = r"(\d{1,2}\.\d{1,2}(?:\.\d{1,2})?)"
_MARK = r"(?:minecraft|mc)[\s_-]*v?"
_RANGE = re.compile(_MARK + _V + r"\s*(?:-|–|~|to)\s*" + _V, re.IGNORECASE)
_LINE = re.compile(_MARK + _V + r"\.x\b", re.IGNORECASE)
_ONWARD = re.compile(_MARK + _V + r"\s*\+", re.IGNORECASE)
_NAMED = re.compile(_MARK + _V + r"(?![\d.])", re.IGNORECASE)
_BUILD = re.compile(r"\+" + _V + r"(?![\d.])")  # semver build metadata: "v2.1+1.20.1"
_FOR = re.compile(r"\bfor\s+" + _V + r"(?![\d.])", re.IGNORECASE)


def shader_root(names: Collection[str]) -> str | None:
    """``""`` when ``shaders/`` is at the root, ``"Folder/"`` when one level down, else None."""
    if any(n.startswith("shaders/") for n in names):
        return ""
    # ("/shaders/" in n, in C, first: a resource pack's thousands of names never get further)
    nested = sorted({n.split("/", 1)[0] + "/" for n in names
                     if "/shaders/" in n and n.count("/") >= 2 and n.split("/")[1] == "shaders"})
    return nested[0] if nested else None


def canvas_pipelines(names: Collection[str]) -> list[str]:
    # ("/pipelines/" in n, in C, first: a resource pack's thousands of textures stop there)
    return [n for n in names if "/pipelines/" in n and n.startswith("assets/") and n.count("/") >= 3
            and n.split("/")[2] == "pipelines" and n.endswith((".json", ".json5"))]


def infer_game_versions(text: str, table: VersionTable) -> GameVersions:
    """Minecraft releases a release's name or tag states, marked inferred; empty when none.

    Only explicit statements count ("MC 1.20.1", "Minecraft 1.20-1.20.4", "mc1.21.x",
    "1.20+" after mc, "+1.20.1" build metadata, "for 1.19.2"): a bare "v1.4.2" is the pack's own
    version, not a game version. Versions the table does not list as releases are dropped.
    """
    text = text[:_MAX_RELEASE_TEXT]
    releases = [v.id for v in table.releases]  # newest first
    rank = {v: i for i, v in enumerate(releases)}
    found: list[str] = []
    for m in _RANGE.finditer(text):
        a, b = m.group(1), m.group(2)
        if a in rank and b in rank:
            hi, lo = sorted((rank[a], rank[b]))
            found += releases[hi:lo + 1]
    for m in _LINE.finditer(text):
        found += [v for v in releases if v == m.group(1) or v.startswith(m.group(1) + ".")]
    for m in _ONWARD.finditer(text):
        if m.group(1) in rank:
            found += releases[:rank[m.group(1)] + 1]
    for pattern in (_NAMED, _BUILD, _FOR):
        found += [m.group(1) for m in pattern.finditer(text) if m.group(1) in rank]
    if not found:
        return GameVersions()
    return GameVersions(source="release name", raw=text.strip()[:200], versions=tuple(table.newest_first(found)),
                        inferred=True)


def _wants_iris(data: bytes) -> bool:
    """``iris.features.required = SSBO ...``: the pack refuses to load without Iris's features.

    ``iris.features.optional`` does not count: OptiFine ignores ``iris.*`` keys and loads the pack.
    """
    text, _ = decode_utf8(data[:MAX_PROPERTIES_BYTES], PROPERTIES)
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "iris.features.required" and value.strip():
            return True
    return False


def parse(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    """An Iris/OptiFine pack (``shaders/``)."""
    root = shader_root(archive.names) or ""
    props = root + PROPERTIES
    iris_only = props in files and _wants_iris(files[props])
    notes = [] if not root else [f"shaders/ is inside {root} (Iris finds it there; OptiFine wants it at the root)"]
    game = infer_game_versions(archive.release_text, archive.table)
    if not game.versions:
        notes.append("game versions not stated (a shader pack carries none, and the release names none)")
    else:
        notes.append(f"game versions inferred from the release name {game.raw!r}")
    return PackParseResult(record=PackRecord(
        project_type="shader", loaders=("iris",) if iris_only else ("iris", "optifine"),
        manifest_path=props if props in archive.names else root + "shaders/",
        game_versions=game, warnings=tuple(notes)))


def parse_canvas(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    """A Canvas pipeline: a resource pack whose game versions its pack.mcmeta states."""
    meta = _mcmeta.parse(files[_mcmeta.PATH], archive, "resource")
    if not isinstance(meta, _mcmeta.Meta):
        return PackParseResult(problems=(meta,))
    return PackParseResult(record=PackRecord(
        project_type="shader", loaders=("canvas",), manifest_path=_mcmeta.PATH, description=meta.description,
        icon=ICON if ICON in archive.names else None, game_versions=meta.game_versions, warnings=meta.warnings))


def _is_shader(names: Collection[str], file_name: str) -> bool:
    return shader_root(names) is not None and notpacks.which(names, file_name) != "sources_archive"


def _shader_reads(names: Collection[str]) -> list[str]:
    props = (shader_root(names) or "") + PROPERTIES
    return [props] if props in names else []


FORMATS = (
    Format("shader-canvas", PACK, 300, (".zip",), (_mcmeta.PATH, "assets/*/pipelines/"), parse_canvas,
           (LoaderName("canvas", "Canvas"),), SHADER, (_mcmeta.PATH,),
           "Canvas shader pipeline: a resource pack with assets/*/pipelines/",
           matches=lambda names, file_name: _mcmeta.PATH in names and bool(canvas_pipelines(names))),
    Format("shader", PACK, 400, (".zip",), ("shaders/", PROPERTIES), parse,
           (LoaderName("iris", "Iris"), LoaderName("optifine", "OptiFine")), SHADER, ("shaders/",),
           "Iris/OptiFine shader pack: shaders/ with its programs", matches=_is_shader, reads=_shader_reads),
)
