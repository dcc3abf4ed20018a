"""What a format declaration is: the one record each parser module writes for each format it reads.

A parser module in :mod:`indexium_jar.manifests` (jars) or :mod:`indexium_jar.packs` (zips,
``.mrpack``) declares its formats as a module-level ``FORMATS`` tuple of :class:`Format`, beside
its parser. :mod:`indexium_jar.formats` finds them (no list of modules anywhere) and derives
every other list from them. This module imports no parser, so a parser module can import it.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

# Modrinth's project types (``/v2/tag/project_type`` plus ``datapack`` and ``plugin``, which its v2
# answers as ``mod`` but whose ``project_type:`` facets still tell them apart), in the order we list them.
MOD, PLUGIN, RESOURCEPACK, DATAPACK, SHADER, MODPACK = "mod", "plugin", "resourcepack", "datapack", "shader", "modpack"
PROJECT_TYPES: tuple[str, ...] = (MOD, PLUGIN, RESOURCEPACK, DATAPACK, SHADER, MODPACK)
# Each type as people read it (the site's type filter and cards).
PROJECT_TYPE_TITLES: dict[str, str] = {MOD: "Mod", PLUGIN: "Plugin", RESOURCEPACK: "Resource pack",
                                       DATAPACK: "Data pack", SHADER: "Shader", MODPACK: "Modpack"}

# A stored dependency whose manifest's loader is unknown is read in Fabric's predicate dialect,
# which also reads a bare version or a comparison (the site's dependency sentences).
FALLBACK_RANGE_DIALECT = "fabric"

# The two readers. "jar": indexium_jar.manifests.parse_jar calls the parser once per identifying
# entry present, ``parser(data, jar, path)`` → records and problems. "pack": indexium_jar.packs
# classifies the archive by its central directory (the first format whose ``matches`` holds),
# then calls ``parser(files, archive)`` → a PackParseResult.
JAR, PACK = "jar", "pack"


@dataclass(frozen=True)
class LoaderName:
    """A loader as Modrinth names it, its display name, and the loaders whose files it also runs."""

    name: str
    title: str
    also_runs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Format:
    name: str
    reader: str  # JAR or PACK
    # Where it stands among all formats: a jar's records are reported, and an archive's central
    # directory is classified (a modpack before a mod jar before the pack.mcmeta packs), in rank
    # order; ties by name. Jar formats 100–199, a modpack 50, pack.mcmeta packs 300–399, others 400+.
    rank: int
    suffixes: tuple[str, ...]  # release-asset file names it applies to (lower case, with the dot)
    identified_by: tuple[str, ...]  # archive entries that identify it (a trailing "/" names a folder)
    parser: Callable
    loaders: tuple[LoaderName, ...]  # every loader it can yield
    project_type: str
    # Files (a trailing "/": a folder) that reveal the format on a default branch, which the
    # GitHub role probes and a push is read for: for "jar" formats relative to a module's
    # src/main/resources, for packs relative to the repository's root.
    source_paths: tuple[str, ...]
    description: str  # one line, for docs and skip messages
    # Whether a central directory's names (and the asset's file name) are this format; None:
    # any identifying entry is present.
    matches: Callable[[Collection[str], str], bool] | None = None
    # "pack": the small entries its parser needs, given the names; None: the identifying entries
    # that are files and present. ("jar": the identifying entries present are read.)
    reads: Callable[[Collection[str]], list[str]] | None = None
    # "jar": only the first identifying entry present is parsed (quilt.mod.json5 over quilt.mod.json).
    first_entry_only: bool = False

    def is_in(self, names: Collection[str], file_name: str = "") -> bool:
        if self.matches is not None:
            return self.matches(names, file_name)
        return any(e in names for e in self.identified_by)

    def entries(self, names: Collection[str]) -> list[str]:
        if self.reads is not None:
            return self.reads(names)
        return [e for e in self.identified_by if not e.endswith("/") and "*" not in e and e in names]


__all__ = ["DATAPACK", "Format", "JAR", "LoaderName", "MOD", "MODPACK", "PACK", "PLUGIN", "PROJECT_TYPES",
           "PROJECT_TYPE_TITLES", "RESOURCEPACK", "SHADER"]
