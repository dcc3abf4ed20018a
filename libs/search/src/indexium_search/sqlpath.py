"""Search's SQL path: the statements that answer a catalogue search from PostgreSQL alone
(``search``, ``count``), the parts the index's planner (``indexed``) builds its own statements
from (``Sql``, ``filters``, ``text_query``, ``ORDER``, ``HIT_COLUMNS``, ``run``), the typo
correction (``corrected_query``) and the partial (any-word) fallback. See docs/search.md.

Search SQL is assembled from the filters actually given (each shape is a prepared
statement of its own), so PostgreSQL plans every shape with the right index instead
of one generic plan full of ``$n IS NULL OR ...``. Values always travel as parameters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Container
from dataclasses import dataclass, replace

import asyncpg

from . import facets as facets_q, trigram
from .querytext import MAX_QUERY_WORDS, PREFIX_MIN_CHARS, WORDS as _WORDS, normalized, plain_tokens
from .websearch import defuse

# For search's sort=active_servers: servers seen on the last complete UTC day. Join it as
#   FROM mods m LEFT JOIN mod_daily_stats ds ON ds.mod_id = m.id AND ds.day = <ACTIVE_SERVERS_DAY>
# and order by COALESCE(ds.servers, 0) DESC, then the usual tie-breakers.
ACTIVE_SERVERS_DAY = "((now() AT TIME ZONE 'UTC')::date - 1)"
ACTIVE_SERVERS_JOIN = (
    f"LEFT JOIN mod_daily_stats ds ON ds.mod_id = m.id AND ds.day = {ACTIVE_SERVERS_DAY}")
ACTIVE_SERVERS_EXPR = "COALESCE(ds.servers, 0)"

SORTS = ("relevance", "updated", "newest", "downloads", "active_servers", "name")
ENVIRONMENTS = ("client", "server")
# Full-text search finding fewer hits than this (and a query of at least FUZZY_MIN_CHARS)
# adds trigram matches on names, so "sodim" still finds Sodium. 1 = only when it finds
# nothing: a query that already found its mod ("Lazy Lanterns API") gains only noise from
# a fuzzy pass, and that pass (a trigram scan over every name) is the slowest search we run.
FUZZY_BELOW = 1
FUZZY_MIN_CHARS = 3
# One letter wrong in an 8-letter word scores about 0.55 ("furaces" ~ "furnaces"); pg_trgm's
# default (0.6) misses it. Below 0.5 a query matches names that merely share a syllable.
FUZZY_WORD_SIMILARITY = 0.5
# A query word is replaced by the most similar catalogue word at least this similar
# ("sodim" ~ "sodium" is 0.44, "furaces" ~ "furnaces" 0.55).
CORRECTION_SIMILARITY = 0.4
# Ranking every match costs a heap visit per match (count and ts_rank alike): ~8,000 matches
# of "magic" in the 100,000-mod bench cost ~25 ms. A relevance search matching more listed
# mods than BROAD_MATCHES ranks a bounded candidate set instead: the BROAD_CANDIDATES most
# downloaded matches (an index walk in popularity order that stops there) and the matches
# whose name starts with the query (so an exact or prefix name is never lost to popularity);
# its total is then PostgreSQL's estimate, never below BROAD_MATCHES + 1. Pages past
# BROAD_CANDIDATES rank every match, as before.
BROAD_MATCHES = 2000
BROAD_CANDIDATES = 100
# Corrections remembered per process (word -> catalogue word, or None for no correction).
CORRECTIONS_MAX = 10_000
# A mod the query matches only in its README (readme_vector, no rank share of its own) ranks
# this much lower: below every mod it matches in search_vector (a rank there is at least 0,
# a README-only one at most 1.0 + ~0.25 of popularity - 2.0). searchindex keeps its copy.
README_ONLY_PENALTY = 2.0


def _as_tuple(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@dataclass(frozen=True)
class SearchQuery:
    """What GET /mods asks. Facet tuples are OR within a facet; categories must all match."""

    q: str | None
    game_versions: tuple[str, ...] = ()
    loaders: tuple[str, ...] = ()
    limit: int = 20
    offset: int = 0
    sort: str | None = None  # None: relevance with q, updated without
    environment: str | None = None
    categories: tuple[str, ...] = ()
    author: str | None = None
    # One of formats.PROJECT_TYPES (/api/v1's ``type``): the project_type facet's condition (type_facet).
    project_type: str | None = None
    # Modrinth-style facet groups (/v2/search) beyond the loader/game-version pair: facets.py.
    facets: tuple = ()

    def __post_init__(self) -> None:
        for name in ("game_versions", "loaders", "categories"):
            object.__setattr__(self, name, _as_tuple(getattr(self, name)))
        if self.sort is not None and self.sort not in SORTS:
            raise ValueError(f"unknown sort {self.sort!r}")

    @property
    def type_facet(self) -> facets_q.Facet | None:
        """``project_type`` as the v2 facet ``project_type:<type>``: one meaning, one condition
        (facets._positive) and one set of index keys (indexed._facet_keys) for both APIs."""
        return facets_q.Facet("project_type", ":", self.project_type) if self.project_type else None

    @property
    def effective_sort(self) -> str:
        return self.sort or ("relevance" if self.q else "updated")


class Corrections:
    """Typo corrections already looked up (query word -> catalogue word or None), so a typo
    that comes back costs no trigram search. One per process and database: the catalogue's
    words are only ever added to, so a remembered correction stays a real word; at worst a
    closer word added since is not chosen until the memory is cleared (when full, or by the
    API's invalidation on every catalogue event)."""

    def __init__(self, max_words: int = CORRECTIONS_MAX) -> None:
        self.max_words = max_words
        self._words: dict[str, str | None] = {}

    def get(self, word: str) -> tuple[bool, str | None]:
        try:
            return True, self._words[word]
        except KeyError:
            return False, None

    def put(self, word: str, best: str | None) -> None:
        if len(self._words) >= self.max_words:
            self._words.clear()
        self._words[word] = best

    def clear(self) -> None:
        self._words.clear()

    def __len__(self) -> int:
        return len(self._words)


def prefix_tsquery(q: str) -> str | None:
    """'fast rend' -> "'fast' & 'rend':*" (as-you-type: the last word is a prefix).

    A last word shorter than PREFIX_MIN_CHARS is still being typed and means nothing yet
    ('a':* matches a third of everything): 'tiny p' -> "'tiny'".
    """
    words = _WORDS.findall(q.lower())[:MAX_QUERY_WORDS]
    if words and len(words[-1]) < PREFIX_MIN_CHARS:
        words = words[:-1]
        return " & ".join(f"'{w}'" for w in words) if words else None
    if not words:
        return None
    return " & ".join(f"'{w}'" for w in words) + ":*"


class Sql:
    """Collects parameters so fragments can say ``p(value)`` instead of counting $n."""

    def __init__(self) -> None:
        self.args: list = []

    def p(self, value, cast: str = "") -> str:
        self.args.append(value)
        return f"${len(self.args)}{cast}"


def filters(sq: SearchQuery, s: Sql) -> list[str]:
    where = ["m.listed"]
    if sq.game_versions and sq.loaders:
        # Both facets must hold on one file: a mod with forge on 1.19 and fabric on 1.20 is
        # no match for (1.20, forge). file_facets holds exactly those per-file pairs.
        pairs = sorted({f"{lo}|{gv}" for lo in sq.loaders for gv in sq.game_versions})
        where.append(f"m.file_facets && {s.p(pairs, '::text[]')}")
    elif sq.game_versions:
        where.append(f"m.game_versions && {s.p(list(sq.game_versions), '::text[]')}")
    elif sq.loaders:
        where.append(f"m.loaders && {s.p(list(sq.loaders), '::text[]')}")
    if sq.environment:
        where.append(f"m.environment = ANY({s.p([sq.environment, 'both'], '::text[]')})")
    if sq.categories:
        where.append(f"m.categories @> {s.p(list(sq.categories), '::text[]')}")
    if sq.author:
        a = s.p(sq.author.lower())
        where.append(f"(m.author_keys @> ARRAY[{a}::text] OR m.author_github_id IN "
                     f"(SELECT github_id FROM authors WHERE lower(login) = {a}))")
    if sq.type_facet is not None:
        where += facets_q.conditions(((sq.type_facet,),), s.p)
    if sq.facets:
        where += facets_q.conditions(sq.facets, s.p)
    return where


# A hit's two columns from other tables (also what the search index holds of them: indexed._INDEX_COLUMNS).
HAS_ICON = "EXISTS (SELECT 1 FROM mod_icons i WHERE i.mod_id = m.id)"
ACTIVE_SERVERS = f"""COALESCE((SELECT ds.servers FROM mod_daily_stats ds
                 WHERE ds.mod_id = m.id AND ds.day = {ACTIVE_SERVERS_DAY}), 0)"""
HIT_COLUMNS = f"""m.slug, m.name, m.summary, m.authors, m.categories, m.environment, m.loaders, m.project_type,
       m.game_versions, m.latest_version, m.downloads, m.last_published_at AS updated_at,
       m.created_at, {HAS_ICON} AS has_icon,
       {ACTIVE_SERVERS} AS active_servers"""

# Orders by sort; "h." names columns of the ranked page (rank, servers), "m." the mod.
ORDER = {
    "relevance": "h.rank DESC, m.downloads DESC, m.slug",
    "updated": "m.last_published_at DESC NULLS LAST, m.slug",
    "newest": "m.created_at DESC, m.slug",
    "downloads": "m.downloads DESC, m.slug",
    "name": "lower(m.name), m.slug",
    "active_servers": "h.servers DESC, m.downloads DESC, m.slug",
}


def text_match(tsq: str) -> str:
    """The row m matches the tsquery ``tsq``: in its name, slug, summary, authors or
    abbreviations (search_vector), or in its README (readme_vector: lexemes only)."""
    return f"(m.search_vector @@ {tsq} OR m.readme_vector @@ {tsq})"


def rank_expression(tsq: str, ql: str) -> str:
    """Relevance (see docs/api.md) of the row m for the tsquery ``tsq`` and normalized query ``ql``."""
    return (f"ts_rank(m.search_vector, {tsq}, 32)"  # rank/(rank+1): frequency saturates
            f" + CASE WHEN lower(m.name) = {ql} THEN 1.0 WHEN {ql} = ANY(m.abbreviations) THEN 0.9"
            f" WHEN starts_with(lower(m.name), {ql}) THEN 0.5 ELSE 0 END + ln(1 + m.downloads::float8) / 100"
            f" - CASE WHEN m.search_vector @@ {tsq} THEN 0 ELSE {README_ONLY_PENALTY} END")


def relevance(s: Sql, q: str, tsq: str) -> tuple[str, str]:
    """(the rank expression of row m for the tsquery expression ``tsq`` and the query ``q``, the
    parameter holding q normalized, which the fuzzy pass compares names with): what every
    ranked search statement (``text_query``, ``_broad_sql``, ``indexed``'s) writes, once."""
    ql = s.p(normalized(q), "::text")
    return rank_expression(tsq, ql), ql


def _token_parts(s: Sql, q: str, last: bool) -> list[str]:
    """The tsquery parts of text ``q``: websearch_to_tsquery in each configuration and, ``last``,
    its last word as a prefix (prefix_tsquery)."""
    p = s.p(defuse(q))  # (a run of dashes would overflow the parser's stack)
    parts = [f"websearch_to_tsquery('{cfg}', {p})" for cfg in ("english", "russian", "simple")]
    prefix = prefix_tsquery(q) if last else None
    if prefix:
        parts.append(f"to_tsquery('simple', {s.p(prefix)})")
    return parts


def text_query(sq: SearchQuery, s: Sql, fuzzy: bool, ranked: bool = True,
                inline_threshold: bool = False, tokens: list[str] | None = None) -> tuple[str, str, str]:
    """(CTE, match condition, rank expression) for a non-empty q. ``inline_threshold``: the fuzzy
    match as word_similarity(...) >= FUZZY_WORD_SIMILARITY, the very test ``<%`` makes, for a
    query over candidate ids (no trigram index to use) outside typo_thresholds' transaction.
    ``tokens``: the partial query of these tokens (any of them, each with its own parts, the
    last one's last word a prefix; partial_search), instead of q's."""
    if tokens is None:
        parts = _token_parts(s, sq.q, last=True)
    else:
        parts = [p for i, t in enumerate(tokens) for p in _token_parts(s, t, last=i == len(tokens) - 1)]
    # The configurations often agree ('sodium' three times): OR only the distinct ones, so
    # matching and ranking test each alternative once.
    # (By text: tsquery equality ignores the :* prefix flag.) In text order: ts_rank of an OR
    # depends on its operands' order, which DISTINCT alone leaves to the plan of the moment.
    cte = (f"WITH parts AS (SELECT DISTINCT p::text AS p FROM unnest(ARRAY[{', '.join(parts)}]) AS p"
           f" WHERE numnode(p) > 0),"
           f" query AS (SELECT COALESCE((SELECT string_agg('(' || p || ')', ' | ' ORDER BY p) FROM parts),"
           f" '')::tsquery AS tsq)")
    match, rank = text_match("query.tsq"), ""
    if not (ranked or fuzzy):
        return cte, match, rank  # (every parameter added must be used: its type is inferred)
    rank, ql = relevance(s, sq.q, "query.tsq")
    if fuzzy:
        # Word similarity: the query against the best-matching stretch of the name, so
        # "sodim" finds "Sodium Extra" and a long query is not diluted by a short name.
        similar = (f"word_similarity({ql}, lower(m.name)) >= {FUZZY_WORD_SIMILARITY}::float8" if inline_threshold
                   else f"{ql} <% lower(m.name)")
        match = f"({match} OR {similar})"
        rank += f" + word_similarity({ql}, lower(m.name))"
    return cte, match, rank


def page_sql(sq: SearchQuery, fuzzy: bool, cap: int | None = None) -> tuple[str, list]:
    """Two phases: rank and count narrow rows, then read the card columns of one page only.

    ``cap`` (relevance with q): rank and count at most cap + 1 matches, in no particular
    order; a total of cap + 1 says the query is broad and this page is not the answer.
    """
    s = Sql()
    sort = sq.effective_sort if (sq.q or sq.effective_sort != "relevance") else "downloads"
    if sort == "active_servers" and not sq.q:
        return _active_servers_sql(sq, s)
    ctes, frm, conditions, rank, servers, total = [], "mods m", [], "NULL::float8", "0", ""
    if sq.q:
        cte, match, rank = text_query(sq, s, fuzzy)
        ctes.append(cte.removeprefix("WITH "))
        frm += " CROSS JOIN query"
        conditions.append(match)
        total = ", count(*) OVER () AS total"
    if sort == "active_servers":
        frm += f" {ACTIVE_SERVERS_JOIN}"
        servers = ACTIVE_SERVERS_EXPR
    conditions = filters(sq, s) + conditions
    inner_order = ORDER[sort].replace("h.", "")
    if cap is not None and sq.q and sort == "relevance":
        ctes.append(f"""matched AS (
    SELECT m.id, {rank} AS rank, m.downloads, m.slug
    FROM {frm}
    WHERE {' AND '.join(conditions)}
    LIMIT {s.p(cap + 1)})""")
        ctes.append(f"""h AS (
    SELECT id, rank, 0 AS servers{total} FROM matched
    ORDER BY rank DESC, downloads DESC, slug
    LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})""")
    else:
        ctes.append(f"""h AS (
    SELECT m.id, {rank} AS rank, {servers} AS servers{total}
    FROM {frm}
    WHERE {' AND '.join(conditions)}
    ORDER BY {inner_order}
    LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})""")
    # Capped: the query's tsquery too, which a broad query's second pass needs as a parameter.
    tsq = ", (SELECT tsq::text FROM query) AS tsq" if cap is not None and sq.q and sort == "relevance" else ""
    sql = f"""WITH {', '.join(ctes)}
SELECT {HIT_COLUMNS}{', h.total' if total else ''}{tsq}
FROM h JOIN mods m ON m.id = h.id
ORDER BY {ORDER[sort]}"""
    return sql, s.args


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _broad_sql(sq: SearchQuery, tsq: str, candidates: int) -> tuple[str, list]:
    """A relevance page of a broad query from bounded candidates (see BROAD_MATCHES): ``tsq``
    is the query's tsquery as text, a parameter, so the plan walks the popularity index."""
    s = Sql()
    t = s.p(tsq, "::tsquery")  # one parameter, not a CTE: a CTE scan joined to the walk loses its LIMIT
    rank, ql = relevance(s, sq.q, t)
    n = s.p(candidates)
    popular_filters = " AND ".join(filters(sq, s))
    named_filters = " AND ".join(filters(sq, s))
    abbreviated_filters = " AND ".join(filters(sq, s))
    # OFFSET 0 keeps the text condition out of the ordered scan: the planner cannot turn the
    # walk down mods_listed_downloads_idx into a bitmap scan of every match and a sort.
    sql = f"""WITH cand AS (
    (SELECT m.id FROM (SELECT m.id, m.search_vector, m.readme_vector FROM mods m WHERE {popular_filters}
                       ORDER BY m.downloads DESC, m.slug OFFSET 0) m
     WHERE {text_match(t)} LIMIT {n})
    UNION
    (SELECT m.id FROM mods m
     WHERE {named_filters} AND lower(m.name) LIKE {s.p(_like_prefix(normalized(sq.q)))}
       AND {text_match(t)}
     ORDER BY m.downloads DESC, m.slug LIMIT {n})
    UNION
    (SELECT m.id FROM mods m
     WHERE {abbreviated_filters} AND m.abbreviations @> ARRAY[{ql}] AND {text_match(t)}
     ORDER BY m.downloads DESC, m.slug LIMIT {n})),
h AS (
    SELECT m.id, {rank} AS rank
    FROM cand JOIN mods m ON m.id = cand.id
    ORDER BY rank DESC, m.downloads DESC, m.slug
    LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})
SELECT {HIT_COLUMNS}
FROM h JOIN mods m ON m.id = h.id
ORDER BY {ORDER["relevance"]}"""
    return sql, s.args


async def _broad(conn: asyncpg.Connection, sq: SearchQuery, tsq: str, found_at_least: int,
                 candidates: int) -> tuple[list[asyncpg.Record], int]:
    sql, args = _broad_sql(sq, tsq, candidates)
    rows = await conn.fetch(sql, *args)
    # The total: the planner's estimate of the matches (its statistics of the lexemes), as
    # counting them would cost the heap visits this path avoids; never below what we saw.
    s = Sql()
    where = " AND ".join([*filters(sq, s), text_match(f"{s.p(tsq)}::tsquery")])
    plan = await conn.fetchval(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM mods m WHERE {where}", *s.args)
    estimate = int(json.loads(plan)[0]["Plan"]["Plan Rows"]) if isinstance(plan, str) else int(
        plan[0]["Plan"]["Plan Rows"])
    return rows, max(estimate, found_at_least)


def _active_servers_sql(sq: SearchQuery, s: Sql) -> tuple[str, list]:
    """Browse by active servers without walking every mod: the day's stats in index order
    (mod_daily_stats_day_servers_idx), then mods with no servers by popularity."""
    conditions = " AND ".join(filters(sq, s))
    n = s.p(sq.offset + sq.limit)
    sql = f"""WITH h AS (
    (SELECT m.id, ds.servers, m.downloads, m.slug
     FROM mod_daily_stats ds JOIN mods m ON m.id = ds.mod_id
     WHERE ds.day = {ACTIVE_SERVERS_DAY} AND ds.servers > 0 AND {conditions}
     ORDER BY ds.servers DESC, m.downloads DESC, m.slug LIMIT {n})
    UNION ALL
    (SELECT m.id, 0, m.downloads, m.slug FROM mods m
     WHERE {conditions} AND NOT EXISTS (
        SELECT 1 FROM mod_daily_stats ds
        WHERE ds.mod_id = m.id AND ds.day = {ACTIVE_SERVERS_DAY} AND ds.servers > 0)
     ORDER BY m.downloads DESC, m.slug LIMIT {n})
    ORDER BY 2 DESC, 3 DESC, 4 LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})
SELECT {HIT_COLUMNS}
FROM h JOIN mods m ON m.id = h.id
ORDER BY {ORDER["active_servers"]}"""
    return sql, s.args


def _count_sql(sq: SearchQuery, fuzzy: bool) -> tuple[str, list]:
    s = Sql()
    cte, frm, conditions = "", "mods m", []
    if sq.q:
        cte, match, _ = text_query(sq, s, fuzzy, ranked=False)
        frm = "mods m CROSS JOIN query"
        conditions.append(match)
    conditions = filters(sq, s) + conditions
    return f"{cte} SELECT count(*) FROM {frm} WHERE {' AND '.join(conditions)}", s.args


async def run(
    conn: asyncpg.Connection, sq: SearchQuery, fuzzy: bool, total: int | None = None,
    broad: tuple[int, int] | None = None,
) -> tuple[list[asyncpg.Record], int]:
    """``broad``: (BROAD_MATCHES, BROAD_CANDIDATES), or None to rank every match."""
    cap = None
    if broad is not None and sq.q and sq.effective_sort == "relevance" and not fuzzy \
            and sq.offset + sq.limit <= broad[1]:
        cap = broad[0]
    sql, args = page_sql(sq, fuzzy, cap)
    rows = await conn.fetch(sql, *args)
    if cap is not None and rows and rows[0]["total"] > cap:
        return await _broad(conn, sq, rows[0]["tsq"], cap + 1, broad[1])
    if sq.q and rows:
        return rows, rows[0]["total"]
    if not rows and sq.offset == 0:
        return rows, 0
    if total is not None:
        return rows, total
    # Without q the count is its own query (an index-only count where it can be); past the
    # end the window count is gone, so count separately.
    sql, args = _count_sql(sq, fuzzy)
    return rows, await conn.fetchval(sql, *args)


def partial_weights(total: int, counts: list[int]) -> list[float]:
    """Each token's weight in a partial query's rank (partial_search): ln(1 + total / its matches), so a
    rare word (Kibe, in 1 of the 500 matches of "kibe utilities") outweighs a common one (0.7 for
    the 499 utilities); 0 for a token matching nothing. Computed here for both paths (the index
    ranks with the same floats PostgreSQL is given)."""
    return [math.log(1 + total / c) if c else 0.0 for c in counts]


def partial_tokens(q: str) -> list[str] | None:
    """The tokens of a query that may be relaxed into a partial one (plain, at least two)."""
    tokens = plain_tokens(q)
    return tokens if tokens is not None and len(tokens) >= 2 else None


def _partial_sql(sq: SearchQuery, tokens: list[str], weights: list[float] | None) -> tuple[str, list]:
    """``weights`` None: how many mods match any token, and each token (total, d0, d1, ...); else
    one page of them, with its total, ranked by catalog's rank expression over the partial
    query plus each matched token's weight (or in ``sq``'s sort)."""
    s = Sql()
    cte, match, _ = text_query(sq, s, fuzzy=False, ranked=False, tokens=tokens)
    each = [" || ".join(_token_parts(s, t, last=i == len(tokens) - 1)) for i, t in enumerate(tokens)]
    cte += ", tok AS (SELECT " + ", ".join(f"({e}) AS q{i}" for i, e in enumerate(each)) + ")"
    frm = "mods m CROSS JOIN query CROSS JOIN tok"
    if weights is None:
        counts = ", ".join(f"count(*) FILTER (WHERE {text_match(f'tok.q{i}')}) AS d{i}" for i in range(len(tokens)))
        where = " AND ".join([*filters(sq, s), match])
        return f"{cte} SELECT count(*) AS total, {counts} FROM {frm} WHERE {where}", s.args
    sort = sq.effective_sort
    rank = "NULL::float8"
    if sort == "relevance":
        rank, _ = relevance(s, sq.q, "query.tsq")
        rank += "".join(f" + CASE WHEN {text_match(f'tok.q{i}')} THEN {s.p(w, '::float8')} ELSE 0 END"
                        for i, w in enumerate(weights))
    servers = ACTIVE_SERVERS_EXPR if sort == "active_servers" else "0"
    if sort == "active_servers":
        frm += f" {ACTIVE_SERVERS_JOIN}"
    where = " AND ".join([*filters(sq, s), match])
    sql = f"""{cte}, h AS (
    SELECT m.id, {rank} AS rank, {servers} AS servers, count(*) OVER () AS total
    FROM {frm} WHERE {where}
    ORDER BY {ORDER[sort].replace("h.", "")} LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})
SELECT {HIT_COLUMNS}, h.total FROM h JOIN mods m ON m.id = h.id ORDER BY {ORDER[sort]}"""
    return sql, s.args


async def partial_search(conn: asyncpg.Connection, sq: SearchQuery) -> tuple[list[asyncpg.Record], int] | None:
    """A query whose words match no mod together, relaxed: the mods matching any of its tokens,
    ranked with each matched token's weight (partial_weights) added to the rank expression, so
    the mods matching the most and rarest of the words come first ("Kibe Utilities": Kibe). The
    total is how many mods match any token (counted, never estimated). None: not a query to
    relax (fewer than two tokens, or websearch syntax: the words were meant as written)."""
    tokens = partial_tokens(sq.q)
    if tokens is None:
        return None
    sql, args = _partial_sql(sq, tokens, None)
    counts = await conn.fetchrow(sql, *args)
    if not counts["total"]:
        return [], 0
    weights = partial_weights(counts["total"], [counts[f"d{i}"] for i in range(len(tokens))])
    sql, args = _partial_sql(sq, tokens, weights)
    rows = await conn.fetch(sql, *args)
    return rows, counts["total"]


async def typo_thresholds(conn: asyncpg.Connection) -> None:
    """pg_trgm's thresholds for the typo steps (corrections, the fuzzy name pass), for the
    transaction under way only."""
    await conn.execute(f"SET LOCAL pg_trgm.similarity_threshold = {CORRECTION_SIMILARITY}; "
                       f"SET LOCAL pg_trgm.word_similarity_threshold = {FUZZY_WORD_SIMILARITY}")


async def search(
    conn: asyncpg.Connection, sq: SearchQuery, *, total: int | None = None,
    corrections: Corrections | None = None, broad_matches: int = BROAD_MATCHES,
    broad_candidates: int = BROAD_CANDIDATES,
) -> tuple[list[asyncpg.Record], int]:
    """A page of hits and the total. ``total`` known already (cached, for the same filters
    without q) saves the count; ``corrections`` remembers typo corrections between calls."""
    broad = (broad_matches, broad_candidates)
    rows, found = await run(conn, sq, fuzzy=False, total=total, broad=broad)
    if not sq.q or found >= FUZZY_BELOW or len(sq.q.strip()) < FUZZY_MIN_CHARS:
        return rows, found
    # Full text found nothing. First correct the words against the catalogue's own words
    # ("furaces" -> "furnaces") and search again; failing that, the mods holding some of the
    # words (partial_search); failing that, trigram word similarity on names (the slower scan).
    async with conn.transaction():
        await typo_thresholds(conn)
        corrected = await corrected_query(conn, sq.q, corrections)
        if corrected is not None:
            rows, found = await run(conn, replace(sq, q=corrected), fuzzy=False, broad=broad)
            if found:
                return rows, found
        # No mod holds all the words (corrected): the mods holding some of them, ranked.
        partial = await partial_search(conn, replace(sq, q=corrected) if corrected is not None else sq)
        if partial is not None and partial[1]:
            return partial
        return await run(conn, sq, fuzzy=True)


async def finds_mod(conn: asyncpg.Connection, sq: SearchQuery, mod_id) -> bool:
    """Whether search ``sq`` finds this mod by its full text and mod-level filters (listed,
    categories, environment, author), with the very conditions ``search`` uses. The loader and
    game-version facets are left to the caller, who holds them per file of one version (a
    saved search's notification: the new version's files, not the mod's roll-up); the typo
    fallbacks (corrections, trigram names) are not applied: they rescue a search that found
    nothing at all, which says nothing about one mod."""
    cte, frm, where, s = mod_conditions(replace(sq, game_versions=(), loaders=(), facets=()))
    where.append(f"m.id = {s.p(mod_id, '::uuid')}")
    return await conn.fetchval(f"{cte} SELECT EXISTS (SELECT 1 FROM {frm} WHERE {' AND '.join(where)})", *s.args)


def mod_conditions(sq: SearchQuery) -> tuple[str, str, list[str], Sql]:
    """(CTE, FROM, conditions, parameters) selecting the mods ``m`` search ``sq`` finds: its full
    text and every filter, the very ones ``search`` writes, unranked and without the typo
    fallbacks. For a caller that adds its own conditions (``s.p(value)``) and columns: a saved
    search's notification (``finds_mod``), the search's Atom feed (``feeds``)."""
    s = Sql()
    where = filters(sq, s)
    cte, frm = "", "mods m"
    if sq.q:
        cte, match, _ = text_query(sq, s, fuzzy=False, ranked=False)
        frm += " CROSS JOIN query"
        where.append(match)
    return cte, frm, where, s


async def count(conn: asyncpg.Connection, sq: SearchQuery) -> int:
    """How many listed mods pass the filters (a browse total: no q)."""
    sql, args = _count_sql(sq, fuzzy=False)
    return await conn.fetchval(sql, *args)


async def corrected_query(conn: asyncpg.Connection, q: str, corrections: Corrections | None = None,
                     known: Container[str] = ()) -> str | None:
    """q with each word replaced by its nearest catalogue word; None if nothing changes.

    A word's candidates are the catalogue words (search_words) at least CORRECTION_SIMILARITY
    similar to it or FUZZY_WORD_SIMILARITY word-similar ("coy" is 0.5 of "cozy"), both through
    search_words' GiST index, and the words one edit away ("reux" is 0.375 similar and 0.4
    word-similar to "redux", too far for either measure), looked up by primary key among its
    edits, in the same statement. trigram.best_correction chooses: the smallest edit cost
    ("shars": shards, shears, not share, one letter replaced), then the most similar, then the
    smaller word. Callers set both thresholds. ``known``: words known to be in search_words,
    each its own nearest word (no lookup).
    """
    words = _WORDS.findall(q.lower())[:MAX_QUERY_WORDS]
    best: dict[str, str] = {}
    unknown = []
    for w in words:
        if len(w) < 3 or w in known:
            best[w] = w
            continue
        remembered, fixed = corrections.get(w) if corrections is not None else (False, None)
        if remembered:
            best[w] = fixed or w
        elif w not in unknown:
            unknown.append(w)
    if unknown:
        typed, edited = [], []
        for w in unknown:  # (a word's edits are ~330-800 strings)
            for e in trigram.edits(w):
                typed.append(w)
                edited.append(e)
        rows = await conn.fetch(
            """SELECT t.w, s.word FROM unnest($1::text[]) AS t(w) JOIN search_words s ON s.word % t.w
               UNION SELECT t.w, s.word FROM unnest($1::text[]) AS t(w) JOIN search_words s ON t.w <% s.word
               UNION SELECT e.w, s.word FROM unnest($2::text[], $3::text[]) AS e(w, edit)
                     JOIN search_words s ON s.word = e.edit""",
            unknown, typed, edited,
        )
        found: dict[str, list[str]] = {w: [] for w in unknown}
        for r in rows:
            found[r["w"]].append(r["word"])
        for w, candidates in found.items():
            fixed_word = trigram.best_correction(w, sorted(candidates))
            best[w] = fixed_word or w
            if corrections is not None:
                corrections.put(w, fixed_word)
    fixed = [best[w] for w in words]
    return " ".join(fixed) if fixed != words else None
