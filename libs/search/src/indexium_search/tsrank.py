"""PostgreSQL's ``ts_rank(vector, query, 32)`` computed in process, exactly: the search index
ranks its candidates without sending them to PostgreSQL. Pure (no I/O).

Ported from src/backend/utils/adt/tsrank.c (PostgreSQL 18): ``calc_rank_or`` with the default
weights {D 0.1, C 0.2, B 0.4, A 1.0} and normalization 32 (rank / (rank + 1)), in C's float
arithmetic (each float4 operation rounded once: a double operation on float4 values rounded
to float4 is the same number; the double constant 1.64493406685 promotes its quotient);
``SortAndUniqItems``, whose de-duplication keeps the first of equal operands as PostgreSQL's
own quicksort (src/include/lib/sort_template.h, ported below) leaves them, which decides
whether 'extra' or 'extra':* of a query ranks a vector. ``calc_rank_and`` (a query whose top
operator is AND or a phrase) needs positions, which the index does not keep: such queries
are PostgreSQL's to rank (``top``).

A lexeme entry's share of calc_rank_or depends only on the weights of its positions, so it
is computed once per entry at load (``entry_term``) and kept as a float4 beside the entry's
lexeme. tests/component/db/test_tsrank.py compares ``rank`` with PostgreSQL's own answers
over many real vectors and queries.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Sequence

# default_weights, as float4, by WEP_GETWEIGHT (D = 0, C, B, A = 3).
_WEIGHTS = array("f", [0.1, 0.2, 0.4, 1.0]).tolist()
_WEIGHT_OF = {"A": 3, "B": 2, "C": 1, "D": 0}
PI2_6 = 1.64493406685  # calc_rank_or's double constant
# One lexeme of tsvector_out: quoted (quotes and backslashes doubled), then its positions.
_ENTRY = re.compile(r"'((?:[^'\\]|''|\\.)*)'(?::([0-9A-D,]+))?")
_UNESCAPE = re.compile(r"''|\\(.)")
_TERMS: dict[str, float] = {}  # positions text -> entry_term, shared by the many equal ones
_TERMS_MAX = 100_000


def _f4(slot: array, x: float) -> float:
    """``x`` rounded to float4 through a float4 array's slot (a C cast; faster than struct).
    Each caller owns its slot: a load's worker thread and the event loop both round."""
    slot[0] = x
    return slot[0]


def entry_term(weights: Sequence[int]) -> float:
    """calc_rank_or's numerator for one lexeme entry with these position weights (in position
    order), a float4: (wjm + resj - wjm / (jm + 1)^2), resj = sum w_j / (j + 1)^2."""
    s = array("f", [0.0])
    resj, wjm, jm = 0.0, -1.0, 0
    for j, code in enumerate(weights):
        w = _WEIGHTS[code]
        resj = _f4(s, resj + _f4(s, w / ((j + 1) * (j + 1))))
        if w > wjm:
            wjm, jm = w, j
    return _f4(s, _f4(s, wjm + resj) - _f4(s, wjm / ((jm + 1) * (jm + 1))))


def _term_of(positions: str | None) -> float:
    """entry_term of tsvector_out's positions text ("1A,5,7B"; none: one position of weight D)."""
    if not positions:
        return entry_term((0,))
    term = _TERMS.get(positions)
    if term is None:
        term = entry_term([_WEIGHT_OF.get(p[-1], 0) for p in positions.split(",")])
        if len(_TERMS) >= _TERMS_MAX:
            _TERMS.clear()
        _TERMS[positions] = term
    return term


def parse_vector(text: str) -> tuple[list[str], list[str], array]:
    """tsvector_out's text as (lexemes in the vector's order, those with a weight-A position,
    each lexeme's entry_term). (Run per mod at every load: comprehensions, one regex pass.)"""
    entries = _ENTRY.findall(text)
    if "''" in text or "\\" in text:
        lexemes = [_UNESCAPE.sub(lambda m: m.group(1) or "'", raw) for raw, _ in entries]
    else:
        lexemes = [raw for raw, _ in entries]
    heavy = [x for x, (_, positions) in zip(lexemes, entries) if "A" in positions]
    known = _TERMS.get
    terms = array("f", [known(positions) or _term_of(positions) for _, positions in entries])
    return lexemes, heavy, terms


# --- the query side -------------------------------------------------------------------------

def _cmp(a: tuple[str, bool], b: tuple[str, bool]) -> int:
    # compareQueryOperand: tsCompareString without prefix (bytes, then length: code point order)
    return (a[0] > b[0]) - (a[0] < b[0])


def _med3(v: list, a: int, b: int, c: int) -> int:
    if _cmp(v[a], v[b]) < 0:
        return b if _cmp(v[b], v[c]) < 0 else (c if _cmp(v[a], v[c]) < 0 else a)
    return b if _cmp(v[b], v[c]) > 0 else (a if _cmp(v[a], v[c]) < 0 else c)


def _swapn(v: list, a: int, b: int, n: int) -> None:
    for i in range(n):
        v[a + i], v[b + i] = v[b + i], v[a + i]


def pg_qsort(v: list, a: int = 0, n: int | None = None) -> None:
    """sort_template.h's quicksort (qsort_arg) over v[a:a + n], by _cmp, in place: the same
    order of equal elements as PostgreSQL leaves (it is not stable)."""
    if n is None:
        n = len(v) - a
    while True:
        if n < 7:
            for pm in range(a + 1, a + n):
                pl = pm
                while pl > a and _cmp(v[pl - 1], v[pl]) > 0:
                    v[pl], v[pl - 1] = v[pl - 1], v[pl]
                    pl -= 1
            return
        if all(_cmp(v[pm - 1], v[pm]) <= 0 for pm in range(a + 1, a + n)):
            return  # presorted
        pm = a + n // 2
        if n > 7:
            pl, pn = a, a + n - 1
            if n > 40:
                d = n // 8
                pl = _med3(v, pl, pl + d, pl + 2 * d)
                pm = _med3(v, pm - d, pm, pm + d)
                pn = _med3(v, pn - 2 * d, pn - d, pn)
            pm = _med3(v, pl, pm, pn)
        v[a], v[pm] = v[pm], v[a]
        pa = pb = a + 1
        pc = pd = a + n - 1
        while True:
            while pb <= pc and (r := _cmp(v[pb], v[a])) <= 0:
                if r == 0:
                    v[pa], v[pb] = v[pb], v[pa]
                    pa += 1
                pb += 1
            while pb <= pc and (r := _cmp(v[pc], v[a])) >= 0:
                if r == 0:
                    v[pc], v[pd] = v[pd], v[pc]
                    pd -= 1
                pc -= 1
            if pb > pc:
                break
            v[pb], v[pc] = v[pc], v[pb]
            pb += 1
            pc -= 1
        pn = a + n
        d1 = min(pa - a, pb - pa)
        _swapn(v, a, pb - d1, d1)
        d1 = min(pd - pc, pn - pd - 1)
        _swapn(v, pb, pn - d1, d1)
        d1, d2 = pb - pa, pd - pc
        if d1 <= d2:
            if d1 > 1:
                pg_qsort(v, a, d1)
            if d2 <= 1:
                return
            a, n = pn - d2, d2
        else:
            if d2 > 1:
                pg_qsort(v, pn - d2, d2)
            if d1 <= 1:
                return
            n = d1


def sort_and_uniq(items: list[tuple[str, bool]]) -> list[tuple[str, bool]]:
    """SortAndUniqItems: the query's (lexeme, prefix) operands in the order the tsquery stores
    them, sorted by lexeme, the first of equal lexemes kept."""
    v = list(items)
    if len(v) < 2:
        return v
    pg_qsort(v)
    out = [v[0]]
    for x in v[1:]:
        if x[0] != out[-1][0]:
            out.append(x)
    return out


class Query:
    """A tsquery as calc_rank_or reads it: its distinct operands, (lexeme, prefix)."""

    __slots__ = ("operands", "size")

    def __init__(self, operands: list[tuple[str, bool]]) -> None:
        self.operands = operands
        self.size = len(operands)

    @classmethod
    def of_or(cls, textual: list[tuple[str, bool]]) -> "Query":
        """The query whose top operator is OR (or that is one operand), from its operands in
        text order: the tsquery stores an operator, its right operand, then its left, so its
        operands lie in reverse text order."""
        return cls(sort_and_uniq(textual[::-1]))


def rank(query: Query, lexemes: Sequence[str], n: int, terms: array) -> float:
    """ts_rank(vector, query, 32) (float4) of a vector given as its first ``n`` ``lexemes``
    (sorted, as a tsvector's) with their entry_terms."""
    s = array("f", [0.0])  # (float4 rounding: see _f4)
    res = 0.0
    for lexeme, prefix in query.operands:
        i = bisect_left(lexemes, lexeme, 0, n)
        if prefix:
            # find_wordentry: the entries from the insertion point on that start with it
            while i < n and lexemes[i].startswith(lexeme):
                s[0] = res + terms[i] / PI2_6
                res = s[0]
                i += 1
        elif i < n and lexemes[i] == lexeme:
            s[0] = res + terms[i] / PI2_6
            res = s[0]
    if not n or not query.size:
        return 0.0
    s[0] = res / query.size
    res = s[0]
    s[0] = res + 1.0
    s[0] = res / s[0]
    return s[0]
