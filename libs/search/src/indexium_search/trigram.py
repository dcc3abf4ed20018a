"""pg_trgm's similarity measures, computed in process exactly as PostgreSQL computes them, and
the catalogue's typo corrections (``sqlpath.corrected_query``'s nearest-word lookups) answered
from a word set held in memory. Pure (no I/O).

Exact for a database whose ctype and collation are C (``--locale=C``, as ours are): there a
word character is an ASCII letter or digit (every other character, multi-byte ones included,
separates words), lower-casing is ASCII's, and text sorts by code point. Under any other
locale callers ask PostgreSQL (``indexed.py`` checks ``pg_database``).

Ported from contrib/pg_trgm/trgm_op.c: ``generate_trgm_only`` (words padded as "  word "),
``cnt_sml`` with CALCSML's DIVUNION formula (shared / (len1 + len2 - shared), in float4),
``calc_word_similarity`` and ``iterate_word_similarity`` (the best extent of the second
string's ordered trigrams). tests/component/db/test_trigram.py compares every function here with
PostgreSQL's own answers over many words.
"""

from __future__ import annotations

import math
import re
from array import array
import struct
import sys

from pyroaring import BitMap

try:  # similar_among and shared_counts in C (_fastsearch.c), built by `make env` where a compiler is
    from . import _fastsearch
except ImportError:  # no compiler: one name at a time in Python (the tests run it too)
    _fastsearch = None

_WORD = re.compile(r"[A-Za-z0-9]+")
_F4 = struct.Struct("f")


def f4(x: float) -> float:
    """``x`` rounded to float4, as pg_trgm's results are."""
    return _F4.unpack(_F4.pack(x))[0]


_SML: dict[tuple[int, int], float] = {}


def _sml(count: int, len1: int, len2: int) -> float:
    # CALCSML: ((float4) count) / ((float4) (len1 + len2 - count)); a float4 quotient of two
    # small integers is the exact quotient rounded once, as this double rounded to float4 is.
    key = (count, len1 + len2 - count)
    v = _SML.get(key)
    if v is None:
        v = f4(count / key[1]) if key[1] else 0.0
        if len(_SML) < 100_000:
            _SML[key] = v
    return v


def trigram_list(text: str) -> list[str]:
    """generate_trgm_only: every word's trigrams in order, duplicates kept."""
    out = []
    for w in _WORD.findall(text):
        padded = f"  {w.lower()} "
        out += [padded[i:i + 3] for i in range(len(padded) - 2)]
    return out


def trigram_set(text: str) -> frozenset[str]:
    """generate_trgm: the unique trigrams (what ``similarity`` and ``%`` compare)."""
    return frozenset(trigram_list(text))


def similarity(a: str | frozenset, b: str | frozenset) -> float:
    """pg_trgm's similarity(a, b) (float4); ``a`` and ``b`` may be trigram_set()s already."""
    ta = a if isinstance(a, frozenset) else trigram_set(a)
    tb = b if isinstance(b, frozenset) else trigram_set(b)
    if not ta or not tb:
        return 0.0
    return _sml(len(ta & tb), len(ta), len(tb))


def distance(sml: float) -> float:
    """The ``<->`` / ``<<->`` distance of a similarity: float4(1.0 - res)."""
    return f4(1.0 - sml)


def word_similarity(a: str, b: str) -> float:
    """pg_trgm's word_similarity(a, b) (float4): ``a``'s trigrams against the most similar
    continuous extent of ``b``'s ordered trigrams."""
    trg1 = trigram_list(a)
    trg2 = trigram_list(b)
    return _iterate(set(trg1), trg2)


def similar_among(a: str, items, ordinals, threshold: float) -> dict[int, float]:
    """{o: word_similarity(a, items[o].name)} for the ordinals at least ``threshold`` similar
    (an item that is a str is its own name: Words' words); ``a`` and those names ASCII
    (ValueError else). In C where it is built (~0.2 us a name), else word_similarity's loop
    (~7 us)."""
    if _fastsearch is not None:
        if type(items) is not list:  # (a snapshot's names, read in place: the C loop takes a list)
            ordinals = list(ordinals)
            found = _fastsearch.similar_among(a, [items[o] for o in ordinals], range(len(ordinals)), threshold)
            return {ordinals[i]: ws for i, ws in found.items()}
        return _fastsearch.similar_among(a, items, ordinals, threshold)
    if not a.isascii():
        raise ValueError("similar_among takes ASCII text only")
    out = {}
    for o in ordinals:
        name = items[o] if isinstance(items[o], str) else items[o].name
        if not name.isascii():
            raise ValueError("similar_among takes ASCII text only")
        if (ws := word_similarity(a, name)) >= threshold:
            out[o] = ws
    return out


# The letters an edit inserts or substitutes: a catalogue word's characters under the C ctype
# (see the module doc), lower case.
EDIT_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
# search_words holds words of 3 to 40 characters (migration 0014's mod_search_words): a longer
# word is more than one edit from every one of them, and its ~73 edits a letter are not made.
SEARCH_WORD_MAX_CHARS = 40


def edits(word: str) -> list[str]:
    """The words one edit from ``word`` (Damerau-Levenshtein distance 1: a letter dropped,
    one added, one replaced, two neighbours swapped), each once, in a fixed order; letters
    added or replaced are EDIT_LETTERS'. ~330 for a 4-letter word, ~780 for 10 letters; none
    for a word longer than SEARCH_WORD_MAX_CHARS + 1."""
    n = len(word)
    if n > SEARCH_WORD_MAX_CHARS + 1:
        return []
    out = [word[:i] + word[i + 1:] for i in range(n)]
    out += [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(n - 1) if word[i] != word[i + 1]]
    for i in range(n + 1):
        head, tail = word[:i], word[i:]
        out += [head + c + tail for c in EDIT_LETTERS]
        if i < n:
            out += [head + c + tail[1:] for c in EDIT_LETTERS if c != tail[0]]
    return list(dict.fromkeys(w for w in out if w and w != word))


def edit_cost(a: str, b: str, limit: int | None = None) -> int:
    """How far the typed word ``a`` is from the catalogue word ``b``: a letter dropped or added
    costs 1, two neighbours swapped 1, a letter replaced 2 (a drop and an add: the edit distance
    without substitutions, with transpositions). A replaced letter counts double because short
    catalogue words are dense in single replacements ("shars" is one replacement from "share",
    "stars", "chars", "shark"), while a query missing a letter ("shars" for "shears" or "shards")
    is the commoner typo; the trigram measures alone chose "share" (the most shared trigrams).
    ``limit``: any cost over it may be answered as limit + 1 (the rows stop once every cell is over)."""
    n, m = len(a), len(b)
    if limit is not None and abs(n - m) > limit:
        return limit + 1
    prev2, prev = None, list(range(m + 1))
    for i in range(1, n + 1):
        row = [i] + [0] * m
        for j in range(1, m + 1):
            best = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (0 if a[i - 1] == b[j - 1] else 2))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1] and a[i - 1] != b[j - 1]:
                best = min(best, prev2[j - 2] + 1)
            row[j] = best
        if limit is not None and min(row) > limit + 1:  # (a swap reaches back two rows: one to spare)
            return limit + 1
        prev2, prev = prev, row
    return prev[m] if limit is None else min(prev[m], limit + 1)


def best_correction(word: str, candidates) -> str | None:
    """sqlpath.corrected_query's choice among a word's candidates (catalogue words at least
    CORRECTION_SIMILARITY similar, or FUZZY_WORD_SIMILARITY word-similar, or one edit away),
    the same in both paths: the smallest edit_cost, then the most similar (pg_trgm's
    similarity), then the smaller word (code point order)."""
    trg = trigram_set(word)
    best, best_key = None, None
    # (the nearest lengths first: a cost is at least the difference in length, and a cost over
    # the best found so far is not computed to the end)
    for w in sorted(candidates, key=lambda w: abs(len(w) - len(word))):
        if best_key is not None and abs(len(w) - len(word)) > best_key[0]:
            break
        cost = edit_cost(word, w, None if best_key is None else best_key[0])
        if best_key is not None and cost > best_key[0]:
            continue
        key = (cost, distance(similarity(trg, trigram_set(w))), w)
        if best_key is None or key < best_key:
            best, best_key = w, key
    return best


def nearest_edit(word: str, known) -> str | None:
    """The words one edit from ``word`` (``edits``) that are in ``known`` (a container of
    catalogue words), best_correction's choice among them, else None."""
    return best_correction(word, [w for w in edits(word) if w in known])


def _iterate(query: set[str], trg2: list[str]) -> float:
    # calc_word_similarity's merge: each distinct trigram an index; found: it is the query's.
    # ulen1 counts the query's distinct trigrams.
    ulen1 = len(query)
    ids: dict[str, int] = {}
    trg2indexes = [ids.setdefault(t, len(ids)) for t in trg2]
    found = [False] * len(ids)
    for t, j in ids.items():
        found[j] = t in query
    # iterate_word_similarity without WORD_SIMILARITY_STRICT or CHECK_ONLY (``<%`` is
    # "the maximum >= threshold": CHECK_ONLY stops at the first extent over it, same answer).
    lastpos = [-1] * len(ids)
    ulen2 = count = 0
    lower = -1
    smlr_max = 0.0
    sml = _sml
    for i, trgindex in enumerate(trg2indexes):
        hit = found[trgindex]
        if lower >= 0 or hit:
            if lastpos[trgindex] < 0:
                ulen2 += 1
                if hit:
                    count += 1
            lastpos[trgindex] = i
        if hit:
            upper = i
            if lower == -1:
                lower = i
                ulen2 = 1
            smlr_cur = sml(count, ulen1, ulen2)
            tmp_count, tmp_ulen2, prev_lower = count, ulen2, lower
            for tmp_lower in range(lower, upper + 1):
                # (Not in trgm_op.c, same answer: an extent starting further on holds at most
                # tmp_count of the query's trigrams, so it scores at most tmp_count / ulen1.)
                if sml(tmp_count, ulen1, tmp_count) <= smlr_cur:
                    break
                smlr_tmp = sml(tmp_count, ulen1, tmp_ulen2)
                if smlr_tmp > smlr_cur:
                    smlr_cur, ulen2, lower, count = smlr_tmp, tmp_ulen2, tmp_lower, tmp_count
                tmp_trgindex = trg2indexes[tmp_lower]
                if lastpos[tmp_trgindex] == tmp_lower:
                    tmp_ulen2 -= 1
                    if found[tmp_trgindex]:
                        tmp_count -= 1
            if smlr_cur > smlr_max:
                smlr_max = smlr_cur
                if smlr_max == 1.0:
                    return 1.0  # (nothing scores more)
            for tmp_lower in range(prev_lower, lower):
                tmp_trgindex = trg2indexes[tmp_lower]
                if lastpos[tmp_trgindex] == tmp_lower:
                    lastpos[tmp_trgindex] = -1
    return smlr_max


# From this many sets on, in_at_least counts in C (_fastsearch.shared_counts: each set, cut to
# ``within``, counted once) rather than with bitmap layers (~m * k bitmap operations). Measured
# on the bench's 100,000 names (bench/api, name + facets' fuzzy pass): a 15 to 21-trigram query
# 169-352 us against 315-894 us; a 5-trigram one 229 against 59 us (few operations, and the
# thousands of members the C path builds a bitmap of).
COUNT_IN_C_FROM = 8


def in_at_least(sets: list[BitMap], k: int, within: BitMap | None = None) -> BitMap:
    """Members of at least ``k`` (>= 1) of ``sets`` (and of ``within``, if given): how many of a
    query's trigrams a word or a name shares. Many sets: counted in C (COUNT_IN_C_FROM); else
    with bitmaps: a member of k of m sets is in one of any m - k + 1 of them, so only the union
    of the smallest m - k + 1 is a candidate (and intersected with ``within``); then
    at_least[j] holds the candidates in j of the sets seen so far."""
    if _fastsearch is not None and len(sets) >= COUNT_IN_C_FROM:
        if k > len(sets):
            return BitMap()
        if within is not None:
            # Each set cut to its candidates (the union of the smallest m - k + 1, within
            # ``within``) rather than to ``within`` itself: a facet filter keeps most of the
            # catalogue, the candidates are a fraction of it. Measured on the bench's 100,000
            # names (the name + facets class's fuzzy pass): 105 against 170 us a call.
            smallest = sorted(sets, key=len)[: len(sets) - k + 1]
            within = BitMap.union(*smallest) & within
            sets = [s & within for s in sets]
        return BitMap(_fastsearch.shared_counts([s.to_array() for s in sets], k)[0])
    layers = at_least_layers(sets, k, within, k)
    return layers[k] if layers else BitMap()


def at_least_layers(sets: list[BitMap], k: int, within: BitMap | None = None,
                    top: int | None = None) -> list[BitMap]:
    """in_at_least's counting kept: for k <= j <= ``top`` (default: every set), layers[j] holds
    the candidates (members of at least k sets) in at least j of them; [] when k > len(sets).
    Layers below k are counted only as far as they can still reach k (after set i, a member
    in j of them can gain at most m - 1 - i more), which halves the bitmap operations: they
    are not the counts below k."""
    m = len(sets)
    if k > m:
        return []
    top = m if top is None else top
    sets = sorted(sets, key=len)
    base = BitMap.union(*sets[: m - k + 1])
    if within is not None:
        base &= within
    at_least = [base] + [BitMap() for _ in range(top)]
    for i, s in enumerate(sets):
        s = s & base
        for j in range(min(top, i + 1), max(1, k - (m - 1 - i)) - 1, -1):
            at_least[j] |= at_least[j - 1] & s
    return at_least


class Words:
    """The catalogue's words (``search_words``) with a trigram inverted index, for typo
    corrections without a query. Words are only added, as in search_words."""

    def __init__(self, words=()) -> None:
        self._words: list[str] = []
        self._ids: dict[str, int] = {}
        # Per word how many distinct trigrams it has (all ``similar`` reads of them): 2 bytes a
        # word (search_words may hold 10^5 words; a snapshot keeps the array as it is).
        self._sizes = array("H")
        self._postings: dict[str, BitMap] = {}
        self.update(words)

    def update(self, words) -> None:
        for w in words:
            if w in self._ids:
                continue
            i = len(self._words)
            self._ids[w] = i
            self._words.append(w)
            trigrams = tuple(map(sys.intern, trigram_set(w)))
            self._sizes.append(len(trigrams))
            for t in trigrams:
                bm = self._postings.get(t)
                if bm is None:
                    bm = self._postings[t] = BitMap()
                bm.add(i)

    @classmethod
    def restore(cls, words: list[str], sizes: array, postings: dict[str, BitMap]) -> "Words":
        """The words as a snapshot holds them (snapshot.py): the same fields, not rebuilt."""
        self = cls()
        self._words, self._sizes, self._postings = words, sizes, postings
        self._ids = {w: i for i, w in enumerate(words)}
        return self

    def __contains__(self, word: object) -> bool:
        return word in self._ids

    def __len__(self) -> int:
        return len(self._words)

    def nearest(self, word: str, similarity_threshold: float, word_similarity_threshold: float) -> str | None:
        """sqlpath.corrected_query's lookup for one word: of the words with similarity >=
        ``similarity_threshold``, word_similarity(word, w) >= ``word_similarity_threshold`` or
        one edit away (``edits``), best_correction's choice, else None. ``word`` must be ASCII
        (see the module doc)."""
        if word in self._ids:
            return word  # (its own nearest word: cost 0)
        one_edit = [w for w in edits(word) if w in self._ids]
        # A word at cost 1 (a letter dropped or added, two swapped) is one edit away: when there
        # is one, no candidate of the trigram measures can do better or tie outside them.
        cheapest = [w for w in one_edit if edit_cost(word, w, 1) == 1]
        if cheapest:
            return best_correction(word, cheapest)
        found = set(self.similar(word, similarity_threshold, word_similarity_threshold))
        found.update(one_edit)
        return best_correction(word, found)

    def similar(self, word: str, similarity_threshold: float, word_similarity_threshold: float) -> list[str]:
        """The words at least ``similarity_threshold`` similar to ``word`` or at least
        ``word_similarity_threshold`` word-similar (pg_trgm's ``%`` and ``<%``)."""
        query = trigram_set(word)
        m = len(query)
        if m == 0:
            return []
        # similarity <= shared / m and word_similarity <= shared / m: a word sharing fewer of
        # the query's trigrams cannot reach either threshold (the epsilon covers float4 rounding).
        k = max(1, math.ceil(min(similarity_threshold, word_similarity_threshold) * m - 1e-6))
        exactly = self._sharing(query, k)
        if exactly is None:
            return []
        words, out, rest = self._words, [], []
        for j in range(m, k - 1, -1):
            for i in exactly[j]:
                if _sml(j, m, self._sizes[i]) >= similarity_threshold:
                    out.append(words[i])
                elif _sml(j, m, j) >= word_similarity_threshold:  # (its word similarity may reach it)
                    rest.append(i)
        if rest:
            # Word similarity: the ASCII words in C where it is built, the others in Python.
            plain = [i for i in rest if words[i].isascii()] if _fastsearch is not None else []
            if plain:
                out += [words[i] for i in similar_among(word, words, plain, word_similarity_threshold)]
            trg1 = set(query)
            out += [words[i] for i in rest if not (plain and words[i].isascii())
                    and _iterate(trg1, trigram_list(words[i])) >= word_similarity_threshold]
        return out

    def _sharing(self, query: frozenset[str], k: int) -> list | None:
        """The words sharing at least ``k`` of the ``query``'s m trigrams, by how many: [j] the
        ordinals of those sharing exactly j (ascending); None when k > m. Counted in C where
        it is built (_fastsearch.shared_counts), else with bitmap layers."""
        m = len(query)
        if k > m:
            return None
        empty = BitMap()
        sets = [self._postings.get(t, empty) for t in query]
        if _fastsearch is not None:
            members, counts = _fastsearch.shared_counts([s.to_array() for s in sets], k)
            exactly: list = [[] for _ in range(m + 1)]
            for i, c in zip(members, counts):
                exactly[c].append(i)
            return exactly
        layers = at_least_layers(sets, k)
        return [layers[j] - layers[j + 1] for j in range(m)] + [layers[m]]
