"""``pack.mcmeta``: the formats a resource or data pack declares, and its description.

Three generations, all still written (a pack for many versions carries several):
``pack_format`` (one format), ``supported_formats`` (23w31a: an int, ``[low, high]`` or
``{"min_inclusive", "max_inclusive"}``), and ``min_format``/``max_format`` (25w31a: an int,
``[major]`` or ``[major, minor]``; an int ``max_format`` admits every minor). The pack is made
for the hull of everything it declares: older games read ``pack_format``/
``supported_formats``, newer ones ``min_format``/``max_format``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from indexium_jar.manifests._common import compact_json, problem
from indexium_jar.model import GameVersions, ManifestProblem
from indexium_jar.packformats import ANY_MINOR, Format, PackKind
from indexium_jar.packs._common import Archive, description_of, read_json

PATH = "pack.mcmeta"
_MAX_FORMAT = 1 << 20  # no pack format comes near this; larger numbers are noise


@dataclass(frozen=True)
class Meta:
    description: str | None
    game_versions: GameVersions
    warnings: tuple[str, ...]


def _int(value: Any) -> int | None:
    """A JSON number as the game's codec reads it: Gson's ``getAsInt`` truncates ``101.1`` to 101
    (seen in a real Canvas pack: ``"max_format": 101.1``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return int(value) if 0 <= value <= _MAX_FORMAT else None


def _range_of(value: Any) -> tuple[int, int] | None:
    """``supported_formats`` / an overlay's ``formats``: int, [a, b] or {min_inclusive, max_inclusive}."""
    if (single := _int(value)) is not None:
        return single, single
    if isinstance(value, list) and len(value) == 2 and None not in (lo := (_int(value[0]), _int(value[1]))):
        return lo[0], lo[1]  # type: ignore[return-value]
    if isinstance(value, dict):
        lo_, hi_ = _int(value.get("min_inclusive")), _int(value.get("max_inclusive"))
        if lo_ is not None and hi_ is not None:
            return lo_, hi_
    return None


def _version(value: Any, upper: bool) -> Format | None:
    """``min_format``/``max_format``: 74, [74] or [74, 1]; a bare major as an upper bound admits every minor."""
    if (major := _int(value)) is not None:
        return major, ANY_MINOR if upper else 0
    if isinstance(value, list) and 1 <= len(value) <= 2 and all(_int(v) is not None for v in value):
        if len(value) == 1:
            return int(value[0]), ANY_MINOR if upper else 0
        return int(value[0]), int(value[1])
    return None


def declared_range(pack: dict[str, Any]) -> tuple[tuple[Format, Format] | None, list[str], str]:
    """The hull of every format declaration, the notes on odd ones, and the raw declaration."""
    lows: list[Format] = []
    highs: list[Format] = []
    notes: list[str] = []
    raw: dict[str, Any] = {}
    if "pack_format" in pack:
        raw["pack_format"] = pack["pack_format"]
        if (fmt := _int(pack["pack_format"])) is not None:
            lows.append((fmt, 0))
            highs.append((fmt, ANY_MINOR))
        else:
            notes.append(f"pack_format {compact_json(pack['pack_format'])[:40]} is not a format number; ignored")
    if "supported_formats" in pack:
        raw["supported_formats"] = pack["supported_formats"]
        if (rng := _range_of(pack["supported_formats"])) is not None and rng[0] <= rng[1]:
            lows.append((rng[0], 0))
            highs.append((rng[1], ANY_MINOR))
        else:
            notes.append("supported_formats is neither a number, [min, max] nor {min_inclusive, max_inclusive}; ignored")
    new = [key for key in ("min_format", "max_format") if key in pack]
    if new:
        raw.update({key: pack[key] for key in new})
        low = _version(pack.get("min_format"), upper=False)
        high = _version(pack.get("max_format"), upper=True)
        if low is None or high is None or low > high:
            notes.append("min_format/max_format must both be a format ([major, minor] or major) with min <= max; ignored")
        else:
            lows.append(low)
            highs.append(high)
    if not lows:
        return None, notes, compact_json(raw) if raw else ""
    return (min(lows), max(highs)), notes, compact_json(raw)


def parse(data: bytes, archive: Archive, kind: PackKind) -> Meta | ManifestProblem:
    doc, warnings, failed = read_json(data, PATH)
    if failed is not None:
        return failed
    pack = doc.get("pack")
    if not isinstance(pack, dict):
        return problem(PATH, "invalid_manifest", 'pack.mcmeta has no "pack" object (the game rejects the pack)')
    rng, notes, raw = declared_range(pack)
    warnings += notes
    if rng is None:
        warnings.append("pack.mcmeta declares no usable pack format; game versions not stated")
        game = GameVersions()
    else:
        mapped = archive.pack_table.versions_for(kind, rng[0], rng[1], archive.table)
        warnings += mapped.warnings
        game = GameVersions(source=f"pack.mcmeta ({kind} pack format)", raw=raw[:500], versions=mapped.versions)
    return Meta(description=description_of(pack.get("description")), game_versions=game, warnings=tuple(warnings))
