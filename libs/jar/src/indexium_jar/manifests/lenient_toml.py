"""TOML as NightConfig (FML's ``ModFileParser``) accepts it, where that is laxer than TOML 1.0.

The known case is a raw newline inside a single-line basic string (Twilight Forest's
mods.toml; Senth fixture ``toml-inline-comment.jar``). NightConfig keeps the newline in
the value; tomli rejects the file. We parse strictly first, and only when that fails
retry with such newlines escaped, so valid files are never rewritten.
"""

from __future__ import annotations

from typing import Any

import tomli


def loads_lenient(text: str) -> tuple[dict[str, Any], list[str]]:
    """Parse TOML; raises ``tomli.TOMLDecodeError`` only if the repair does not help."""
    try:
        return tomli.loads(text), []
    except tomli.TOMLDecodeError:
        repaired = escape_newlines_in_basic_strings(text)
        if repaired == text:
            raise
    return tomli.loads(repaired), ["raw newline inside a quoted TOML string (accepted by NightConfig); escaped"]


def escape_newlines_in_basic_strings(text: str) -> str:
    """Replace raw line breaks inside ``"..."`` (not ``\"\"\"...\"\"\"``, literals or comments) by ``\\n``."""
    out: list[str] = []
    i, n = 0, len(text)
    state = "outside"  # outside | comment | basic | literal | ml_basic | ml_literal
    while i < n:
        ch = text[i]
        if state == "outside":
            if text.startswith('"""', i) or text.startswith("'''", i):
                state = "ml_basic" if ch == '"' else "ml_literal"
                out.append(text[i : i + 3])
                i += 3
                continue
            state = {"#": "comment", '"': "basic", "'": "literal"}.get(ch, "outside")
        elif state == "comment":
            if ch == "\n":
                state = "outside"
        elif state == "basic":
            if ch == "\\" and i + 1 < n and text[i + 1] not in "\r\n":
                out.append(text[i : i + 2])
                i += 2
                continue
            if ch in "\r\n":
                if ch == "\r" and text.startswith("\r\n", i):
                    i += 1
                out.append("\\n")
                i += 1
                continue
            if ch == '"':
                state = "outside"
        elif state == "literal":
            if ch == "'" or ch == "\n":
                state = "outside"
        elif state == "ml_basic":
            if ch == "\\" and i + 1 < n:
                out.append(text[i : i + 2])
                i += 2
                continue
            if text.startswith('"""', i):
                out.append('"""')
                i += 3
                state = "outside"
                continue
        elif state == "ml_literal" and text.startswith("'''", i):
            out.append("'''")
            i += 3
            state = "outside"
            continue
        out.append(ch)
        i += 1
    return "".join(out)
