"""What every pack parser shares: the archive's context, JSON reading, text components."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from indexium_jar.gameversions import VersionTable, default_table
from indexium_jar.manifests._common import decode_utf8, loads_gson_strict, problem
from indexium_jar.model import ManifestProblem
from indexium_jar.packformats import PackFormatTable, default_pack_formats

MAX_MANIFEST_BYTES = 1 << 20  # a pack.mcmeta or modrinth.index.json over 1 MiB is not a real one
MAX_DESCRIPTION = 2000  # characters kept of a flattened description
_MAX_COMPONENT_DEPTH = 16


@dataclass(frozen=True)
class Archive:
    """What a pack parser may know besides the bytes of the entries it asked for.

    ``names``: every entry of the archive (its central directory). ``file_name``: the asset's
    name (``foo-sources.zip``, ``pack.mrpack``). ``release_text``: the release's name and tag,
    where a shader pack's game version is stated if anywhere.
    """

    names: Collection[str] = ()
    file_name: str = ""
    release_text: str = ""
    pack_table: PackFormatTable = field(default_factory=default_pack_formats)
    table: VersionTable = field(default_factory=default_table)


def read_json(data: bytes, path: str, max_bytes: int = MAX_MANIFEST_BYTES) -> tuple[Any, list[str], ManifestProblem | None]:
    """JSON as the game's Gson reads it (BOM dropped, raw newlines in strings accepted)."""
    if len(data) > max_bytes:
        return None, [], problem(path, "too_large", f"{path} is {len(data)} bytes (over {max_bytes})")
    text, warnings = decode_utf8(data, path)
    try:
        doc, extra = loads_gson_strict(text)
    except (ValueError, RecursionError) as exc:
        return None, warnings, problem(path, "invalid_json", f"{path} is not valid JSON: {exc}")
    if not isinstance(doc, dict):
        return None, warnings, problem(path, "invalid_manifest", f"{path} root must be an object")
    return doc, warnings + extra, None


def plain_text(component: Any, depth: int = 0) -> str:
    """A text component (string, object with text/translate/extra, or list) as plain text."""
    if depth > _MAX_COMPONENT_DEPTH:
        return ""
    if isinstance(component, str):
        return component
    if isinstance(component, bool) or component is None:
        return ""
    if isinstance(component, (int, float)):
        return str(component)
    if isinstance(component, list):
        return "".join(plain_text(c, depth + 1) for c in component[:256])
    if isinstance(component, dict):
        own = component.get("text")
        if not isinstance(own, (str, int, float)) or isinstance(own, bool):
            own = component.get("fallback") or component.get("translate") or ""
        extra = component.get("extra")
        return plain_text(own, depth + 1) + (plain_text(extra, depth + 1) if isinstance(extra, list) else "")
    return ""


def description_of(component: Any) -> str | None:
    text = plain_text(component).strip()
    # Legacy formatting codes (section sign + one character) colour the menu, not the text.
    out, skip = [], False
    for ch in text:
        if skip:
            skip = False
            continue
        if ch == "\u00a7":
            skip = True
            continue
        out.append(ch)
    cleaned = "".join(out).strip()
    return cleaned[:MAX_DESCRIPTION] or None
