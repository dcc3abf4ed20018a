"""Which Minecraft versions a record targets, and where that came from.

The loaders' own sources come first (a ``minecraft`` dependency); the fallbacks are the
ones the spec documents: Loom's ``Fabric-Minecraft-Version`` manifest attribute, the
(Neo)Forge loader version, mcmod.info's ``mcversion`` convention.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from indexium_jar.gameversions import PredicateKind, VersionTable, evaluate
from indexium_jar.manifests._common import compact_json
from indexium_jar.manifests.version_syntax import PredicateError, parse_maven_range
from indexium_jar.model import GameVersions

# Forge's major version names the Minecraft version it was built for (Forge 41 → 1.19,
# 47 → 1.20.1, ...). A Forge mod declaring only loaderVersion="[43,)" is taken to target
# that release and the later patches of the same minor line ("1.19.x"), since a Forge
# major never spans two minor lines.
FORGE_MAJOR_TO_MINECRAFT = {
    25: "1.13.2", 26: "1.14.2", 27: "1.14.3", 28: "1.14.4", 29: "1.15", 30: "1.15.1",
    31: "1.15.2", 32: "1.16.1", 33: "1.16.2", 34: "1.16.3", 35: "1.16.4", 36: "1.16.5",
    37: "1.17.1", 38: "1.18", 39: "1.18.1", 40: "1.18.2", 41: "1.19", 42: "1.19.1",
    43: "1.19.2", 44: "1.19.3", 45: "1.19.4", 46: "1.20", 47: "1.20.1", 48: "1.20.2",
    49: "1.20.3", 50: "1.20.6", 51: "1.21", 52: "1.21.1", 53: "1.21.3", 54: "1.21.4",
    55: "1.21.5", 56: "1.21.6", 57: "1.21.7", 58: "1.21.8", 59: "1.21.9", 60: "1.21.10",
}


def resolve(kind: PredicateKind, raw: Any, source: str, table: VersionTable) -> tuple[GameVersions, list[str]]:
    expansion = evaluate(kind, raw, table)
    raw_text = raw if isinstance(raw, str) else compact_json(raw)
    return GameVersions(source=source, raw=raw_text, versions=expansion.versions), list(expansion.warnings)


def _lowest_bound(range_text: str) -> str | None:
    try:
        return parse_maven_range(range_text).lowest
    except PredicateError:
        return None


def from_forge_version(range_text: str, source: str, table: VersionTable) -> tuple[GameVersions, list[str]] | None:
    """``[47,)`` (loaderVersion or a ``forge`` dependency) → 1.20.1's minor line from 1.20.1 on."""
    low = _lowest_bound(range_text)
    m = re.match(r"(\d+)", low or "")
    mc = FORGE_MAJOR_TO_MINECRAFT.get(int(m.group(1))) if m else None
    if mc is None:
        return None
    line = mc.rsplit(".", 1)[0] if mc.count(".") == 2 else mc
    versions = tuple(
        v.id for v in table.releases
        if (v.id == line or v.id.startswith(line + ".")) and _patch(v.id) >= _patch(mc)
    )
    note = f"Minecraft versions inferred from {source} {range_text!r} (Forge {m.group(1)} is Minecraft {mc})"
    return GameVersions(source=source, raw=range_text, versions=versions, inferred=True), [note]


def _patch(version: str) -> int:
    parts = version.split(".")
    return int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 0


def neoforge_to_minecraft(version: str) -> str | None:
    """NeoForge numbers itself after Minecraft: 21.1.x → 1.21.1, 20.4.x → 1.20.4, 21.0 → 1.21,
    and with year-based Minecraft 26.1.0.x → 26.1."""
    m = re.match(r"(\d+)\.(\d+)", version)
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    if major >= 26:
        return f"{major}.{minor}"
    if major < 20:
        return None
    return f"1.{major}" if minor == 0 else f"1.{major}.{minor}"


def from_neoforge_version(range_text: str, source: str, table: VersionTable) -> tuple[GameVersions, list[str]] | None:
    low = _lowest_bound(range_text)
    mc = neoforge_to_minecraft(low) if low else None
    if mc is None:
        return None
    versions = (mc,) if mc in table.by_id else ()
    note = f"Minecraft version inferred from {source} {range_text!r} (NeoForge {low} is Minecraft {mc})"
    return GameVersions(source=source, raw=range_text, versions=versions, inferred=True), [note]


def from_named_version(value: str, source: str, table: VersionTable, *, inferred: bool = False) -> tuple[GameVersions, list[str]]:
    """A concrete version named by convention (mcmod.info ``mcversion``, litemod, Loom's attribute).

    Some mcmod.info files put a Maven range there (``[1.12,1.12.2]``); those are evaluated.
    ``inferred``: the value is not a declared requirement (Loom's compile target).
    """
    kind: PredicateKind = "maven" if value.strip().startswith(("[", "(")) else "exact"
    game, notes = resolve(kind, value.strip(), source, table)
    return (msgspec.structs.replace(game, inferred=True) if inferred else game), notes
