"""How a search's text is read before any SQL or index sees it: pure, shared by the SQL path
(``sqlpath``) and the in-process index (``searchindex``), so both split the same words."""

from __future__ import annotations

import re

# A query's words: runs of letters and digits (the prefix part's, and the typo corrections').
WORDS = re.compile(r"[^\W_]+")
MAX_QUERY_WORDS = 12
PREFIX_MIN_CHARS = 3


def normalized(q: str) -> str:
    """The query as names are compared with it: lower-cased, runs of whitespace as one space."""
    return " ".join(q.lower().split())


# A plain query token: letters and digits, perhaps with apostrophes inside ("olga's", which
# websearch reads as the phrase 'olga' <-> 's'), with nothing PostgreSQL's websearch parser
# reads as an operator (quotes, "or", a leading "-").
TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
WEBSEARCH_OPERATORS = frozenset({"or"})
MAX_TOKEN_CHARS = 100


def plain_tokens(q: str) -> list[str] | None:
    """``q``'s whitespace-separated tokens when every one is plain (TOKEN, not an operator, at
    most MAX_TOKEN_CHARS) and they hold at most MAX_QUERY_WORDS words, else None: a query in
    websearch syntax, which the search index leaves to SQL and whose words are never relaxed
    into a partial query (sqlpath.partial_search)."""
    tokens = q.split()
    if not tokens:
        return None
    for t in tokens:
        if len(t) > MAX_TOKEN_CHARS or not TOKEN.fullmatch(t) or t.lower() in WEBSEARCH_OPERATORS:
            return None
    if len(WORDS.findall(q.lower())) > MAX_QUERY_WORDS:
        return None
    return tokens
