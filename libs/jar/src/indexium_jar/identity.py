"""Which project a release's file belongs to: a project is (repository id, identity key).

A repository may publish several projects (``mono_alpha`` and ``mono_beta`` in one release, a
mod beside its resource pack, a modpack beside its server pack). Each readable file of a
release is given an identity key, and the files of one key are one project's version:

* **a jar**: its primary manifest's id, lower-cased, without a loader suffix (``mymod``,
  ``mymod-forge``, ``mymod_neoforge`` are all ``mymod``; the suffixes are the jar formats'
  loader names from the registry, after ``-``, ``_`` or ``.``). Jars of one key whose ids
  differ are loader variants of one project only when they share one display name (compared
  without case, punctuation or loader words); a variant with a name of its own is its own
  project keyed by its full id. Jars with the same id are always one project.
* **a pack** (``indexium_jar.packs``): ``<project type>:<name>``, the name being the pack's own
  (a modpack's ``name``) or, for packs that carry none, the file's name without its suffix and
  from the first version-looking part on (``Crisp-1.2.zip`` and ``Crisp-1.3.zip`` are
  ``resourcepack:crisp``). The type keeps a pack apart from the mod whose id is its name.

``docs/indexer.md`` ("One repository, several projects") says the same; migration
``0025_project_identity`` fills the key of projects stored before with the same rules in SQL
(``tests/component/indexer/test_identity_migration.py`` holds the two to one answer).
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from indexium_jar import formats

KEY_MAX = 160  # mods.identity's CHECK: a manifest id is at most 128 characters, a pack's key bounded too

# The jar formats' loader names, longest first so "neoforge" is tried before "forge".
JAR_LOADERS: tuple[str, ...] = tuple(sorted({l.name for f in formats.JAR_FORMATS for l in f.loaders},
                                            key=lambda n: (-len(n), n)))
_LOADER_SUFFIX = re.compile(r"^(.*[^-_.])[-_.](?:" + "|".join(map(re.escape, JAR_LOADERS)) + r")\Z")
# Where a pack file's name stops being its name: a separator, then a version ("-1.2", "_v4",
# "-mc1.20", "-r3").
_VERSION_PART = re.compile(r"[-_+ .](?:v|mc|r)?[0-9]")
# ASCII case folding alone, as PostgreSQL's lower() folds under any collation (the migration's
# rule must give the same key): "Ü" stays itself in both.
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_NOT_ALNUM = re.compile(r"[^0-9a-z]+")
_LOADER_WORDS = re.compile(r"\b(?:" + "|".join(map(re.escape, JAR_LOADERS)) + r")\b")


def fold(text: str) -> str:
    """Lower-cased as identity keys are: ASCII letters only."""
    return text.translate(_ASCII_LOWER)


def mod_key(mod_id: str) -> str:
    """A jar's identity key from its manifest id: lower-cased, a loader suffix dropped."""
    low = fold(mod_id.strip())
    m = _LOADER_SUFFIX.match(low)
    return (m.group(1) if m and len(m.group(1)) >= 2 else low)[:KEY_MAX]


def pack_name(file_name: str) -> str:
    """A pack file's name as its identity reads it: no suffix, nothing from the version on."""
    stem = file_name.rsplit("/", 1)[-1]
    for suffix in sorted(formats.PACK_SUFFIXES, key=len, reverse=True):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    m = _VERSION_PART.search(stem, 1)  # a name starts with at least one character of its own
    cut = stem[: m.start()] if m else stem
    return cut.strip(" -_.+") or stem


def pack_key(project_type: str, name: str | None, file_name: str) -> str:
    """A pack's identity key: its type and its own name, else its file's (``pack_name``)."""
    shown = fold(" ".join((name or "").split())) or fold(pack_name(file_name))
    return f"{project_type}:{shown}"[:KEY_MAX]


def same_name(a: str | None, b: str | None) -> bool:
    """Do two display names name one project? Case, punctuation and loader words aside."""
    def norm(text: str | None) -> str:
        return _NOT_ALNUM.sub("", _LOADER_WORDS.sub(" ", (text or "").lower()))
    return norm(a) == norm(b)


@dataclass(frozen=True)
class Item:
    """One readable file of a release: its position, full id (lower-cased manifest id, or the
    pack's key), display name, and whether it is a pack."""

    index: int
    full_id: str
    name: str | None
    pack: bool


@dataclass
class Group:
    """One project's files in a release: its identity key and the positions of its files, in
    release order (the first is the version's primary file)."""

    key: str
    indexes: list[int] = field(default_factory=list)


def group(items: Sequence[Item]) -> list[Group]:
    """The projects a release's files make, in the order of their first file."""
    by_key: dict[str, list[Item]] = {}
    for item in items:
        by_key.setdefault(item.full_id if item.pack else mod_key(item.full_id), []).append(item)
    groups: list[Group] = []
    for key, members in by_key.items():
        # Units of one full id stay together; units of differing names are different projects.
        units: dict[str, list[Item]] = {}
        for m in members:
            units.setdefault(m.full_id, []).append(m)
        clusters: list[list[list[Item]]] = []
        for unit in units.values():
            home = next((c for c in clusters if same_name(c[0][0].name, unit[0].name)), None)
            if home is None:
                clusters.append([unit])
            else:
                home.append(unit)
        # The cluster holding the bare id (or else the first) keeps the key; the others are
        # keyed by their own full id.
        keeper = next((c for c in clusters if any(u[0].full_id == key for u in c)), clusters[0])
        for cluster in clusters:
            own = key if cluster is keeper else cluster[0][0].full_id[:KEY_MAX]
            groups.append(Group(own, sorted(m.index for u in cluster for m in u)))
    groups.sort(key=lambda g: g.indexes[0])
    return groups


__all__ = ["Group", "Item", "JAR_LOADERS", "KEY_MAX", "fold", "group", "mod_key", "pack_key", "pack_name", "same_name"]
