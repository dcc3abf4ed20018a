"""Packs: resource packs, data packs, shader packs and Modrinth modpacks, from their archives.

The same shape as :mod:`indexium_jar.manifests`: the central directory alone tells the
format (:func:`classify`, no entry read, so a pack costs the same Range requests as a jar),
:func:`entries_to_read` names the few small entries its parser needs, and :func:`parse_pack`
turns their bytes into a :class:`~indexium_jar.model.PackRecord` (or a problem, or a skip
with its reason). Nothing here raises on bad input.

Each parser module here declares its formats once (``FORMATS``: suffixes, identifying entries
and how the directory matches, the parser, loaders, project type, source-tree paths, a
one-line description); :mod:`indexium_jar.formats` collects them, and :func:`classify` walks
them in rank order: the names it returns are the registry's format names.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from indexium_jar import formats as _formats  # the registry; read only inside functions (it imports these parsers)
from indexium_jar.formatspec import JAR
from indexium_jar.manifests._common import problem
from indexium_jar.model import PackParseResult
from indexium_jar.packs import notpacks
from indexium_jar.packs._common import Archive


@dataclass(frozen=True)
class Classification:
    """What the central directory says an archive is: a pack format, a mod jar, or a skip."""

    format: str | None = None  # an indexium_jar.formats name (a pack format)
    mod: bool = False  # a loader manifest is present: read it with indexium_jar.manifests
    skip: str | None = None  # a notpacks code


def classify(names: Collection[str], file_name: str = "") -> Classification:
    """The archive's kind from its entry names alone (no entry is read): the first format, in
    the registry's rank order, whose declaration matches (a jar format: a mod jar), else a skip."""
    names = names if isinstance(names, (set, frozenset)) else set(names)
    for fmt in _formats.FORMATS:
        if fmt.is_in(names, file_name):
            return Classification(mod=True) if fmt.reader == JAR else Classification(format=fmt.name)
    return Classification(skip=notpacks.which(names, file_name))


def entries_to_read(names: Collection[str], file_name: str = "") -> list[str]:
    """The entries :func:`parse_pack` needs: all small, usually in the tail read with the directory."""
    kind = classify(names, file_name)
    return _formats.BY_NAME[kind.format].entries(names) if kind.format else []


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
        return _formats.BY_NAME[kind.format].parser(files, archive)
    except Exception as exc:  # a bug of ours must not lose the archive
        return PackParseResult(problems=(problem(kind.format, "parser_error", f"{type(exc).__name__}: {exc}"),))


__all__ = ["Archive", "Classification", "classify", "entries_to_read", "parse_pack"]
