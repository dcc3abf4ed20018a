"""META-INF/MANIFEST.MF main attributes (the JAR File Specification, as java.util.jar reads it).

* Lines end in CRLF (1068/1080 in the survey), LF or CR.
* A line starting with a single space continues the previous one (writers wrap at 72
  bytes); the space is dropped and the rest appended verbatim, even mid-word.
* ``Name: value`` splits at the first ``:`` (values often contain ``:``, e.g. URLs); the
  one space after the colon belongs to the syntax.
* Only the main section matters: it ends at the first blank line; per-entry sections follow.
"""

from __future__ import annotations

import re

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def parse_manifest(data: bytes) -> dict[str, str]:
    """Main-section attributes; malformed lines are skipped, never fatal.

    Keys keep their spelling; look them up case-insensitively (see ``Jar.attribute``).
    First occurrence wins, as in java.util.jar.Manifest for the main section.
    """
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    logical: list[str] = []
    for line in _LINE_BREAK.split(text):
        if line.startswith(" ") and logical:
            logical[-1] += line[1:]
        elif not line.strip():
            if logical:
                break  # end of the main section
        else:
            logical.append(line)
    attributes: dict[str, str] = {}
    for line in logical:
        name, sep, value = line.partition(":")
        name = name.strip()
        if not sep or not name or " " in name:
            continue
        attributes.setdefault(name, value[1:] if value.startswith(" ") else value)
    return attributes
