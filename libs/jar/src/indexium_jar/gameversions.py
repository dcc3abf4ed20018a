"""Minecraft versions: the shipped table, and the loaders' range semantics over it.

Two dialects are evaluated against the table, each the way its loader does it:

* Fabric/Quilt predicates compare *normalized* Minecraft versions as semver, exactly
  like fabric-loader (``McVersionLookup.normalizeVersion``, ``SemanticVersionImpl``,
  ``VersionPredicateParser``, ``VersionComparisonOperator``).
* (Neo)Forge ``versionRange`` strings are Maven ranges (``MavenVersionAdapter`` →
  ``VersionRange.createFromVersionSpec``), compared ComparableVersion-style; they are
  evaluated over *release* versions only, because (Neo)Forge builds target releases.

Everything here is pure; :func:`load_versions` reads one JSON file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

PredicateKind = Literal["fabric", "quilt", "maven", "exact", "minimum"]
_DATA = Path(__file__).parent / "data" / "minecraft_versions.json"


@dataclass(frozen=True, slots=True)
class McVersion:
    id: str
    type: str  # release | snapshot | old_beta | old_alpha (Mojang's vocabulary)
    release_time: str  # ISO 8601
    normalized: str  # fabric-loader's semver-like form, e.g. 23w13a -> 1.20-alpha.23.13.a


class VersionTable:
    """Versions newest first, as in Mojang's version_manifest_v2.json."""

    def __init__(self, versions: list[McVersion]) -> None:
        self.versions = tuple(versions)
        self.by_id = {v.id: v for v in versions}
        self.releases = tuple(v for v in versions if v.type == "release")
        self._rank = {v.id: i for i, v in enumerate(versions)}

    def newest_first(self, ids: Iterable[str]) -> list[str]:
        """Distinct ``ids`` in table order, newest first ("1.21.10" before "1.21.2"); ids the
        table does not know go last, by name."""
        unknown = len(self._rank)
        return sorted(set(ids), key=lambda i: (self._rank.get(i, unknown), i))


@dataclass(frozen=True, slots=True)
class Expansion:
    versions: tuple[str, ...]
    warnings: tuple[str, ...] = ()


# --- normalization (McVersionLookup) -------------------------------------------------

_RELEASE = re.compile(r"\d+\.\d+(\.\d+)?")
_PRE = re.compile(r"(\d+\.\d+(?:\.\d+)?)(?:-pre| Pre-[Rr]elease )(\d+)")
_RC = re.compile(r"(\d+\.\d+(?:\.\d+)?)(?:-rc| [Rr]elease Candidate )(\d+)")
# Year-based scheme (26.1-snapshot-1, 26.1-pre-1, 26.1-rc-1): the target is in the name.
_YEAR_STAGE = re.compile(r"(\d+\.\d+(?:\.\d+)?)-(snapshot|pre|rc)-(\d+)")
_WEEKLY = re.compile(r"(?:Snapshot )?(\d+)w0?(0|[1-9]\d*)([a-z])")
_YEAR_STAGE_NAME = {"snapshot": "alpha", "pre": "beta", "rc": "rc"}


def release_of(version_id: str) -> str | None:
    """The release a version belongs to when its name says so (McVersionLookup.getRelease)."""
    if _RELEASE.fullmatch(version_id):
        return version_id
    for pattern in (_PRE, _RC, _YEAR_STAGE):
        if m := pattern.fullmatch(version_id):
            return m.group(1)
    return None


def normalize(version_id: str, release_target: str | None) -> str:
    """``McVersionLookup.normalizeVersion(name, release)``: snapshots → alpha, pre → beta/rc."""
    if _RELEASE.fullmatch(version_id):
        return version_id
    if m := _YEAR_STAGE.fullmatch(version_id):
        return f"{m.group(1)}-{_YEAR_STAGE_NAME[m.group(2)]}.{m.group(3)}"
    if m := _RC.fullmatch(version_id):
        build = int(m.group(2))
        # Loader hack: 1.16's release candidates follow on from its 8 pre-releases.
        return f"{m.group(1)}-rc.{build + 8 if m.group(1) == '1.16' else build}"
    if m := _PRE.fullmatch(version_id):
        # Pre-releases are 'rc' up to and including 1.16, 'beta' afterwards.
        legacy = tuple(int(p) for p in m.group(1).split(".")) <= (1, 16)
        return f"{m.group(1)}-{'rc' if legacy else 'beta'}.{m.group(2)}"
    if (m := _WEEKLY.fullmatch(version_id)) and release_target:
        return f"{release_target}-alpha.{m.group(1)}.{m.group(2)}.{m.group(3)}"
    return _generic_normalize(version_id)


def _generic_normalize(version: str) -> str:
    """The loader's fallback: separate digit/letter runs with '.', map odd characters to '.'."""
    if m := re.fullmatch(r"(?:b|Beta v?)1\.(\d+(\.\d+)?[a-z]?(_\d+)?[a-z]?)", version):
        version = "1.0.0-beta." + m.group(1)
    elif m := re.fullmatch(r"(?:a|Alpha v?)1\.(\d+(\.\d+)?[a-z]?(_\d+)?[a-z]?)", version):
        version = "1.0.0-alpha." + m.group(1)
    out: list[str] = []
    last_digit = last_sep = last_zero = False
    for i, c in enumerate(version):
        if c.isdigit() and c.isascii():
            if i > 0 and not last_digit and not last_sep:
                out.append(".")
            elif last_digit and last_zero:
                out.pop()  # strip leading zero
            last_zero = c == "0" and (not last_digit or last_zero)
            last_sep, last_digit = False, True
        elif c in ".-":
            if last_sep:
                continue
            last_sep, last_digit = True, False
        elif not (c.isascii() and c.isalpha()):
            if last_sep:
                continue
            c, last_sep, last_digit = ".", True, False
        else:
            if last_digit:
                out.append(".")
            last_sep = last_digit = False
        out.append(c)
    return "".join(out).strip(".")


# Weekly snapshots → the release they lead to, by (year, first week, last week). Before
# 18w47b the game carried no release_target, so fabric-loader keeps such a table
# (McVersionLookup.getRelease); later ranges are what each snapshot's version.json says.
# Needed because snapshots overlap patch releases (20w45a is 1.17, not 1.16.5).
_WEEKLY_TARGETS = (
    (11, 47, 53, "1.1"), (12, 1, 1, "1.1"), (12, 3, 8, "1.2.1"), (12, 15, 30, "1.3.1"),
    (12, 32, 42, "1.4.2"), (12, 49, 50, "1.4.6"), (13, 1, 10, "1.5"), (13, 11, 12, "1.5.1"),
    (13, 16, 26, "1.6"), (13, 36, 43, "1.7.2"), (13, 47, 49, "1.7.4"), (14, 2, 34, "1.8"),
    (15, 31, 53, "1.9"), (16, 1, 7, "1.9"), (16, 14, 15, "1.9.3"), (16, 20, 21, "1.10"),
    (16, 32, 44, "1.11"), (16, 50, 50, "1.11.1"), (17, 6, 18, "1.12"), (17, 31, 31, "1.12.1"),
    (17, 43, 53, "1.13"), (18, 1, 22, "1.13"), (18, 30, 33, "1.13.1"), (18, 43, 53, "1.14"),
    (19, 1, 14, "1.14"), (19, 34, 46, "1.15"), (20, 6, 22, "1.16"), (20, 27, 30, "1.16.2"),
    (20, 45, 53, "1.17"), (21, 1, 20, "1.17"), (21, 37, 44, "1.18"), (22, 3, 7, "1.18.2"),
    (22, 11, 19, "1.19"), (22, 24, 24, "1.19.1"), (22, 42, 46, "1.19.3"), (23, 3, 7, "1.19.4"),
    (23, 12, 18, "1.20"), (23, 31, 35, "1.20.2"), (23, 40, 46, "1.20.3"), (23, 51, 53, "1.20.5"),
    (24, 1, 14, "1.20.5"), (24, 18, 21, "1.21"), (24, 33, 40, "1.21.2"), (24, 44, 46, "1.21.4"),
    (25, 1, 10, "1.21.5"), (25, 14, 21, "1.21.6"), (25, 31, 37, "1.21.9"), (25, 41, 46, "1.21.11"),
)


def _known_weekly_target(version_id: str) -> str | None:
    if not (m := _WEEKLY.fullmatch(version_id)):
        return None
    year, week = int(m.group(1)), int(m.group(2))
    return next((t for y, lo, hi, t in _WEEKLY_TARGETS if y == year and lo <= week <= hi), None)


def _bump(release: str) -> str:
    parts = release.split(".")
    if len(parts) == 2:
        return release + ".1"
    return ".".join(parts[:-1] + [str(int(parts[-1]) + 1)])


def _build_table(raw_versions: list[dict[str, Any]]) -> VersionTable:
    rows = [
        (str(v["id"]), str(v.get("type", "release")), str(v.get("releaseTime", "")), v.get("releaseTarget"))
        for v in raw_versions
        if isinstance(v, dict) and "id" in v
    ]
    chronological = sorted(rows, key=lambda r: r[2])
    targets: dict[str, str | None] = {}
    for i, (vid, vtype, _, explicit) in enumerate(chronological):
        if explicit or vtype == "release" or release_of(vid) or _known_weekly_target(vid):
            targets[vid] = explicit or release_of(vid) or _known_weekly_target(vid)
            continue
        # A weekly snapshot belongs to the next release published after it (what the
        # game's version.json "release_target" says); if none yet, to the next patch.
        later = next((r[0] for r in chronological[i + 1 :] if r[1] == "release"), None)
        earlier = next((r[0] for r in reversed(chronological[:i]) if r[1] == "release"), None)
        targets[vid] = later or (_bump(earlier) if earlier and _RELEASE.fullmatch(earlier) else None)
    return VersionTable([McVersion(vid, t, ts, normalize(vid, targets[vid])) for vid, t, ts, _ in rows])


def table_from(raw_versions: list[dict[str, Any]]) -> VersionTable:
    """A table from version entries shaped like Mojang's (``id``, ``type``, ``releaseTime``,
    optional ``releaseTarget``), newest first: e.g. the rows stored by
    ``indexium_ops minecraft-versions refresh``."""
    return _build_table(raw_versions)


def load_versions(path: str | Path | None = None) -> VersionTable:
    """Load a version list: the shipped snapshot, or a newer Mojang version_manifest_v2.json.

    Both have the shape ``{"versions": [{"id", "type", "releaseTime"}, ...]}`` newest first;
    an optional ``releaseTarget`` per entry overrides the snapshot→release inference.
    """
    doc = json.loads(Path(path or _DATA).read_text(encoding="utf-8"))
    return _build_table(doc["versions"] if isinstance(doc, dict) else doc)


@lru_cache(maxsize=1)
def default_table() -> VersionTable:
    return load_versions()


# --- evaluation -----------------------------------------------------------------------


def evaluate(kind: PredicateKind, raw: Any, table: VersionTable | None = None) -> Expansion:
    """Concrete versions (newest first) that ``raw`` admits, plus why some could not be read.

    Memoized per (kind, predicate, table): mods share a few hundred predicates (">=1.20",
    "[1.20.1,1.21)"), and testing one against every version of a real table (~800) is the
    costliest step of parsing a manifest.
    """
    table = table or default_table()
    if isinstance(raw, str):
        return _evaluate_cached(kind, raw, False, table)
    try:
        key = json.dumps(raw, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return _evaluate(kind, raw, table)
    return _evaluate_cached(kind, key, True, table)


@lru_cache(maxsize=4096)
def _evaluate_cached(kind: PredicateKind, key: str, is_json: bool, table: VersionTable) -> Expansion:
    return _evaluate(kind, json.loads(key) if is_json else key, table)


def _evaluate(kind: PredicateKind, raw: Any, table: VersionTable) -> Expansion:
    # Imported here: the manifests package imports this module at load time.
    from indexium_jar.manifests.version_syntax import PredicateError, fabric_predicate_any, maven_compare, quilt_predicate

    try:
        if kind in ("fabric", "quilt"):
            test = fabric_predicate_any(raw) if kind == "fabric" else quilt_predicate(raw)
            return Expansion(tuple(v.id for v in table.versions if test(v.normalized)))
        if kind == "maven":
            return _evaluate_maven(str(raw), table)
        if kind == "exact":
            found = str(raw).strip() in table.by_id
            note = () if found else (f"Minecraft version {raw!r} is not in the versions table",)
            return Expansion((str(raw).strip(),) if found else (), note)
        if kind == "minimum":
            if not re.fullmatch(r"\d+(\.\d+)*", str(raw).strip()):
                raise PredicateError("a minimum must be a plain version such as 1.13")
            return Expansion(tuple(v.id for v in table.releases if maven_compare(v.id, str(raw)) >= 0))
    except PredicateError as exc:
        return Expansion((), (f"unreadable version predicate {raw!r}: {exc}; no constraint recorded",))
    raise ValueError(f"unknown predicate kind {kind!r}")


def expand(kind: PredicateKind, raw: Any, table: VersionTable | None = None) -> tuple[str, ...]:
    return evaluate(kind, raw, table).versions


def _evaluate_maven(raw: str, table: VersionTable) -> Expansion:
    from indexium_jar.manifests.version_syntax import PredicateError, parse_maven_range

    spec = raw.strip()
    if spec in ("", "*"):
        return Expansion(tuple(v.id for v in table.releases))
    rng = parse_maven_range(spec)
    if rng.soft is not None:
        # Maven treats a bare version as a *recommendation* that admits every version.
        # We record the one version named (when it is real) so the index stays useful.
        if not re.fullmatch(r"\d[0-9A-Za-z._+-]*", rng.soft):
            raise PredicateError("not a Maven range nor a version (the loader would accept anything)")
        hit = (rng.soft,) if rng.soft in table.by_id else ()
        return Expansion(hit, (f"versionRange {raw!r} is a soft requirement (Maven admits any version); "
                               "recorded as that version only",))
    return Expansion(tuple(v.id for v in table.releases if rng.contains(v.id)))


# --- game versions as players read them ----------------------------------------------


def compact_versions(versions: Iterable[str], releases: Iterable[str]) -> list[str]:
    """``["1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.19.2"]`` -> ``["1.19.2", "1.20.1–1.20.4"]``:
    runs of consecutive Minecraft releases (``releases``: every release, newest first, e.g.
    ``[v.id for v in table.releases]``) as one range, oldest first; snapshots and versions
    the table does not know are listed as they are, after the ranges. Used by the web site's
    pages and by the notify payloads (one function: both say the same thing)."""
    versions = list(versions)
    index = {v: i for i, v in enumerate(releases)}
    known = sorted({v for v in versions if v in index}, key=lambda v: -index[v])  # oldest first
    groups: list[list[str]] = []
    for v in known:
        if groups and index[groups[-1][-1]] - index[v] == 1:
            groups[-1].append(v)
        else:
            groups.append([v])
    out = [g[0] if len(g) == 1 else f"{g[0]}–{g[-1]}" for g in groups]
    seen = set(known)
    for v in versions:  # snapshots and unknown versions, as given (newest first)
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def is_release(version_id: str, table: VersionTable | None = None) -> bool:
    """A full release (not a snapshot, pre-release or release candidate): the table's word
    when it knows the id, else its name (``1.21.11`` is one, ``1.22-pre1`` and ``25w03a`` not)."""
    table = table or default_table()
    known = table.by_id.get(version_id)
    if known is not None:
        return known.type == "release"
    return _RELEASE.fullmatch(version_id) is not None


def shown_versions(versions: Iterable[str], table: VersionTable | None = None, *,
                   snapshots: bool = False) -> tuple[list[str], int]:
    """What a page shows of a file's or mod's game versions: (compact ranges, how many
    snapshots/pre-releases were left out). Snapshots and pre-releases are left out unless
    ``snapshots`` (the visitor asked) or they are all there is (a snapshot-only mod)."""
    table = table or default_table()
    versions = list(versions)
    releases = [v for v in versions if is_release(v, table)]
    hidden = 0
    if releases and not snapshots:
        hidden = len(versions) - len(releases)
        versions = releases
    return compact_versions(versions, [v.id for v in table.releases]), hidden
