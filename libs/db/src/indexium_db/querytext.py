"""How a search's text is read before any SQL or index sees it: pure, shared by the SQL path
(``queries/catalog.py``) and the in-process index (``searchindex``), so both split the same words."""

from __future__ import annotations

import re

# A query's words: runs of letters and digits (the prefix part's, and the typo corrections').
WORDS = re.compile(r"[^\W_]+")
MAX_QUERY_WORDS = 12
PREFIX_MIN_CHARS = 3


def normalized(q: str) -> str:
    """The query as names are compared with it: lower-cased, runs of whitespace as one space."""
    return " ".join(q.lower().split())
