"""SPDX license ids -> Modrinth's ``license {id, name, url}``, the /v2/tag/license list and
/v2/tag/license/{id}.

The names of the licenses mods actually use; an id outside the table is still shown as given
(with SPDX's page when it looks like an SPDX id), and free text that is not an id becomes a
``LicenseRef-`` id, as SPDX prescribes for licenses it does not list.

License texts are not shipped: labrinth answers /v2/tag/license/{id} with the full text from its
SPDX crate, and the texts are long legal documents that must be reproduced to the letter, so
rather than a copy of our own we answer the license's name and where SPDX publishes its text
(:func:`text`, docs/api.md).
"""

from __future__ import annotations

import re

from .shapes import License, LicenseTag, LicenseText

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
ARR = License(id="LicenseRef-All-Rights-Reserved", name="All Rights Reserved", url=None)
ALL_RIGHTS_RESERVED = ("all rights reserved", "arr", "all-rights-reserved")
# The two LicenseRef- ids we give that mean the same for every mod: what each says.
_REF_TEXTS = {
    ARR.id.lower(): LicenseText(title=ARR.name, body="The author reserves all rights: no license is granted "
                                            "beyond what the author states."),
    UNKNOWN.id.lower(): LicenseText(title=UNKNOWN.name,
                            body="The mod's manifests declare no license: ask its author before reusing it."),
}


def of(licenses) -> License:
    """The mod's first declared license."""
    if not licenses:
        return UNKNOWN
    raw = licenses[0].strip()
    if raw.lower() in ALL_RIGHTS_RESERVED:
        return ARR
    if (known := _known(raw)) is not None:
        return known
    if _SPDX_LIKE.match(raw):
        return License(id=raw, name=raw, url=f"https://spdx.org/licenses/{raw}.html")
    ref = _REF.sub("-", raw).strip("-")[:64] or "Unknown"
    return License(id=f"LicenseRef-{ref}", name=raw[:128], url=None)


def _known(raw: str) -> License | None:
    """A license of the table by its id (any case; a deprecated short form as its -only id)."""
    known = _BY_LOWER.get(raw.lower())
    if known is None:
        return None
    spdx = _ALIASES.get(known, known)
    return License(id=spdx, name=NAMES[spdx], url=f"https://spdx.org/licenses/{spdx}.html")


def tags() -> list[LicenseTag]:
    return [LicenseTag(short=k, name=v) for k, v in NAMES.items()]


def text(license_id: str) -> LicenseText | None:
    """/v2/tag/license/{id}: the title, and as body where SPDX publishes the full text (we ship
    none), for a license of the table (any case, as SPDX matches ids; a deprecated short form as
    its -only id) or one of our two ``LicenseRef-`` ids; None for any other."""
    if (ref := _REF_TEXTS.get(license_id.lower())) is not None:
        return ref
    if (known := _known(license_id)) is None:
        return None
    return LicenseText(title=known.name, body=f"Indexium does not ship license texts. The full text of the "
                                              f"{known.name} ({known.id}) is published by SPDX at {known.url}")
