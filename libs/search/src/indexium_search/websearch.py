"""Search text made safe for PostgreSQL's ``websearch_to_tsquery``.

That parser reads every ``-`` that waits for an operand as a NOT and keeps pending NOTs on
a fixed stack of 32 entries: ``sodium`` followed by 40 dashes (or ``- - - ...``, or
``-!-!-``, since spaces and the characters ``!&|()<`` are skipped between them) fails with
"tsquery stack too small" instead of searching. A run of negations means no more than one
(NOT NOT x is x, but nobody types it to mean that), so each run is cut to a single ``-``.
Everything else is left to the parser, which accepts any other text.
"""

from __future__ import annotations

import re

# A '-' and every further '-' reachable through what the parser skips before an operand.
_NOT_RUN = re.compile(r"-[\s!&|()<\-]*-")


def defuse(q: str) -> str:
    """``q`` with each run of negations cut to one ``-``: same search, bounded parser stack."""
    return _NOT_RUN.sub("-", q)
