"""SPDX license ids -> Modrinth's ``license {id, name, url}`` and the /v2/tag/license list.

The names of the licenses mods actually use; an id outside the table is still shown as given
(with SPDX's page when it looks like an SPDX id), and free text that is not an id becomes a
``LicenseRef-`` id, as SPDX prescribes for licenses it does not list.
"""

from __future__ import annotations

import re

from .shapes import License, LicenseTag

NAMES = {
    "MIT": "MIT License",
    "Apache-2.0": "Apache License 2.0",
    "BSD-2-Clause": 'BSD 2-Clause "Simplified" License',
    "BSD-3-Clause": 'BSD 3-Clause "New" or "Revised" License',
    "CC0-1.0": "Creative Commons Zero v1.0 Universal",
    "CC-BY-4.0": "Creative Commons Attribution 4.0 International",
    "CC-BY-NC-4.0": "Creative Commons Attribution Non Commercial 4.0 International",
    "CC-BY-NC-SA-4.0": "Creative Commons Attribution Non Commercial Share Alike 4.0 International",
    "CC-BY-SA-4.0": "Creative Commons Attribution Share Alike 4.0 International",
    "GPL-2.0-only": "GNU General Public License v2.0 only",
    "GPL-2.0-or-later": "GNU General Public License v2.0 or later",
    "GPL-3.0-only": "GNU General Public License v3.0 only",
    "GPL-3.0-or-later": "GNU General Public License v3.0 or later",
    "LGPL-2.1-only": "GNU Lesser General Public License v2.1 only",
    "LGPL-2.1-or-later": "GNU Lesser General Public License v2.1 or later",
    "LGPL-3.0-only": "GNU Lesser General Public License v3.0 only",
    "LGPL-3.0-or-later": "GNU Lesser General Public License v3.0 or later",
    "AGPL-3.0-only": "GNU Affero General Public License v3.0 only",
    "AGPL-3.0-or-later": "GNU Affero General Public License v3.0 or later",
    "MPL-2.0": "Mozilla Public License 2.0",
    "ISC": "ISC License",
    "Unlicense": "The Unlicense",
    "Zlib": "zlib License",
    "OSL-3.0": "Open Software License 3.0",
}
# Deprecated short forms manifests still carry ("GPL-3.0", "LGPL-3.0").
_ALIASES = {k.removesuffix("-only"): k for k in NAMES if k.endswith("-only")}
_BY_LOWER = {k.lower(): k for k in (*NAMES, *_ALIASES)}
_SPDX_LIKE = re.compile(r"^[A-Za-z0-9.+-]{1,64}$")
_REF = re.compile(r"[^A-Za-z0-9.-]+")
UNKNOWN = License(id="LicenseRef-Unknown", name="Unknown", url=None)
ALL_RIGHTS_RESERVED = ("all rights reserved", "arr", "all-rights-reserved")


def of(licenses) -> License:
    """The mod's first declared license."""
    if not licenses:
        return UNKNOWN
    raw = licenses[0].strip()
    if raw.lower() in ALL_RIGHTS_RESERVED:
        return License(id="LicenseRef-All-Rights-Reserved", name="All Rights Reserved", url=None)
    known = _BY_LOWER.get(raw.lower())
    if known is not None:
        spdx = _ALIASES.get(known, known)
        return License(id=spdx, name=NAMES[spdx], url=f"https://spdx.org/licenses/{spdx}.html")
    if _SPDX_LIKE.match(raw):
        return License(id=raw, name=raw, url=f"https://spdx.org/licenses/{raw}.html")
    ref = _REF.sub("-", raw).strip("-")[:64] or "Unknown"
    return License(id=f"LicenseRef-{ref}", name=raw[:128], url=None)


def tags() -> list[LicenseTag]:
    return [LicenseTag(short=k, name=v) for k, v in NAMES.items()]
