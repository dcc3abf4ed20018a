"""Helpers every manifest parser shares: decoding, template leaks, people, links.

Parsers are pure functions ``bytes -> list[ModRecord | ManifestProblem]``; they never
raise on bad input. A :class:`Jar` carries the jar-level facts some formats need
(MANIFEST.MF attributes, the version table).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from indexium_content import urls
from indexium_jar.gameversions import VersionTable, default_table
from indexium_jar.model import ManifestProblem, ModRecord, Person

Output = list[ModRecord | ManifestProblem]

# `${mod_id}`, `${version}` (Gradle/processResources never ran) and `@VERSION@` (Ant-style
# token replacement never ran). `${file.jarVersion}` is real FML syntax, handled by forge_toml.
_TEMPLATE = re.compile(r"\$\{[^}]*\}|@[A-Za-z_][A-Za-z0-9_.-]*@")
JAR_VERSION_TOKEN = "${file.jarVersion}"


@dataclass(frozen=True)
class Jar:
    """Jar-level context: MANIFEST.MF main attributes and the Minecraft versions table.

    ``manifest_known=False`` means the jar has a MANIFEST.MF that was not read yet: every
    attribute then reads as absent, and the names asked for are noted in ``consulted`` so
    the caller knows the result is provisional (see ``ParseResult.wants``).
    """

    manifest: Mapping[str, str] = field(default_factory=dict)
    table: VersionTable = field(default_factory=default_table)
    manifest_known: bool = True
    consulted: set[str] = field(default_factory=set, compare=False)

    def attribute(self, name: str) -> str | None:
        """Manifest attribute names are case-insensitive (java.util.jar.Attributes.Name)."""
        if not self.manifest_known:
            self.consulted.add(name)
            return None
        wanted = name.lower()
        return next((v for k, v in self.manifest.items() if k.lower() == wanted), None)


def problem(path: str, code: str, message: str) -> ManifestProblem:
    return ManifestProblem(manifest_path=path, code=code, message=message[:500])


def template_leak(value: str, allow_jar_version: bool = False) -> str | None:
    """The first unexpanded build template in ``value``, if any."""
    for m in _TEMPLATE.finditer(value):
        if not (allow_jar_version and m.group(0) == JAR_VERSION_TOKEN):
            return m.group(0)
    return None


def check_id(path: str, mod_id: Any, pattern: re.Pattern[str] | None, what: str = "id") -> ManifestProblem | None:
    """A ManifestProblem when the id is missing, a leaked template, or fails the loader's regex."""
    if not isinstance(mod_id, str) or not mod_id.strip():
        return problem(path, "missing_id", f"no usable {what}")
    if leak := template_leak(mod_id):
        return problem(path, "template_leak", f"{what} {mod_id!r} contains the unexpanded template {leak}")
    if pattern is not None and not pattern.fullmatch(mod_id):
        return problem(path, "invalid_id", f"{what} {mod_id!r} is rejected by the loader ({pattern.pattern})")
    return None


def version_warnings(version: str, allow_jar_version: bool = False) -> list[str]:
    if leak := template_leak(version, allow_jar_version):
        return [f"version {version!r} contains the unexpanded template {leak}"]
    return []


def decode_utf8(data: bytes, path: str) -> tuple[str, list[str]]:
    """UTF-8 as Java's InputStreamReader decodes it: malformed bytes become U+FFFD, never fail.

    A leading BOM is dropped (Gson's JsonReader skips U+FEFF).
    """
    warnings: list[str] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        warnings.append(f"{path} is not valid UTF-8; malformed bytes replaced with U+FFFD")
    return text.removeprefix("\ufeff"), warnings


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_gson_strict(text: str) -> tuple[Any, list[str]]:
    """JSON as the loaders' strict Gson fork reads it.

    Comments, trailing commas, single quotes and NaN are rejected (lenient=false), but raw
    control characters inside strings are accepted (JsonReader.nextQuotedValue), hence
    ``strict=False``. Text after the root value is tolerated with a warning, since the
    loaders stop reading once the root object is closed.
    """
    decoder = json.JSONDecoder(strict=False, parse_constant=_reject_constant)
    stripped = text.lstrip()
    value, end = decoder.raw_decode(stripped)
    tail = stripped[end:].strip()
    return value, ([f"ignored {len(tail)} characters after the JSON document"] if tail else [])


def text(value: Any) -> str | None:
    """A non-empty string field, else None (wrong types are ignored, not fatal)."""
    return value if isinstance(value, str) and value.strip() else None


def string_list(value: Any) -> list[str]:
    """A string or an array of strings, the other types dropped."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


def links_from(mapping: Any) -> dict[str, str]:
    """The links the one URL policy keeps (``indexium_content.urls``: absolute http(s) with a
    host, no credentials, bounded); e-mail addresses, IRC channels and script URLs are not
    links. The indexer applies the same policy again when it writes the card, and logs there."""
    if not isinstance(mapping, Mapping):
        return {}
    return urls.safe_links(mapping)


def string_map(mapping: Any) -> dict[str, str]:
    if not isinstance(mapping, Mapping):
        return {}
    return {str(k): v for k, v in mapping.items() if isinstance(v, str)}


def people_from_names(names: list[str], role: str | None = None) -> tuple[Person, ...]:
    return tuple(Person(name=n.strip(), role=role) for n in names if n.strip())


def pick_icon(icon: Any) -> str | None:
    """A path, or ``{"<px>": path}`` from which the largest size wins."""
    if isinstance(icon, str):
        return icon or None
    if isinstance(icon, Mapping):
        sized = [(int(k), v) for k, v in icon.items() if str(k).isascii() and str(k).isdigit() and isinstance(v, str) and v]
        return max(sized)[1] if sized else None
    return None


def compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
