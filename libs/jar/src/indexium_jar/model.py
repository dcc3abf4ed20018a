"""The one normalized model every manifest parser produces.

A jar yields one :class:`ModRecord` per loader manifest it carries (a multi-loader
build gives several, and their ids may differ). Parsers never raise on bad input:
problems they can live with become ``warnings`` on the record; problems that make
a manifest unusable become a :class:`ManifestProblem` in :class:`ParseResult`.
"""

from __future__ import annotations

from typing import Literal

import msgspec

# Loader and project-type names are the format registry's (``indexium_jar.formats``: LOADERS,
# PROJECT_TYPES), declared there once beside each parser; here they are plain strings.
Loader = str  # one of indexium_jar.formats.LOADERS (Modrinth's loader names)
ProjectType = str  # one of indexium_jar.formats.PROJECT_TYPES (Modrinth's project types)
PackLoader = str  # a pack format's loader: minecraft (resource packs), datapack, a shader loader, a modpack's
FileEnv = Literal["required", "optional", "unsupported"]
Environment = Literal["client", "server", "both"]
DependencyKind = Literal["required", "optional", "incompatible", "embedded"]


class Person(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str
    role: str | None = None
    contact: dict[str, str] = {}


class Dependency(msgspec.Struct, frozen=True, omit_defaults=True):
    mod_id: str
    kind: DependencyKind
    # The range exactly as the manifest wrote it (a Fabric predicate, a Maven range, ...);
    # None when the manifest gave no constraint.
    version_range: str | None = None
    side: Environment = "both"
    # True when the loader only warns about this dependency instead of refusing to start:
    # Fabric's conflicts (its solver ignores them, ResultAnalyzer warns), recommends and
    # suggests (a mismatched version is a warning), NeoForge's DISCOURAGED. Breaks,
    # INCOMPATIBLE, and an optional dependency of Quilt or (Neo)Forge that is present in the
    # wrong version stop the game.
    warn_only: bool = False


class GameVersions(msgspec.Struct, frozen=True, omit_defaults=True):
    # Where the information came from, e.g. "depends.minecraft", "MANIFEST.MF:Fabric-Minecraft-Version",
    # "dependencies.minecraft.versionRange", "mcmod.info:mcversion", "loaderVersion"; None when unknown.
    source: str | None = None
    # The predicate/range as written (a JSON-encoded list when the manifest gave an array).
    raw: str | None = None
    # Concrete Minecraft versions the predicate admits, from the versions table, newest first.
    versions: tuple[str, ...] = ()
    # True when the manifest declared no Minecraft requirement and the versions were deduced
    # from another fact: the (Neo)Forge loader version it needs, or the compile target Loom
    # wrote to MANIFEST.MF (Fabric-Minecraft-Version). Such versions are a best guess.
    inferred: bool = False


class ModRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    loader: Loader
    manifest_path: str  # the entry the record came from, e.g. "fabric.mod.json"
    mod_id: str
    # As the loader sees it (``${file.jarVersion}`` already substituted). None where the format
    # allows no version and the manifest gives none (mcmod.info, bungee.yml,
    # velocity-plugin.json, litemod.json); formats whose loader defaults it (mods.toml: "1")
    # or requires it (fabric, quilt, plugin.yml) always have one.
    version: str | None
    name: str | None = None
    description: str | None = None  # newlines kept as written
    authors: tuple[Person, ...] = ()
    licenses: tuple[str, ...] = ()
    links: dict[str, str] = {}  # homepage, sources, issues, ... (absolute URLs only)
    icon: str | None = None  # path inside the jar of the best icon (largest when a size map is given)
    environment: Environment = "both"
    game_versions: GameVersions = GameVersions()
    dependencies: tuple[Dependency, ...] = ()
    nested_jars: tuple[str, ...] = ()  # paths of jar-in-jar entries
    warnings: tuple[str, ...] = ()


class PackFile(msgspec.Struct, frozen=True, omit_defaults=True):
    """One entry of a modpack's ``files`` (modrinth.index.json), validated."""

    path: str  # relative, inside the instance directory (no "..", no absolute path)
    hashes: dict[str, str]  # "sha1" and "sha512", lower-case hex
    downloads: tuple[str, ...]
    file_size: int | None = None
    env_client: FileEnv | None = None
    env_server: FileEnv | None = None
    # The downloads whose host is outside Modrinth's allow-list for modpacks: the indexer
    # holds such a pack for review instead of listing it.
    off_host_downloads: tuple[str, ...] = ()


class PackRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """A resource pack, data pack, shader pack or modpack, normalized like :class:`ModRecord`."""

    project_type: ProjectType
    loaders: tuple[PackLoader, ...]
    manifest_path: str  # "pack.mcmeta", "modrinth.index.json", "shaders/shaders.properties", ...
    name: str | None = None  # the modpack's name; packs without one leave it to the release
    version: str | None = None  # the modpack's versionId; packs carry none
    description: str | None = None  # plain text (a text component flattened)
    icon: str | None = None  # "pack.png" when the archive has it
    game_versions: GameVersions = GameVersions()
    files: tuple[PackFile, ...] = ()  # modpacks: what the launcher downloads
    nested_jars: tuple[str, ...] = ()  # modpacks: jars under overrides/ (scanned like jar-in-jar)
    held_for_review: tuple[str, ...] = ()  # why the indexer must not list it before a review
    warnings: tuple[str, ...] = ()


class PackSkip(msgspec.Struct, frozen=True):
    """An archive that is not a pack Indexium lists, and why (docs/indexer.md, "Packs")."""

    code: str  # "curseforge_modpack", "sources_archive", "legacy_texture_pack", "not_a_pack"
    reason: str  # safe human text


class PackParseResult(msgspec.Struct, frozen=True):
    record: PackRecord | None = None
    problems: tuple[ManifestProblem, ...] = ()
    skip: PackSkip | None = None


class ManifestProblem(msgspec.Struct, frozen=True):
    manifest_path: str
    code: str  # machine code, e.g. "invalid_json", "missing_id", "template_leak"
    message: str  # safe human text


class ParseResult(msgspec.Struct, frozen=True):
    records: tuple[ModRecord, ...]
    problems: tuple[ManifestProblem, ...] = ()
    # Every jar-in-jar entry of the jar, whichever loader would load it: declared by a
    # manifest (fabric/quilt ``jars``, JarJar metadata) or found by name (META-INF/jars/,
    # META-INF/jarjar/). Filled even when no record could be made (library jars).
    nested_jars: tuple[str, ...] = ()
    # Entries of the jar this parse consulted but was not given (today only
    # META-INF/MANIFEST.MF, read for ${file.jarVersion}, Fabric-Minecraft-Version and
    # FMLModType). Non-empty means the result is provisional: read them and parse again.
    wants: tuple[str, ...] = ()
