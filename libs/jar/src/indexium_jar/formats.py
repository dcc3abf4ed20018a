"""The format registry: every kind of file Indexium reads, declared once, beside its parser.

A :class:`Format` says which release-asset suffixes it applies to, which archive entries
identify it, which parser reads it, which loaders it yields (Modrinth's names) and the
project type it makes, which source-tree files reveal it on a default branch, and one line
for docs and skip messages. Every list the rest of the code needs is derived here:
:data:`LOADERS` (the loader vocabulary), :data:`SUFFIXES` / :data:`JAR_SUFFIXES` (which
assets are read), :func:`loaders_of` (``PLUGIN_LOADERS``), :data:`PROJECT_TYPES`,
:func:`v2_project_type` and :func:`all_project_types` (API v2), :func:`supported_project_types`
(``/v2/tag/loader``), :data:`SOURCE_MANIFESTS` (what the GitHub role probes and a push is
read for), :func:`no_manifest_reason` (the skip message). ``tests/unit/jar/test_formats.py``
fails when a loader, suffix or project-type literal appears outside this module and the
parsers beside it, so a new format is this one module plus its parser.

Pure: no I/O (the import-linter contract on ``indexium_jar`` 's pure half lists it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from indexium_jar.manifests import coremod, fabric, forge_toml, litemod, mcmod, parse_jar, plugins, quilt
from indexium_jar.packs import _mcmeta, datapack, mrpack, resourcepack, shaderpack

# Modrinth's project types (``/v2/tag/project_type`` plus ``datapack`` and ``plugin``, which its v2
# answers as ``mod`` but whose ``project_type:`` facets still tell them apart), in the order we list them.
MOD, PLUGIN, RESOURCEPACK, DATAPACK, SHADER, MODPACK = "mod", "plugin", "resourcepack", "datapack", "shader", "modpack"
PROJECT_TYPES: tuple[str, ...] = (MOD, PLUGIN, RESOURCEPACK, DATAPACK, SHADER, MODPACK)
# Each type as people read it (the site's type filter and cards).
PROJECT_TYPE_TITLES: dict[str, str] = {MOD: "Mod", PLUGIN: "Plugin", RESOURCEPACK: "Resource pack",
                                       DATAPACK: "Data pack", SHADER: "Shader", MODPACK: "Modpack"}
# What API v2 answers for a project type: Modrinth's v2 rewrites data packs and plugins to "mod".
_V2_TYPE = {PLUGIN: MOD, DATAPACK: MOD}
# A project whose files we have not classified yet (rows stored before migration 0023): a mod.
DEFAULT_PROJECT_TYPE = MOD


@dataclass(frozen=True)
class LoaderName:
    """A loader as Modrinth names it, its display name, and the loaders whose files it also runs."""

    name: str
    title: str
    also_runs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Format:
    name: str
    reader: str  # "jar": indexium_jar.manifests (one record per manifest); "pack": indexium_jar.packs
    suffixes: tuple[str, ...]
    identified_by: tuple[str, ...]  # archive entries (a trailing "/" names a folder)
    parser: Callable
    loaders: tuple[LoaderName, ...]  # every loader it can yield
    project_type: str
    # Files that reveal the format in a source tree: for "jar" formats relative to a module's
    # src/main/resources (what the GitHub role probes), for packs relative to the pack's root.
    source_paths: tuple[str, ...]
    description: str


_FABRIC = LoaderName("fabric", "Fabric")
_QUILT = LoaderName("quilt", "Quilt", ("fabric",))  # Quilt loads Fabric mods
_FORGE = LoaderName("forge", "Forge")
_NEOFORGE = LoaderName("neoforge", "NeoForge")
_BUKKIT = LoaderName("bukkit", "Bukkit")
_PAPER = LoaderName("paper", "Paper", ("bukkit",))  # Paper loads Bukkit plugins
_JAR = (".jar",)

FORMATS: tuple[Format, ...] = (
    # Mods and plugins: jars, read by indexium_jar.manifests.parse_jar (one record per manifest).
    Format("fabric", "jar", _JAR, (fabric.PATH,), parse_jar, (_FABRIC,), MOD,
           (fabric.PATH,), "Fabric mod: fabric.mod.json"),
    Format("quilt", "jar", _JAR, (quilt.PATH_JSON5, quilt.PATH_JSON), parse_jar, (_QUILT,), MOD,
           (quilt.PATH_JSON,), "Quilt mod: quilt.mod.json(5)"),
    Format("neoforge", "jar", _JAR, (forge_toml.NEOFORGE_PATH,), parse_jar, (_NEOFORGE,), MOD,
           (forge_toml.NEOFORGE_PATH,), "NeoForge mod: META-INF/neoforge.mods.toml"),
    Format("forge", "jar", _JAR, (forge_toml.FORGE_PATH, mcmod.PATH, *coremod.INFO_PATHS), parse_jar, (_FORGE,),
           MOD, (forge_toml.FORGE_PATH,), "Forge mod: META-INF/mods.toml, mcmod.info, or a coremod's FMLCorePlugin"),
    Format("liteloader", "jar", (".litemod", ".jar"), (litemod.PATH,), parse_jar,
           (LoaderName("liteloader", "LiteLoader"),), MOD, (), "LiteLoader mod: litemod.json"),
    Format("bukkit", "jar", _JAR, (plugins.BUKKIT_PATH,), parse_jar, (_BUKKIT,), PLUGIN, (),
           "Bukkit/Spigot/Paper plugin: plugin.yml"),
    Format("paper", "jar", _JAR, (plugins.PAPER_PATH,), parse_jar, (_PAPER,), PLUGIN, (),
           "Paper plugin: paper-plugin.yml"),
    Format("bungeecord", "jar", _JAR, (plugins.BUNGEE_PATH,), parse_jar, (LoaderName("bungeecord", "BungeeCord"),),
           PLUGIN, (), "BungeeCord plugin: bungee.yml"),
    Format("velocity", "jar", _JAR, (plugins.VELOCITY_PATH,), parse_jar, (LoaderName("velocity", "Velocity"),),
           PLUGIN, (), "Velocity plugin: velocity-plugin.json"),
    Format("sponge", "jar", _JAR, (plugins.SPONGE_PATH,), parse_jar, (LoaderName("sponge", "Sponge"),), PLUGIN, (),
           "Sponge plugin: META-INF/sponge_plugins.json"),
    # Packs: zips (and .mrpack), read by indexium_jar.packs (classify, then the one parser).
    # Order matters: indexium_jar.packs.classify checks them in this order.
    Format("modpack", "pack", (".mrpack", ".zip"), (mrpack.PATH,), mrpack.parse,
           tuple(LoaderName(n, n) for n in mrpack.LOADER_DEPENDENCIES.values()), MODPACK, (mrpack.PATH,),
           "Modrinth modpack (.mrpack): modrinth.index.json lists the files a launcher downloads"),
    Format("shader-canvas", "pack", (".zip",), (_mcmeta.PATH, "assets/*/pipelines/"), shaderpack.parse_canvas,
           (LoaderName("canvas", "Canvas"),), SHADER, (_mcmeta.PATH,),
           "Canvas shader pipeline: a resource pack with assets/*/pipelines/"),
    Format("datapack", "pack", (".zip",), (_mcmeta.PATH, "data/"), datapack.parse,
           (LoaderName("datapack", "Data Pack"),), DATAPACK, (_mcmeta.PATH, "data"), "data pack: pack.mcmeta with data/"),
    Format("resourcepack", "pack", (".zip",), (_mcmeta.PATH, "assets/"), resourcepack.parse,
           (LoaderName("minecraft", "Minecraft"),), RESOURCEPACK, (_mcmeta.PATH, "assets"),
           "resource pack: pack.mcmeta with assets/ (or without data/)"),
    Format("shader", "pack", (".zip",), ("shaders/",), shaderpack.parse,
           (LoaderName("iris", "Iris"), LoaderName("optifine", "OptiFine")), SHADER, (shaderpack.PROPERTIES,),
           "Iris/OptiFine shader pack: shaders/ with its programs"),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
JAR_FORMATS = tuple(f for f in FORMATS if f.reader == "jar")
PACK_FORMATS = tuple(f for f in FORMATS if f.reader == "pack")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


# Every loader a file can yield, declaration order (a loader several formats yield is declared
# by the first; the modpack's are the mod loaders' names).
_LOADER_INFO: dict[str, LoaderName] = {}
for _f in FORMATS:
    for _l in _f.loaders:
        _LOADER_INFO.setdefault(_l.name, _l)
LOADERS: tuple[str, ...] = tuple(_LOADER_INFO)
# A stored dependency whose manifest's loader is unknown is read in Fabric's predicate dialect,
# which also reads a bare version or a comparison (the site's dependency sentences).
FALLBACK_RANGE_DIALECT: str = _FABRIC.name
LOADER_TITLES: dict[str, str] = {n: l.title for n, l in _LOADER_INFO.items()}
# Which files a loader runs (the dependency resolver's candidates): itself and what it also runs.
LOADER_RUNS: dict[str, tuple[str, ...]] = {n: (n, *l.also_runs) for n, l in _LOADER_INFO.items()}
SUFFIXES: tuple[str, ...] = _unique(s for f in FORMATS for s in f.suffixes)
JAR_SUFFIXES: tuple[str, ...] = _unique(s for f in JAR_FORMATS for s in f.suffixes)
PACK_SUFFIXES: tuple[str, ...] = _unique(s for f in PACK_FORMATS for s in f.suffixes)
# The manifests a mod's source tree carries in a module's src/main/resources, in probing order.
SOURCE_MANIFESTS: tuple[str, ...] = _unique(p for f in JAR_FORMATS for p in f.source_paths)
# Loaders whose builds are commonly a module named after them (fabric/, neoforge/ ...): probed
# after the single-module layout.
MODULE_LOADERS: tuple[str, ...] = _unique(l.name for f in JAR_FORMATS if f.source_paths for l in f.loaders)


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
    "BY_NAME", "DATAPACK", "DEFAULT_PROJECT_TYPE", "FORMATS", "Format", "JAR_FORMATS", "JAR_SUFFIXES", "LOADERS",
    "LOADER_RUNS", "LOADER_TITLES", "LoaderName", "MOD", "MODPACK", "MODULE_LOADERS", "PACK_FORMATS", "PACK_SUFFIXES", "PROJECT_TYPE_TITLES",
    "PLUGIN", "PROJECT_TYPES", "RESOURCEPACK", "SHADER", "SOURCE_MANIFESTS", "SUFFIXES", "all_project_types",
    "loaders_of", "no_manifest_reason", "project_type_of", "supported_project_types", "v2_project_type",
    "v2_project_types",
]
