"""The format registry: every kind of file Indexium reads, each declared once, beside its parser.

Each parser module of :mod:`indexium_jar.manifests` (jars) and :mod:`indexium_jar.packs`
(zips, ``.mrpack``) declares the formats it reads as a module-level ``FORMATS`` tuple of
:class:`~indexium_jar.formatspec.Format`: the release-asset suffixes, the archive entries
that identify it (and, for packs, how the central directory is matched and which entries
the parser needs), the parser, the loaders it yields (Modrinth's names) and the project
type, the source-tree files that reveal it on a default branch, its rank, and one line for
docs and skip messages. This module finds those declarations (:func:`_discover`: every
module of the two packages; no list of modules to keep) and derives every list the rest of
the code needs: the jar reader's parse order and entries (:data:`JAR_FORMATS`,
:data:`LOADER_MANIFESTS`), the pack classifier's order (:data:`FORMATS`), :data:`LOADERS`
(the loader vocabulary), :data:`SUFFIXES` / :data:`JAR_SUFFIXES` (which assets are read),
:func:`loaders_of` (``PLUGIN_LOADERS``), :data:`PROJECT_TYPES`, :func:`v2_project_type` and
:func:`all_project_types` (API v2), :func:`supported_project_types` (``/v2/tag/loader``),
:data:`SOURCE_MANIFESTS` / :data:`SOURCE_PACK_PATHS` (what the GitHub role probes and a push
is read for), :func:`no_manifest_reason` (the skip message). ``tests/unit/jar/test_formats.py``
fails when a loader, suffix or project-type literal appears outside the parsers and this
module, so a new format is one module: its parser with its ``FORMATS``.

Pure: no I/O (the import-linter contract on ``indexium_jar`` 's pure half lists it).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from indexium_jar.formatspec import (
    DATAPACK, FALLBACK_RANGE_DIALECT, JAR, MOD, MODPACK, PACK, PLUGIN, PROJECT_TYPE_TITLES, PROJECT_TYPES, RESOURCEPACK, SHADER, Format,
    LoaderName,
)

# What API v2 answers for a project type: Modrinth's v2 rewrites data packs and plugins to "mod".
_V2_TYPE = {PLUGIN: MOD, DATAPACK: MOD}
# A project whose files we have not classified yet (rows stored before migration 0023): a mod.
DEFAULT_PROJECT_TYPE = MOD


_PACKAGES = ("indexium_jar.manifests", "indexium_jar.packs")


def _discover() -> tuple[Format, ...]:
    """Every ``FORMATS`` declared by a module of indexium_jar.manifests and indexium_jar.packs, by rank."""
    found: list[Format] = []
    # (import_module: either package may be the one importing this module, still half-initialized)
    for package in map(importlib.import_module, _PACKAGES):
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            found += getattr(importlib.import_module(info.name), "FORMATS", ())
    names = [f.name for f in found]
    if len(set(names)) != len(names):
        raise RuntimeError(f"a format is declared twice: {sorted(n for n in names if names.count(n) > 1)}")
    bad = [f.name for f in found if f.reader not in (JAR, PACK) or f.project_type not in PROJECT_TYPES]
    if bad:
        raise RuntimeError(f"formats with an unknown reader or project type: {bad}")
    return tuple(sorted(found, key=lambda f: (f.rank, f.name)))


# Every format, in rank order: the order a jar's records are reported and an archive is classified.
FORMATS: tuple[Format, ...] = _discover()

BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
JAR_FORMATS = tuple(f for f in FORMATS if f.reader == JAR)
PACK_FORMATS = tuple(f for f in FORMATS if f.reader == PACK)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# The loader manifests of jars, in parse order: a jar without any of these is not a mod.
JAR_ENTRIES: tuple[str, ...] = _unique(p for f in JAR_FORMATS for p in f.identified_by)
LOADER_MANIFESTS: frozenset[str] = frozenset(JAR_ENTRIES)

# Every loader a file can yield, jar formats first, each in rank order (a loader several formats
# yield is declared by the first: the modpack's are the mod loaders' names).
_LOADER_INFO: dict[str, LoaderName] = {}
for _f in (*JAR_FORMATS, *PACK_FORMATS):
    for _l in _f.loaders:
        _LOADER_INFO.setdefault(_l.name, _l)
LOADERS: tuple[str, ...] = tuple(_LOADER_INFO)
LOADER_TITLES: dict[str, str] = {n: l.title for n, l in _LOADER_INFO.items()}
# Which files a loader runs (the dependency resolver's candidates): itself and what it also runs.
LOADER_RUNS: dict[str, tuple[str, ...]] = {n: (n, *l.also_runs) for n, l in _LOADER_INFO.items()}
SUFFIXES: tuple[str, ...] = _unique(s for f in FORMATS for s in f.suffixes)
JAR_SUFFIXES: tuple[str, ...] = _unique(s for f in JAR_FORMATS for s in f.suffixes)
PACK_SUFFIXES: tuple[str, ...] = _unique(s for f in PACK_FORMATS for s in f.suffixes)
# The manifests a mod's source tree carries in a module's src/main/resources, in probing order.
SOURCE_MANIFESTS: tuple[str, ...] = _unique(p for f in JAR_FORMATS for p in f.source_paths)
# The files (a trailing "/": a folder) at a repository's root that make it a pack's source tree.
SOURCE_PACK_PATHS: tuple[str, ...] = _unique(p for f in PACK_FORMATS for p in f.source_paths)
# Loaders whose builds are commonly a module named after them (fabric/, neoforge/ ...): probed
# after the single-module layout.
MODULE_LOADERS: tuple[str, ...] = _unique(l.name for f in JAR_FORMATS if f.source_paths for l in f.loaders)


def project_types_of_loader(loader: str) -> list[str]:
    """The project types whose files yield this loader (``/api/v1/tags/loaders``), our own types
    (``supported_project_types`` adds what v2 rewrites them to)."""
    types = {f.project_type for f in FORMATS if any(l.name == loader for l in f.loaders)}
    return [t for t in PROJECT_TYPES if t in types]


def loader_groups(project_type: str | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """Loaders for a filter, as ``[(project type, loaders)]``: every loader once, under the type of
    the first format (jar formats first) that declares it, in :data:`PROJECT_TYPES` order, empty
    groups left out (a modpack's loaders are the mod loaders); with ``project_type``, that type's
    loaders alone."""
    if project_type is not None:
        return [(project_type, loaders_of(project_type))]
    home: dict[str, str] = {}
    for f in (*JAR_FORMATS, *PACK_FORMATS):
        for l in f.loaders:
            home.setdefault(l.name, f.project_type)
    groups = [(t, tuple(n for n in LOADERS if home[n] == t)) for t in PROJECT_TYPES]
    return [(t, names) for t, names in groups if names]


def loaders_of(project_type: str, reader: str | None = None) -> tuple[str, ...]:
    """The loaders formats of this project type yield (``plugin``: the plugin loaders)."""
    return _unique(l.name for f in FORMATS if f.project_type == project_type and reader in (None, f.reader)
                   for l in f.loaders)


def v2_project_type(project_type: str | None) -> str:
    """``project_type`` as Modrinth's v2 answers it (data packs and plugins are "mod")."""
    t = project_type or DEFAULT_PROJECT_TYPE
    return _V2_TYPE.get(t, t)


def v2_project_types() -> tuple[str, ...]:
    return _unique(v2_project_type(t) for t in PROJECT_TYPES)


def all_project_types(project_type: str | None, loaders: Iterable[str]) -> list[str]:
    """Every type a project is (v2's ``all_project_types``): a jar project is a mod and, when
    it has a plugin loader, a plugin too; a pack is its own type (and what v2 rewrites it to)."""
    t = project_type or DEFAULT_PROJECT_TYPE
    if t in (MOD, PLUGIN):
        plugin = set(loaders) & set(loaders_of(PLUGIN))
        types = {MOD, *([PLUGIN] if plugin or t == PLUGIN else [])}
    else:
        types = {t, v2_project_type(t)}
    return [x for x in PROJECT_TYPES if x in types]


def supported_project_types(loader: str) -> list[str]:
    """``/v2/tag/loader``: the project types a loader's files make, with what v2 rewrites them to."""
    types = {t for f in FORMATS if any(l.name == loader for l in f.loaders) for t in (f.project_type,
                                                                                      v2_project_type(f.project_type))}
    return [t for t in PROJECT_TYPES if t in types]


def project_type_of(loaders: Iterable[str]) -> str:
    """A jar project's type from its files' loaders: a plugin when every loader is a plugin loader."""
    found = set(loaders)
    return PLUGIN if found and found <= set(loaders_of(PLUGIN)) else MOD


def no_manifest_reason() -> str:
    """Why a jar with none of the jar formats' entries is not indexed."""
    return "no mod manifest: none of " + "; ".join(f.description for f in JAR_FORMATS)


def describe(name: str) -> str:
    return BY_NAME[name].description


__all__ = [
    "BY_NAME", "DATAPACK", "DEFAULT_PROJECT_TYPE", "FALLBACK_RANGE_DIALECT", "FORMATS", "Format", "JAR_ENTRIES", "JAR_FORMATS", "JAR_SUFFIXES",
    "LOADERS", "LOADER_MANIFESTS", "loader_groups", "project_types_of_loader", "LOADER_RUNS", "LOADER_TITLES", "LoaderName", "MOD", "MODPACK", "MODULE_LOADERS",
    "PACK_FORMATS", "PACK_SUFFIXES", "PLUGIN", "PROJECT_TYPES", "PROJECT_TYPE_TITLES", "RESOURCEPACK", "SHADER",
    "SOURCE_MANIFESTS", "SOURCE_PACK_PATHS", "SUFFIXES", "all_project_types",
    "loaders_of", "no_manifest_reason", "project_type_of", "supported_project_types", "v2_project_type",
    "v2_project_types",
]
