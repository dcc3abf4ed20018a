"""A mod's slug: the one rule, as the mods table's CHECK writes it (``mods_slug_format``,
0001_init): a lowercase letter or digit, then 1–63 of lowercase letters, digits, ``_`` and
``-``. Routes refuse anything else before a query (it cannot exist); telemetry pings are
checked against it; the OpenAPI documents say it."""

from __future__ import annotations

import re

# For Python's re and msgspec (which searches): \Z, because $ also matches before a final "\n".
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,63}\Z")
# For JSON Schema / OpenAPI (ECMA-262) and PostgreSQL, where $ is the end of the string.
SLUG_PATTERN = SLUG_RE.pattern.removesuffix(r"\Z") + "$"


def is_slug(text: str) -> bool:
    return SLUG_RE.match(text) is not None
