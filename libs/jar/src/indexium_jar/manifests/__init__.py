"""Mod-jar manifests → normalized :class:`~indexium_jar.model.ModRecord` s.

The indexer fetches the entries named in :data:`WANTED_NAMES` and calls :func:`parse_jar`.
Each parser module declares its formats (``FORMATS``, :mod:`indexium_jar.formatspec`); the
registry (:mod:`indexium_jar.formats`) gives the parse order and the entries.
Every parser is pure over bytes and never raises: an unusable manifest becomes a
:class:`~indexium_jar.model.ManifestProblem`, a tolerable oddity a warning on its record.
A jar yields one record per loader manifest (multi-loader builds give several, and their
ids may differ, e.g. walljump-fabric / walljump-quilt / walljump).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import msgspec

from indexium_jar import formats as _formats  # the registry; read only inside functions (it imports these parsers)
from indexium_jar.gameversions import VersionTable, default_table
from indexium_jar.manifests import coremod, forge_toml, jarjar, mcmod, quilt
from indexium_jar.manifests._common import Jar, problem
from indexium_jar.manifests.manifest_mf import parse_manifest
from indexium_jar.model import ManifestProblem, ModRecord, ParseResult
from indexium_jar.zip.zipfmt import CentralDirectory

MANIFEST_PATH = "META-INF/MANIFEST.MF"


def __getattr__(name: str) -> frozenset[str]:
    """The entry sets, from the format registry (derived on first use: the registry imports this package)."""
    if name == "LOADER_MANIFESTS":  # the loader manifests alone: a jar without any of these is not a mod
        value = _formats.LOADER_MANIFESTS
    elif name == "WANTED_NAMES":  # every jar entry the indexer should fetch for parse_jar
        value = frozenset([*_formats.JAR_ENTRIES, MANIFEST_PATH, jarjar.PATH])
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


_TOML_PATHS = (forge_toml.FORGE_PATH, forge_toml.NEOFORGE_PATH)
_NESTED_PREFIX = "META-INF/jar"  # META-INF/jars/ (Fabric, Quilt) and META-INF/jarjar/ (Forge, NeoForge)

_LIBRARY_TYPES = ("LIBRARY", "GAMELIBRARY")  # FML ModFile: not a mod, loaded as a library


def entries_to_read(entry_names: Collection[str]) -> tuple[list[str], list[str]]:
    """Which entries of a jar to read before :func:`parse_jar`: ``(required, optional)``.

    Required: every loader manifest present, JarJar metadata, and META-INF/MANIFEST.MF in a
    jar without loader manifest (its FMLModType says whether it is a library). Optional:
    MANIFEST.MF otherwise, since a manifest needs it only for ``${file.jarVersion}`` or a
    missing Minecraft version, which is known after parsing (``ParseResult.wants``). A
    reader fetches optional entries only when they cost no extra request.
    """
    names = entry_names if isinstance(entry_names, (set, frozenset, CentralDirectory)) else set(entry_names)
    loaders = sorted(p for p in _formats.LOADER_MANIFESTS if p in names)
    required = loaders + ([jarjar.PATH] if jarjar.PATH in names else [])
    optional: list[str] = []
    if MANIFEST_PATH in names:
        (optional if loaders else required).append(MANIFEST_PATH)
    return required, optional


def parse_jar(files: Mapping[str, bytes], entry_names: Sequence[str] | CentralDirectory = (),
              table: VersionTable | None = None) -> ParseResult:
    """Parse every manifest present in ``files`` (entry path → bytes).

    ``entry_names`` lists all entries of the jar, or is its central directory (to find
    nested jars, and to tell a jar without MANIFEST.MF from one whose MANIFEST.MF was not
    read: then ``wants`` names it when a parser needed it); ``table`` overrides the shipped Minecraft versions table.
    """
    names = entry_names or tuple(files)
    known = MANIFEST_PATH in files or MANIFEST_PATH not in names
    jar = Jar(manifest=parse_manifest(files[MANIFEST_PATH]) if MANIFEST_PATH in files else {},
              table=table or default_table(), manifest_known=known)
    records: list[ModRecord] = []
    problems: list[ManifestProblem] = []
    for fmt in _formats.JAR_FORMATS:  # rank order: the order records are reported
        for path in fmt.identified_by:
            if path not in files:
                continue
            try:
                output = fmt.parser(files[path], jar, path)
            except Exception as exc:  # a bug of ours must not lose the jar
                output = [problem(path, "parser_error", f"{type(exc).__name__}: {exc}")]
            records += [o for o in output if isinstance(o, ModRecord)]
            problems += [o for o in output if isinstance(o, ManifestProblem)]
            if fmt.first_entry_only:
                break  # e.g. quilt.mod.json5 wins over quilt.mod.json (ClasspathModCandidateFinder)
    records, problems = _coremod(jar, records, problems)
    records, problems = _jar_level_notes(files, jar, records, problems)
    records, problems, nested = _attach_nested(files, names, records, problems)
    return ParseResult(records=tuple(records), problems=tuple(problems), nested_jars=nested,
                       wants=(MANIFEST_PATH,) if jar.consulted else ())


def _add_warnings(record: ModRecord, *notes: str) -> ModRecord:
    return msgspec.structs.replace(record, warnings=record.warnings + tuple(notes))


def _coremod(jar: Jar, records: list[ModRecord],
             problems: list[ManifestProblem]) -> tuple[list[ModRecord], list[ManifestProblem]]:
    """1.6–1.12 coremods without mcmod.info: their own info file, else MANIFEST.MF's FMLCorePlugin."""
    info = [r for r in records if r.manifest_path in coremod.INFO_PATHS]
    if info and any(r.manifest_path == mcmod.PATH for r in records):
        records = [r for r in records if r.manifest_path not in coremod.INFO_PATHS]  # FML's own file wins
    if not records and (record := coremod.from_core_plugin(jar)) is not None:
        records = [record]
    return records, problems


def _jar_level_notes(files: Mapping[str, bytes], jar: Jar, records: list[ModRecord],
                     problems: list[ManifestProblem]) -> tuple[list[ModRecord], list[ManifestProblem]]:
    toml_loaders = ("forge", "neoforge")
    has_toml = any(r.loader in toml_loaders and r.manifest_path != mcmod.PATH for r in records)
    if has_toml and any(r.manifest_path == mcmod.PATH for r in records):
        # A leftover mcmod.info in a 1.13+ jar is never read by FML; the toml is the truth.
        records = [r for r in records if r.manifest_path != mcmod.PATH]
        records = [_add_warnings(r, "mcmod.info also present (ignored by FML 1.13+)")
                   if r.loader in toml_loaders else r for r in records]
    if records:
        # An empty mods.toml beside a real manifest is noise, not a broken jar.
        empty = [p for p in problems if p.code == "empty_manifest"]
        problems = [p for p in problems if p.code != "empty_manifest"]
        records = [_add_warnings(r, *(p.message for p in empty)) if empty else r for r in records]
    if quilt.PATH_JSON5 in files and quilt.PATH_JSON in files:
        records = [_add_warnings(r, "quilt.mod.json ignored: quilt.mod.json5 takes precedence")
                   if r.loader == "quilt" else r for r in records]
    toml_records = [r for r in records if r.manifest_path in _TOML_PATHS]
    # FMLModType (FML 1.13+, ModFile.parseType) explains a jar without any record (a library)
    # and is noted on mods.toml records. For the latter it is checked only when MANIFEST.MF
    # was read anyway (held, or wanted for ${file.jarVersion}): a library jar released with
    # a mods.toml is rare, and asking for MANIFEST.MF at offset 0 of every Forge jar would
    # cost most of them a request (docs/indexer.md, "Request budget").
    consult = not records or (toml_records and jar.manifest_known)
    mod_type = (jar.attribute("FMLModType") or "").strip().upper() if consult else ""
    if mod_type in _LIBRARY_TYPES:
        note = f"MANIFEST.MF FMLModType={mod_type}: FML loads this jar as a library, not a mod"
        forge_like = [r for r in records if r.loader in toml_loaders]
        if forge_like:
            records = [_add_warnings(r, note) if r.loader in toml_loaders else r for r in records]
        else:
            problems.append(problem(MANIFEST_PATH, "library", note))
    return records, problems


def _attach_nested(files: Mapping[str, bytes], entry_names: Sequence[str] | CentralDirectory, records: list[ModRecord],
                   problems: list[ManifestProblem]) -> tuple[list[ModRecord], list[ManifestProblem], tuple[str, ...]]:
    """Per record: the nested jars its loader would load. Per jar: all of them."""
    jarjar_paths, embedded, jarjar_notes = [], [], []
    if jarjar.PATH in files:
        jarjar_paths, embedded, jarjar_notes, failure = jarjar.parse(files[jarjar.PATH])
        if failure:
            problems.append(failure)
    if isinstance(entry_names, CentralDirectory):  # found in the directory's bytes, no pass over its names
        candidates = [e.name for e in entry_names.with_prefix(_NESTED_PREFIX)]
    else:
        candidates = [n for n in entry_names if n.startswith(_NESTED_PREFIX)]
    loom_entries = jarjar.entries_in(candidates, jarjar.FABRIC_DIR)
    jarjar_entries = jarjar.entries_in(candidates, jarjar.JARJAR_DIR)
    declared = [path for r in records for path in r.nested_jars]
    out = []
    for r in records:
        if r.loader in ("fabric", "quilt"):
            nested = _unique([*r.nested_jars, *loom_entries])
            r = msgspec.structs.replace(r, nested_jars=nested)
        elif r.loader in ("forge", "neoforge"):
            nested = _unique([*r.nested_jars, *jarjar_paths, *jarjar_entries])
            r = msgspec.structs.replace(r, nested_jars=nested, dependencies=r.dependencies + tuple(embedded),
                                        warnings=r.warnings + tuple(jarjar_notes))
        out.append(r)
    return out, problems, _unique([*declared, *jarjar_paths, *loom_entries, *jarjar_entries])


def _unique(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


__all__ = ["LOADER_MANIFESTS", "MANIFEST_PATH", "WANTED_NAMES", "entries_to_read", "parse_jar", "parse_manifest"]
