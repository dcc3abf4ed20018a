"""indexium_search.tsrank against PostgreSQL's own ts_rank(vector, query, 32) to the last float4
bit, over vectors PostgreSQL builds (all four weights, repeated lexemes, lexemes that start
others, vectors without positions) and queries of the shape the search index sends (ORed
parts of ANDed terms and phrases, prefix terms, the same lexeme as a prefix and not)."""

from __future__ import annotations

import random
import struct

from indexium_search import tsrank

# Words that start one another ('iron', 'ironwood'...): a prefix operand matches several entries.
WORDS = ["iron", "ironwood", "irons", "ir", "magic", "magical", "magicka", "map", "maps", "mapper", "chest",
         "chests", "sodium", "sod", "extra", "extras", "lantern", "lanterns", "cozy", "oak", "o", "s", "olga",
         "mod", "mods", "modded", "better", "bet", "storage", "store", "stor", "dark", "darker", "rendering"]


def _document(rng: random.Random) -> list[str]:
    # (with runs of one word: many positions of one lexeme, up to PostgreSQL's 256 kept)
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
    if rng.random() < 0.1:
        words += [rng.choice(WORDS)] * rng.randint(20, 300)
    return words


def _stored_operands(binary: bytes) -> list[tuple[str, bool]]:
    """A tsquery's operands in its stored order, from tsquerysend's format."""
    (size,), i, out = struct.unpack(">I", binary[:4]), 4, []
    for _ in range(size):
        kind = binary[i]
        i += 1
        if kind == 1:  # QI_VAL: weight, prefix, text
            prefix = bool(binary[i + 1])
            end = binary.index(0, i + 2)
            out.append((binary[i + 2:end].decode(), prefix))
            i = end + 1
        else:  # QI_OPR: operator (phrase: and its distance)
            i += 1 + (2 if binary[i] == 4 else 0)
    return out


def _query(rng: random.Random) -> tuple[str, list[tuple[str, bool]]] | None:
    """A tsquery as indexed.tsquery_of writes one ('(part) | (part)', parts sorted, each terms
    joined by &, a term a lexeme or a phrase, the last lexeme perhaps a prefix), and its
    operands in text order."""
    pool = rng.sample(WORDS, rng.randint(1, 4))
    parts: dict[str, list[tuple[str, bool]]] = {}
    for _ in range(rng.randint(2, 5)):
        terms = [rng.sample(pool, min(len(pool), rng.choice([1, 1, 1, 2]))) for _ in range(rng.randint(1, 4))]
        prefix = rng.random() < 0.5
        text = " & ".join(" <-> ".join(f"'{x}'" for x in term) for term in terms) + (":*" if prefix else "")
        operands = [(x, False) for term in terms for x in term]
        operands[-1] = (operands[-1][0], prefix)
        parts[text] = operands
    texts = sorted(parts)
    if len(texts) == 1 and len(parts[texts[0]]) > 1:
        return None  # the top operator AND or a phrase: calc_rank_and's (indexed.rank_query)
    return " | ".join(f"({t})" for t in texts), [op for t in texts for op in parts[t]]


def _stable_first(textual: list[tuple[str, bool]]) -> tsrank.Query:
    """What a stable sort would keep of equal operands (not PostgreSQL's choice): the test's
    control that the queries do depend on which one is kept."""
    out: list[tuple[str, bool]] = []
    for op in sorted(textual[::-1], key=lambda x: x[0]):
        if not out or out[-1][0] != op[0]:
            out.append(op)
    return tsrank.Query(out)


async def test_ts_rank_is_postgresqls_to_the_bit(db):
    rng = random.Random(17)
    docs = [[_document(rng) for _ in range(4)] for _ in range(400)]
    rows = await db.fetch(
        """SELECT (setweight(to_tsvector('simple', a), 'A') || setweight(to_tsvector('simple', b), 'B')
                  || setweight(to_tsvector('simple', c), 'C') || to_tsvector('simple', d))::text AS v
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS t(a, b, c, d)""",
        *[[" ".join(d[k]) for d in docs] for k in range(4)])
    vectors = [r["v"] for r in rows]
    vectors += await db.fetchval("SELECT array_agg(strip(v::tsvector)::text) FROM unnest($1::text[]) v", vectors[:40])
    vectors += ["", "'iron' 'magic':3", "'iron':2,7B,9C,12 'ironwood':1A", "'a\\\\b':2 'o''brien':1A"]
    parsed = [tsrank.parse_vector(v) for v in vectors]
    compared = nonzero = kept_matters = 0
    differ = []
    for _ in range(250):
        if (q := _query(rng)) is None:
            continue
        text, textual = q
        stored = _stored_operands(await db.fetchval("SELECT tsquerysend($1::tsquery)", text))
        assert stored == textual[::-1], (text, stored)  # the order Query.of_or assumes
        query, control = tsrank.Query.of_or(textual), _stable_first(textual)
        theirs = await db.fetch("SELECT ts_rank(v::tsvector, $1::tsquery, 32) AS r FROM unnest($2::text[]) v",
                                text, vectors)
        for v, (lexemes, _, terms), r in zip(vectors, parsed, theirs):
            ours = tsrank.rank(query, lexemes, len(lexemes), terms)
            compared += 1
            nonzero += ours != 0
            kept_matters += ours != tsrank.rank(control, lexemes, len(lexemes), terms)
            if ours != r["r"]:
                differ.append((text, v, ours, r["r"]))
    assert not differ, differ[:5]
    assert compared > 100_000 and nonzero > 20_000
    assert kept_matters > 100  # PostgreSQL's quicksort, not any sort, decides these


async def test_the_vectors_lexemes_and_weight_a_are_postgresqls(db):
    """parse_vector's lexemes are tsvector_to_array's, its weight-A ones ts_filter(v, '{a}')'s."""
    rng = random.Random(4)
    texts = [" ".join(_document(rng)) for _ in range(300)] + ["o'brien a\\b ünïcode", ""]
    rows = await db.fetch(
        """SELECT v::text AS v, tsvector_to_array(v) AS lexemes, tsvector_to_array(ts_filter(v, '{a}')) AS heavy
           FROM (SELECT setweight(to_tsvector('simple', t), 'A') || to_tsvector('simple', reverse(t)) ||
                        setweight(to_tsvector('simple', upper(t)), 'C') AS v FROM unnest($1::text[]) t) x""", texts)
    for r in rows:
        lexemes, heavy, terms = tsrank.parse_vector(r["v"])
        assert (lexemes, sorted(heavy)) == (r["lexemes"], sorted(r["heavy"])), r["v"]
        assert len(terms) == len(lexemes)


def test_pg_qsort_sorts_and_keeps_postgresqls_order_of_equals():
    rng = random.Random(8)
    for n in list(range(0, 60)) + [200, 1000]:
        v = [(rng.choice("abcdefg"), i) for i in range(n)]
        w = list(v)
        tsrank.pg_qsort(w)
        assert [x[0] for x in w] == sorted(x[0] for x in v)
        assert sorted(w) == sorted(v)
