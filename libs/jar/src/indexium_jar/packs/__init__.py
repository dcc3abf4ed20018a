"""Packs: resource packs, data packs, shader packs and Modrinth modpacks, from their archives.

The same shape as :mod:`indexium_jar.manifests`: the central directory alone tells the
format (:func:`classify`, no entry read, so a pack costs the same Range requests as a jar),
:func:`entries_to_read` names the few small entries its parser needs, and :func:`parse_pack`
turns their bytes into a :class:`~indexium_jar.model.PackRecord` (or a problem, or a skip
with its reason). Nothing here raises on bad input.

:data:`FORMATS` declares each format once (suffixes, identifying entries, parser, loaders,
project type, the source-tree paths that reveal it on a default branch, a one-line
description) for the format registry to take over; the indexer does not read packs yet.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from indexium_jar.manifests import LOADER_MANIFESTS
from indexium_jar.manifests._common import problem
from indexium_jar.model import PackParseResult, ProjectType
from indexium_jar.packs import _mcmeta, datapack, mrpack, notpacks, resourcepack, shaderpack
from indexium_jar.packs._common import Archive

Parser = Callable[[Mapping[str, bytes], Archive], PackParseResult]


@dataclass(frozen=True)
class PackFormat:
    """One format, declared once: what the registry will derive every list from."""

    name: str  # "resourcepack", "datapack", "shader-iris", "shader-canvas", "modpack"
    suffixes: tuple[str, ...]
    identified_by: str  # the entries that identify it, as docs say it
    project_type: ProjectType
    loaders: tuple[str, ...]  # every loader it can yield
    source_paths: tuple[str, ...]  # files the GitHub role can probe on a default branch
    description: str
    parser: Parser


FORMATS: tuple[PackFormat, ...] = (
    PackFormat("modpack", (".mrpack", ".zip"), "modrinth.index.json at the root", "modpack",
               tuple(mrpack.LOADER_DEPENDENCIES.values()), ("modrinth.index.json",),
               "Modrinth modpack (.mrpack): modrinth.index.json lists the files a launcher downloads", mrpack.parse),
    PackFormat("shader-canvas", (".zip",), "pack.mcmeta with assets/<namespace>/pipelines/", "shader", ("canvas",),
               ("pack.mcmeta",), "Canvas shader pipeline: a resource pack with assets/*/pipelines/",
               shaderpack.parse_canvas),
    PackFormat("datapack", (".zip",), "pack.mcmeta with data/", "datapack", ("datapack",),
               ("pack.mcmeta", "data"), "data pack: pack.mcmeta with data/", datapack.parse),
    PackFormat("resourcepack", (".zip",), "pack.mcmeta with assets/ (or without data/)", "resourcepack",
               ("minecraft",), ("pack.mcmeta", "assets"), "resource pack: pack.mcmeta with assets/",
               resourcepack.parse),
    PackFormat("shader", (".zip",), "shaders/ at the root (or one folder down)", "shader", ("iris", "optifine"),
               ("shaders/shaders.properties",), "Iris/OptiFine shader pack: shaders/ with its programs",
               shaderpack.parse),
)
BY_NAME = {f.name: f for f in FORMATS}


@dataclass(frozen=True)
class Classification:
    """What the central directory says an archive is: a pack format, a mod jar, or a skip."""

    format: str | None = None  # a FORMATS name
    mod: bool = False  # a loader manifest is present: read it with indexium_jar.manifests
    skip: str | None = None  # a notpacks code


def classify(names: Collection[str], file_name: str = "") -> Classification:
    """The archive's kind from its entry names alone (no entry is read)."""
    names = names if isinstance(names, (set, frozenset)) else set(names)
    if mrpack.PATH in names:
        return Classification(format="modpack")
    if any(n in names for n in LOADER_MANIFESTS):
        return Classification(mod=True)
    if _mcmeta.PATH in names:
        if shaderpack.canvas_pipelines(names):
            return Classification(format="shader-canvas")
        if any(n.startswith("data/") for n in names):
            return Classification(format="datapack")
        return Classification(format="resourcepack")
    if shaderpack.shader_root(names) is not None and notpacks.which(names, file_name) != "sources_archive":
        return Classification(format="shader")
    return Classification(skip=notpacks.which(names, file_name))


def entries_to_read(names: Collection[str], file_name: str = "") -> list[str]:
    """The entries :func:`parse_pack` needs: all small, usually in the tail read with the directory."""
    kind = classify(names, file_name)
    if kind.format == "modpack":
        return [mrpack.PATH]
    if kind.format in ("resourcepack", "datapack", "shader-canvas"):
        return [_mcmeta.PATH]
    if kind.format == "shader":
        props = (shaderpack.shader_root(names) or "") + shaderpack.PROPERTIES
        return [props] if props in names else []
    return []


def parse_pack(files: Mapping[str, bytes], archive: Archive) -> PackParseResult:
    """Parse an archive already classified as a pack, from the entries :func:`entries_to_read` named."""
    kind = classify(archive.names, archive.file_name)
    if kind.format is None:
        code = kind.skip or "not_a_pack"
        return PackParseResult(skip=notpacks.skip(code)) if not kind.mod else PackParseResult(
            problems=(problem("", "mod_archive", "a loader manifest is present: parse it as a mod jar"),))
    missing = [e for e in entries_to_read(archive.names, archive.file_name) if e not in files]
    if missing:
        return PackParseResult(problems=(problem(missing[0], "entry_not_read", f"{missing[0]} was not given"),))
    try:
        return BY_NAME[kind.format].parser(files, archive)
    except Exception as exc:  # a bug of ours must not lose the archive
        return PackParseResult(problems=(problem(kind.format, "parser_error", f"{type(exc).__name__}: {exc}"),))


__all__ = ["FORMATS", "Archive", "Classification", "PackFormat", "classify", "entries_to_read", "parse_pack"]
