"""Pack formats → Minecraft versions, through the table generated from Mojang's version metadata.

``data/pack_formats.json`` is written by ``libs/jar/scripts/pack_formats.py`` (never by hand):
per game version, the ``[major, minor]`` resource-pack and data-pack formats its client jar's
``version.json`` declares. A pack declares the formats it supports (``pack_format``,
``supported_formats``, ``min_format``/``max_format``); the versions whose own format lies in
that range are the versions the pack is made for. Pure: one JSON file read, once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from indexium_jar.gameversions import VersionTable, default_table

PackKind = Literal["resource", "data"]
Format = tuple[int, int]  # (major, minor)
# ``max_format: 74`` means "any minor of 74" (the game reads it as minor 0x7fffffff).
ANY_MINOR = 0x7FFFFFFF
_DATA = Path(__file__).parent / "data" / "pack_formats.json"


@dataclass(frozen=True, slots=True)
class PackVersion:
    id: str
    type: str  # release | snapshot
    release_time: str
    resource: Format
    data: Format


@dataclass(frozen=True, slots=True)
class Mapping:
    versions: tuple[str, ...]
    warnings: tuple[str, ...] = ()


class PackFormatTable:
    """Versions newest first, each with the formats it reads."""

    def __init__(self, versions: list[PackVersion], source: str = "") -> None:
        self.versions = tuple(sorted(versions, key=lambda v: v.release_time, reverse=True))
        self.source = source
        self.by_id = {v.id: v for v in self.versions}

    def known(self, kind: PackKind) -> tuple[Format, Format] | None:
        """The lowest and highest format of ``kind`` the table knows."""
        formats = [getattr(v, kind) for v in self.versions]
        return (min(formats), max(formats)) if formats else None

    def versions_for(self, kind: PackKind, low: Format, high: Format,
                     table: VersionTable | None = None) -> Mapping:
        """Versions whose ``kind`` format lies in ``[low, high]``, newest first.

        With ``table`` (the Minecraft versions table), only versions it knows are returned, in
        its order, as every other parser's game versions are; a range reaching outside what the
        pack table knows is said in a warning instead of being guessed.
        """
        ids = [v.id for v in self.versions if low <= getattr(v, kind) <= high]
        notes: list[str] = []
        bounds = self.known(kind)
        if bounds and low < bounds[0]:
            notes.append(f"{kind} pack format {_show(low)} is older than Mojang's version metadata records "
                         f"(it starts at {self.versions[-1].id}, format {_show(bounds[0])}); those versions are not listed")
        if bounds and high > bounds[1] and (high[0] > bounds[1][0] or high[1] != ANY_MINOR):
            notes.append(f"{kind} pack format {_show(high)} is newer than the pack-format table "
                         f"(newest {self.versions[0].id}, format {_show(bounds[1])}); regenerate it to list those versions")
        if table is not None:
            ids = [i for i in table.newest_first(ids) if i in table.by_id]
        return Mapping(tuple(ids), tuple(notes))


def _show(fmt: Format) -> str:
    return str(fmt[0]) if fmt[1] in (0, ANY_MINOR) else f"{fmt[0]}.{fmt[1]}"


def _format(value: Any) -> Format:
    return (int(value[0]), int(value[1]))


def table_from(doc: dict[str, Any]) -> PackFormatTable:
    rows = [PackVersion(id=str(v["id"]), type=str(v["type"]), release_time=str(v["releaseTime"]),
                        resource=_format(v["resource"]), data=_format(v["data"]))
            for v in doc["versions"]]
    return PackFormatTable(rows, str(doc.get("source", "")))


def load_pack_formats(path: str | Path | None = None) -> PackFormatTable:
    return table_from(json.loads(Path(path or _DATA).read_text(encoding="utf-8")))


@lru_cache(maxsize=1)
def default_pack_formats() -> PackFormatTable:
    return load_pack_formats()


def default_tables() -> tuple[PackFormatTable, VersionTable]:
    return default_pack_formats(), default_table()
