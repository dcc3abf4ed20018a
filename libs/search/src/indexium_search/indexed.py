"""Search answered by the in-process candidate index (``indexium_search.searchindex``) and one
PostgreSQL query; every search the index cannot take goes to ``sqlpath.search`` unchanged.

The index says which listed mods match and how many (the total is exact as of the index). A
relevance page it also ranks itself (``tsrank``: PostgreSQL's ts_rank, exactly; any page it
takes, the later ones too), and the page is the entries' own hits (``SearchIndex.recheck``
False: as fresh as the index, which follows the same events as the API's cache), or
PostgreSQL reads the page's rows by id
with the authoritative filters re-checked (``recheck`` True: ``listed`` and the facet
conditions, so a mod hidden a moment ago never shows even while the index lags). Otherwise
PostgreSQL gets a bounded candidate set by id, applies those filters, computes the SQL path's
rank expression over the candidates and returns the hit columns.

Candidates of a relevance search: every match when there are at most RANK_ALL (the page is
then exactly the SQL path's); else the CANDIDATES most popular matches, the CANDIDATES most popular
matches whose name starts with the query (exact names among them) and the CANDIDATES most
popular matches with every query word in the name or slug (weight A), so an exact, prefix or
name match is never lost to popularity.

A query with words the lexicon has not learned that the index corrects to words it knows (a
typo, mostly) is answered in one round trip (_typo_at_once): learning its words and reading
the corrected query's first page in one statement (pages from memory: the learning statement
overlapped with the correction, _typo_from_memory), the page used only when the learned
words match nothing (else the steps as usual, the words known by then).
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import asyncpg

from indexium_content import categories as vocabulary
from indexium_jar import formats

from . import searchindex, sqlpath, trigram, tsrank
from .facets import LOADERS, SIDES, Facet
from .querytext import MAX_QUERY_WORDS, PREFIX_MIN_CHARS, WORDS, normalized
from .searchindex import BitMap, Builder, Filters, Lexicon, SearchIndex, TokenLexemes

# PostgreSQL ranks ~2.5 us per candidate over a ~0.3 ms query (bench/api, 20,000 mods), the
# index ~0.3 us (_fastsearch.relevances; tsrank in Python ~3.5 us) without reading the
# candidates' rows.
RANK_ALL = 100
CANDIDATES = 30
LOAD_TIMEOUT_S = 120.0
LOAD_BATCH = 5000
# A catch-up from a position (a snapshot's: an API replica's start, the snapshot writer's) looks
# this much further back: updated_at is a writer's transaction start, and a transaction may commit
# that long after it began.
CATCH_UP_MARGIN_S = 60.0
REREAD_BATCH = 500  # mods re-read a statement in a catch-up from a snapshot (reread)
# A relevance page ranked in process asks for this many ids beyond the page, so a mod hidden
# since the index read it (PostgreSQL's re-check drops it) does not shorten the page.
SPARE_IDS = 3
# A fuzzy pass over more name candidates than this is the SQL path's own scan.
FUZZY_MOST = 2000
# At most this many names are tested for word similarity in process (~15-25 us each) before
# the fuzzy query, which none left saves; more go to PostgreSQL as they are (it tests them
# anyway, in C). In the bench's name + facets class most such sets keep a match: testing 100
# cost more CPU than the queries it saved.
FUZZY_EXACT_MOST = 8
# A fuzzy pass over at most this many names ranks its first relevance page in process (their
# similarities from the in-process test or one statement over the names, then the page's rows);
# over more, one statement tests the names, reads the rows of those that pass and ranks the
# page (_ranked_sql names=True).
FUZZY_RANKED_MOST = FUZZY_EXACT_MOST
# Where word similarity is in C (trigram._fastsearch, ~0.25 us a name: built by `make env`), every
# ASCII name of the bound is tested in process, whatever their number; the bound is then this
# many names before the SQL path's own scan (a 4-letter typo at 100,000 mods: several thousand
# names share enough trigrams, which sent it to that scan, 17-29 ms), and a first relevance
# page of up to FUZZY_RANKED_IN_C names that pass is ranked in process.
FUZZY_IN_C = trigram._fastsearch is not None
FUZZY_MOST_IN_C = 25_000
FUZZY_RANKED_IN_C = RANK_ALL
# The columns the index holds per mod (searchindex.SearchIndex.build / upsert).
# (search_vector as text: its lexemes, which carry weight A, and their positions' weights, for
# tsrank: searchindex._entry)
# With the rest of a hit's columns (sqlpath.HIT_COLUMNS): a page served from memory (SearchIndex.recheck).
_INDEX_COLUMNS = f"""m.id, m.slug, lower(m.name) AS lower_name, m.downloads, m.last_published_at, m.created_at,
       m.search_vector::text AS vector, m.file_facets, m.game_versions, m.loaders, m.categories,
       m.environment, m.listed, m.updated_at, m.name, m.summary, m.authors, m.latest_version, m.project_type,
       {sqlpath.HAS_ICON} AS has_icon, {sqlpath.ACTIVE_SERVERS} AS active_servers,
       tsvector_to_array(m.readme_vector) AS readme, m.abbreviations"""
_ONE_LEXEME = re.compile(r"'((?:[^']|'')*)'")
_C_LOCALES = ("C", "POSIX")
# What the search_words trigger adds for a mod (the same function: migrations/0014), read with a re-read.
_NEW_WORDS = "mod_search_words(m.name, m.summary) AS words"


async def load(conn: asyncpg.Connection, timeout_s: float = LOAD_TIMEOUT_S) -> SearchIndex:
    """Every listed mod, in popularity order (the ordinals' order), read in batches through a
    cursor; each batch is added on a worker thread, so the event loop keeps serving meanwhile
    (a periodic reload) and the catalogue's rows are never all held at once."""
    builder = Builder()
    async with conn.transaction():
        # Longer than a request's statement timeout: this reads the whole catalogue.
        await conn.execute(f"SET LOCAL statement_timeout = {int(timeout_s * 1000)}")
        # The position the index covers (a snapshot's, snapshot.py): every row a transaction that
        # began before this one wrote is in, but one still committing (the catch-up's margin).
        position = await conn.fetchval("SELECT transaction_timestamp()")
        cursor = await conn.cursor(f"SELECT {_INDEX_COLUMNS} FROM mods m WHERE m.listed"
                                   f" ORDER BY m.downloads DESC, m.slug", timeout=timeout_s)
        while rows := await cursor.fetch(LOAD_BATCH, timeout=timeout_s):
            await asyncio.to_thread(builder.add, rows)
        # search_words only grows: a word in it is its own correction (sqlpath.corrected_query), and
        # the others are corrected to its words in process (trigram.Words), re-reads adding more.
        words = await conn.fetch("SELECT word FROM search_words", timeout=timeout_s)
    index = await asyncio.to_thread(builder.finish)
    index.position = searchindex.micros(position)
    await asyncio.to_thread(index.words.update, [r[0] for r in words])
    # Browse pages in the index's order, and trigram similarity in process, only where the
    # database sorts text and reads characters the same way.
    locale = await conn.fetchrow("SELECT datcollate, datctype FROM pg_database WHERE datname = current_database()")
    index.ordered = locale["datcollate"] in _C_LOCALES
    index.words_exact = index.ordered and locale["datctype"] in _C_LOCALES
    return index


async def reread(conn: asyncpg.Connection, index: SearchIndex, slugs: list[str]) -> None:
    """Bring these mods up to date in the index (re-read; dropped when unlisted or gone), and
    its catalogue words with the words their names and summaries added to search_words."""
    rows = await conn.fetch(f"SELECT {_INDEX_COLUMNS}, {_NEW_WORDS} FROM mods m WHERE m.slug = ANY($1::text[])",
                            slugs)
    seen = set()
    for row in rows:
        index.words.update(row["words"])
        index.upsert(row)
        seen.add(row["slug"])
    for slug in slugs:
        if slug not in seen:
            index.remove(slug)


async def changed_since(conn: asyncpg.Connection, index: SearchIndex, seconds: float) -> list[str]:
    """Slugs of mods whose row was written in the last ``seconds`` and differs from the index's
    copy (a catch-up for events core NATS may have dropped)."""
    rows = await conn.fetch("SELECT m.slug, m.updated_at, m.listed FROM mods m"
                            " WHERE m.updated_at > now() - make_interval(secs => $1)", seconds)
    return index.stale(rows)


async def changed_after(conn: asyncpg.Connection, index: SearchIndex, micros: int, margin_s: float) -> list[str]:
    """Slugs of mods whose row was written after ``micros`` (a position: SearchIndex.position, a
    snapshot's) less ``margin_s`` and differs from the index's copy: what a replica started from
    a snapshot re-reads before it serves."""
    since = datetime.fromtimestamp(micros / 1_000_000, UTC) - timedelta(seconds=margin_s)
    rows = await conn.fetch("SELECT m.slug, m.updated_at, m.listed FROM mods m WHERE m.updated_at > $1", since)
    return index.stale(rows)


def batches(slugs: list[str], size: int = REREAD_BATCH) -> list[list[str]]:
    """A catch-up's slugs as reread's statements take them."""
    return [slugs[i:i + size] for i in range(0, len(slugs), size)]


def _term(text: str) -> tuple[str, ...] | None:
    """A tsquery's text as one term: () when empty (a stopword), its lexemes when it is one
    lexeme or a phrase of adjacent ones; None for anything else."""
    if text == "":
        return ()
    lexemes = []
    for piece in text.split(" <-> "):
        m = _ONE_LEXEME.fullmatch(piece)
        if m is None:
            return None
        lexemes.append(m.group(1).replace("''", "'"))
    return tuple(lexemes)


# What PostgreSQL makes of each query token (websearch_to_tsquery in sqlpath.text_query's
# configurations) and word (the prefix part's 'simple'): learn's query, given the two arrays' placeholders.
_LEARN_SQL = """SELECT true AS token, t.w, websearch_to_tsquery('english', t.w)::text AS english,
       websearch_to_tsquery('russian', t.w)::text AS russian,
       websearch_to_tsquery('simple', t.w)::text AS simple
FROM unnest({tokens}::text[]) AS t(w)
UNION ALL
SELECT false, w.w, NULL, NULL, to_tsquery('simple', quote_literal(w.w))::text
FROM unnest({words}::text[]) AS w(w)"""


async def learn(conn: asyncpg.Connection, lexicon: Lexicon, words: searchindex.Words) -> None:
    """Ask PostgreSQL, in one query, what each token and word not yet in ``lexicon`` is in the
    configurations sqlpath.text_query uses (and the prefix part's 'simple'), and remember it."""
    tokens, prefix_words = lexicon.unknown(words)
    if not tokens and not prefix_words:
        return
    rows = await conn.fetch(_LEARN_SQL.format(tokens="$1", words="$2"), tokens, prefix_words)
    _remember(lexicon, [(r["token"], r["w"], r["english"], r["russian"], r["simple"]) for r in rows])


def _remember(lexicon: Lexicon, learned) -> None:
    """learn's answers, (token?, w, english, russian, simple) each, into the lexicon."""
    for token, w, english, russian, simple in learned:
        if token:
            lexicon.put(w, TokenLexemes(_term(english), _term(russian), _term(simple)))
        else:
            term = _term(simple)
            lexicon.put(None, None, w, term[0] if term is not None and len(term) == 1 else None)


async def prewarm(conn: asyncpg.Connection, lexicon: Lexicon, index: SearchIndex, known: Lexicon | None = None) -> None:
    """Learn the words of every listed name at once: what people type most; then, as far as
    the budget goes, what they type on the way there (each word's prefixes, the most popular
    mods' first: "dark sha" on the way to Dark Shaders), so as-you-type needs no look-up.
    ``known``: a lexicon learned before (a previous snapshot's: a word's lexemes never change for a
    database), whose answers are taken instead of asked; the same lexicon as without it."""
    names = " ".join(index.name_of)  # (a dropped mod's is "")
    tokens = [t for t in dict.fromkeys(names.split()) if searchindex.plain_words(t) is not None]
    words = list(dict.fromkeys(WORDS.findall(names)))
    budget = lexicon.max_words // 2
    typed = [p for p in dict.fromkeys(t[:i] for t in tokens[:budget] for i in range(1, len(t)))
             if searchindex.plain_words(p) is not None]
    typed_words = dict.fromkeys(w[:i] for w in words[:budget] for i in range(1, len(w)))
    tokens = list(dict.fromkeys(tokens + typed))[:budget]
    words = list(dict.fromkeys(words + list(typed_words)))[:budget]
    wanted = searchindex.Words([searchindex.lexicon_key(t) for t in tokens], words)
    if known is not None:
        for t in wanted.tokens:
            if t in known._tokens:
                lexicon._tokens[t] = known._tokens[t]
        for w in wanted.words:
            if w in known._prefix:
                lexicon._prefix[w] = known._prefix[w]
    await learn(conn, lexicon, wanted)


def _facet_keys(f: Facet) -> tuple[str, ...] | None:
    """The index keys whose union is facets._positive's condition ("*": every mod), or None
    for a field the index does not hold."""
    v = f.value
    if f.field == "categories":
        if v in LOADERS:
            return (f"lo:{v}",)
        category = vocabulary.category_of(v)  # as facets._positive: a topic matches nothing
        return (f"cat:{category}",) if category is not None else ()
    if f.field == "versions":
        return (f"gv:{v}",)
    if f.field == "project_type":
        return (f"pt:{v}",) if v in formats.PROJECT_TYPES else ()
    if f.field in SIDES:
        return tuple(f"env:{e}" for e in SIDES[f.field].get(v, ()))
    return None


def filters_of(sq: sqlpath.SearchQuery) -> Filters | None:
    """sqlpath.filters as index key groups, or None when a filter is not in the index."""
    if sq.author:
        return None
    groups: list[tuple[tuple[str, ...], bool]] = []
    if sq.game_versions and sq.loaders:
        groups.append((tuple(f"ff:{lo}|{gv}" for lo in sq.loaders for gv in sq.game_versions), False))
    elif sq.game_versions:
        groups.append((tuple(f"gv:{gv}" for gv in sq.game_versions), False))
    elif sq.loaders:
        groups.append((tuple(f"lo:{lo}" for lo in sq.loaders), False))
    if sq.environment:
        groups.append(((f"env:{sq.environment}", "env:both"), False))
    for category in sq.categories:
        groups.append(((f"cat:{category}",), False))
    if sq.type_facet is not None:
        groups.append((_facet_keys(sq.type_facet), False))
    for group in sq.facets:
        if not group:
            continue
        if len(group) == 1 and group[0].op == "!=":
            keys = _facet_keys(group[0])
            if keys is None:
                return None
            groups.append((keys, True))
            continue
        keys = []
        for f in group:
            k = _facet_keys(f) if f.op in (":", "=") else None
            if k is None:
                return None
            keys += k
        groups.append((tuple(keys), False))
    return Filters(tuple(groups))


def _hit_page_sql(sq: sqlpath.SearchQuery, sort: str | None) -> tuple[str, list]:
    """The hit columns of the given ids that still pass the filters, in ``sort`` order (None:
    in no order, for the caller to put in its own)."""
    s = sqlpath.Sql()
    ids = s.p(None, "::uuid[]")
    where = " AND ".join(sqlpath.filters(sq, s))
    order = f" ORDER BY {sqlpath.ORDER[sort]}" if sort is not None else ""
    return f"SELECT {sqlpath.HIT_COLUMNS} FROM {_candidates(ids)} WHERE {where}{order}", s.args


def _candidates(ids: str) -> str:
    """The candidate rows by primary key, fenced (OFFSET 0) so the planner cannot AND in a GIN
    scan of search_vector for the match it re-checks: ~2 ms of index for a dozen rows."""
    return f"(SELECT * FROM mods WHERE id = ANY({ids}) OFFSET 0) m"


def _similar_ids(s: sqlpath.Sql, sq: sqlpath.SearchQuery) -> str:
    """The fuzzy pass's candidate ids ($1) narrowed to those whose name as the index holds it
    ($2, in the same order) is word-similar to the query: pg_trgm's own test, in C, on text
    sent along, so the rows of the names that miss (most of a short typo's superset) are never
    read; the rows that remain are tested again on their own lower(name)."""
    names = s.p(None, "::text[]")
    return (f"ARRAY(SELECT c.id FROM unnest($1::uuid[], {names}) AS c(id, name) WHERE word_similarity("
            f"{s.p(normalized(sq.q), '::text')}, c.name) >= {sqlpath.FUZZY_WORD_SIMILARITY}::float8)")


def _text_sql(sq: sqlpath.SearchQuery, s: sqlpath.Sql, tsq: str | None, fuzzy: bool,
              ranked: bool = True) -> tuple[str, str, str, str]:
    """(WITH head, FROM tail, match, rank) of q: sqlpath.text_query's CTE, or, given the
    tsquery's text (``tsquery_of``), that text as one parameter: the same tree (catalog casts the
    same text), and a statement the planner plans in a fraction of the time (no CTE of
    unnest/DISTINCT/string_agg, no init plans)."""
    if tsq is None:
        cte, match, rank = sqlpath.text_query(sq, s, fuzzy, ranked=ranked, inline_threshold=True)
        return f"{cte}, ", " CROSS JOIN query", match, rank
    t = s.p(tsq, "::tsquery")
    match, rank, join = sqlpath.text_match(t), "", ""
    if ranked or fuzzy:
        rank, ql = sqlpath.relevance(s, sq.q, t)
        if fuzzy:
            # Computed once per row (the fence keeps the planner from copying the call into the
            # condition and the rank, as it would a plain column expression): the same value.
            join = f" CROSS JOIN LATERAL (SELECT word_similarity({ql}, lower(m.name)) AS ws OFFSET 0) w"
            match = f"({match} OR w.ws >= {sqlpath.FUZZY_WORD_SIMILARITY}::float8)"
            rank += " + w.ws"
    return "WITH ", join, match, rank


def tsquery_of(index: SearchIndex, parts: list[searchindex.Part] | None) -> str | None:
    """sqlpath.text_query's tsquery as text: its distinct parts, each in parentheses, ORed in
    text order (string_agg ... ORDER BY p); None where the database's collation may order
    them otherwise, or for no parts (then the SQL builds it)."""
    if not parts or not index.ordered:
        return None
    return " | ".join(f"({t})" for t in sorted({p.text for p in parts}))


def rank_query(parts: list[searchindex.Part]) -> tsrank.Query | None:
    """tsquery_of's query as calc_rank reads it, or None when its top operator is AND or a
    phrase (one part of several terms or lexemes: calc_rank_and, which needs positions)."""
    if len(parts) == 1 and (len(parts[0].terms) > 1 or len(parts[0].terms[0]) > 1):
        return None
    textual = []
    for part in sorted(parts, key=lambda p: p.text):  # tsquery_of's order
        textual += [(x, False) for term in part.terms for x in term]
        if part.prefix:
            textual[-1] = (textual[-1][0], True)
    return tsrank.Query.of_or(textual)


def exact_union(parts: list[searchindex.Part]) -> bool:
    """Whether the index's matches of the parts are exactly PostgreSQL's: a phrase part (which
    the index over-matches as all its lexemes anywhere: Part.exact) only where an exact part
    matches everything it over-matches, each of its lexemes one of the phrase part's (its
    prefix, a prefix of one: "olga's magic": english's 'olga' & 'magic' covers simple's
    'olga' <-> 's' & 'magic'; "zed's villagers": the prefix part's 'zed' & 's' & 'villagers':*
    covers it where english stems 'villag')."""
    exact = [([x for term in p.terms for x in term], p.prefix) for p in parts if p.exact]
    for p in parts:
        if p.exact:
            continue
        lexemes = [x for term in p.terms for x in term]
        whole = set(lexemes[:-1] if p.prefix else lexemes)
        if not any(_covers(e, prefix, whole, lexemes[-1]) for e, prefix in exact):
            return False
    return True


def _covers(lexemes: list[str], prefix: bool, whole: set[str], last: str) -> bool:
    """Whether a document holding every lexeme of ``whole`` (and one starting with ``last``)
    matches the part of these ``lexemes`` (the last a prefix if ``prefix``)."""
    plain = lexemes[:-1] if prefix else lexemes
    if not all(x in whole for x in plain):
        return False
    return not prefix or any(x.startswith(lexemes[-1]) for x in (*whole, last))


def _counted_page_sql(sq: sqlpath.SearchQuery, sort: str, fuzzy: bool = False,
                      tsq: str | None = None, names: bool = False) -> tuple[str, list]:
    """A page of the given ids that match, in a sort other than relevance, with their count
    (``names``: fuzzy candidates narrowed by _similar_ids)."""
    s = sqlpath.Sql()
    ids = s.p(None, "::uuid[]")
    if names:
        ids = _similar_ids(s, sq)
    head, join, match, _ = _text_sql(sq, s, tsq, fuzzy, ranked=False)
    where = " AND ".join([*sqlpath.filters(sq, s), match])
    sql = f"""{head}h AS (
    SELECT m.id, count(*) OVER () AS total FROM {_candidates(ids)}{join} WHERE {where}
    ORDER BY {sqlpath.ORDER[sort]} LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})
SELECT {sqlpath.HIT_COLUMNS}, h.total FROM h JOIN mods m ON m.id = h.id ORDER BY {sqlpath.ORDER[sort]}"""
    return sql, s.args


def _ranked_sql(sq: sqlpath.SearchQuery, fuzzy: bool = False, counted: bool = False,
                tsq: str | None = None, names: bool = False) -> tuple[str, list]:
    """the SQL path's relevance page over the given candidate ids: its tsquery (the same tree ts_rank
    sees), its match re-checked, its rank; ``counted``: with the count of candidates that pass
    (the total when they are every match); ``names``: fuzzy candidates narrowed by _similar_ids."""
    s = sqlpath.Sql()
    ids = s.p(None, "::uuid[]")
    if names:
        ids = _similar_ids(s, sq)
    head, join, match, rank = _text_sql(sq, s, tsq, fuzzy)
    total = ", count(*) OVER () AS total" if counted or fuzzy else ""
    where = " AND ".join([*sqlpath.filters(sq, s), match])
    sql = f"""{head}h AS (
    SELECT m.id, {rank} AS rank{total} FROM {_candidates(ids)}{join} WHERE {where}
    ORDER BY rank DESC, m.downloads DESC, m.slug LIMIT {s.p(sq.limit)} OFFSET {s.p(sq.offset)})
SELECT {sqlpath.HIT_COLUMNS}{', h.total' if total else ''}
FROM h JOIN mods m ON m.id = h.id
ORDER BY {sqlpath.ORDER["relevance"]}"""
    return sql, s.args


async def _text(conn, sq, index: SearchIndex, lexicon: Lexicon, allowed: BitMap,
                rank_all: int, per_source: int) -> tuple[list, int] | None:
    words = searchindex.plain_words(sq.q)
    if words is None:
        return None
    await learn(conn, lexicon, words)
    parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS)
    if parts is None:
        return None
    strong, matches = index.text_matches(parts, allowed)
    if not matches:
        return [], 0
    sort = sq.effective_sort
    tsq = tsquery_of(index, parts)
    query = _in_process_rank(sq, parts, tsq)
    if query is not None:
        found = await _ranked_in_process(conn, sq, index, matches, parts, query, rank_all, per_source, strong)
        if found is not None:
            return found
    if len(matches) <= rank_all:
        # Every match goes to PostgreSQL: its page and its count are the SQL path's exactly.
        sql, args = (_ranked_sql(sq, counted=True, tsq=tsq) if sort == "relevance"
                     else _counted_page_sql(sq, sort, tsq=tsq))
        args[0] = index.ids(matches)
        rows = await conn.fetch(sql, *args)
        if rows:
            return rows, rows[0]["total"]
        return ([], 0) if sq.offset == 0 else None
    if not exact_union(parts):
        return None  # a broad phrase: the index knows no positions to count it by
    if sort != "relevance":
        page = index.page(matches, sort, sq.offset, sq.limit)
        return None if page is None else (await _hit_rows(conn, sq, index, sort, page), len(matches))
    ql = normalized(sq.q)
    chosen = index.candidates(matches, parts, ql, sq.offset + sq.limit, per_source)
    sql, args = _ranked_sql(sq, tsq=tsq)
    args[0] = index.ids(chosen)
    return await conn.fetch(sql, *args), len(matches)


def _in_process_rank(sq: sqlpath.SearchQuery, parts: list[searchindex.Part], tsq: str | None) -> tsrank.Query | None:
    """The rank query when _text ranks ``sq``'s relevance page in process (relevance sort, a
    tsquery the index can write, an exact union of ``parts``), else None. Any page _taken lets
    through: a later page's candidates are those the SQL rank of the same page would get."""
    if sq.effective_sort != "relevance" or tsq is None or not exact_union(parts):
        return None
    return rank_query(parts)


async def _ranked_in_process(conn, sq: sqlpath.SearchQuery, index: SearchIndex, matches: BitMap, parts,
                             query: tsrank.Query, rank_all: int, per_source: int,
                             strong: BitMap | None = None) -> tuple[list, int] | None:
    """A relevance page ranked by the index (every match, or a broad query's bounded
    candidates: see the module doc), its rows from memory or read by id with the filters
    re-checked; None when so many of them are gone that the page would be short (the caller's
    query then)."""
    order = _ranked_order(sq, index, matches, parts, query, rank_all, per_source, strong)
    page = await _page_of(conn, sq, index, order)
    return None if page is None else (page, len(matches))


def _ranked_order(sq: sqlpath.SearchQuery, index: SearchIndex, matches: BitMap, parts, query: tsrank.Query,
                  rank_all: int, per_source: int, strong: BitMap | None = None) -> list[int]:
    """_ranked_in_process's order: every match, or a broad query's bounded candidates, ranked."""
    ql = normalized(sq.q)
    pool = (matches if len(matches) <= rank_all
            else index.candidates(matches, parts, ql, sq.offset + sq.limit, per_source))
    return index.ranked(pool, query, ql, strong=index.matches(parts) if strong is None else strong)


async def _page_of(conn, sq: sqlpath.SearchQuery, index: SearchIndex, order: list[int]) -> list | None:
    """The page at ``sq.offset`` of mods in the index's ``order``: their hits from memory
    (``index.recheck`` False), else read by id with the filters re-checked (the pages before it
    too, so a mod gone from them moves the page as the SQL rank would; SPARE_IDS more asked
    for), or None when too many are gone for a whole page."""
    if not index.recheck:
        page = index.hits(order[sq.offset:sq.offset + sq.limit])
        if page is not None:
            return page
    sql, args = _page_of_sql(sq, index, order)
    return _page_from(await conn.fetch(sql, *args), sq, index, order)


def _page_of_sql(sq: sqlpath.SearchQuery, index: SearchIndex, order: list[int]) -> tuple[str, list]:
    sql, args = _hit_page_sql(sq, None)
    args[0] = index.ids(order[:sq.offset + sq.limit + SPARE_IDS])
    return sql, args


def _page_from(rows, sq: sqlpath.SearchQuery, index: SearchIndex, order: list[int]) -> list | None:
    """_page_of's page from the rows its query read."""
    want = order[:sq.offset + sq.limit + SPARE_IDS]
    by_slug = {r["slug"]: r for r in rows}
    kept = [r for r in (by_slug.get(index.entries[o].slug) for o in want) if r is not None]
    page = kept[sq.offset:sq.offset + sq.limit]
    return None if len(page) < sq.limit and len(order) > len(want) else page


async def _hit_rows(conn, sq, index: SearchIndex, sort: str, ordinals: list[int]) -> list:
    """A browse page's rows, the mods' ``ordinals`` in ``sort`` order: from memory, or read by
    id with the filters re-checked (``index.recheck``)."""
    if not ordinals:
        return []
    if not index.recheck:
        page = index.hits(ordinals)
        if page is not None:
            return page
    sql, args = _hit_page_sql(sq, sort)
    args[0] = index.ids(ordinals)
    return await conn.fetch(sql, *args)


def _taken(sq: sqlpath.SearchQuery) -> Filters | None:
    """The search's filters as index keys if the index can answer it (its filters, its sort,
    its page), else None."""
    if sq.effective_sort == "active_servers":
        return None
    if sq.q and sq.effective_sort == "relevance" and sq.offset + sq.limit > sqlpath.BROAD_CANDIDATES:
        return None
    return filters_of(sq)


def takes(sq: sqlpath.SearchQuery) -> bool:
    """Whether the index can answer this search (its filters, its sort, its page)."""
    return _taken(sq) is not None


async def search(
    conn: asyncpg.Connection, sq: sqlpath.SearchQuery, *, index: SearchIndex | None, lexicon: Lexicon | None,
    total: int | None = None, corrections: sqlpath.Corrections | None = None,
    rank_all: int = RANK_ALL, per_source: int = CANDIDATES,
) -> tuple[list[asyncpg.Record], int]:
    """sqlpath.search's answer, from the index where it can (``index`` None: sqlpath.search)."""
    filters = _taken(sq) if index is not None and lexicon is not None else None
    if filters is None:
        return await sqlpath.search(conn, sq, total=total, corrections=corrections)
    allowed = index.filtered(filters)
    if not sq.q:
        sort = sq.effective_sort if sq.effective_sort != "relevance" else "downloads"
        page = index.page(allowed, sort, sq.offset, sq.limit)
        if page is None:  # an order the index does not keep: the SQL path's page, the index's total
            return await sqlpath.search(conn, sq, total=len(allowed), corrections=corrections)
        return await _hit_rows(conn, sq, index, sort, page), len(allowed)
    if len(sq.q.strip()) >= sqlpath.FUZZY_MIN_CHARS:
        found = await _typo_at_once(conn, sq, index, lexicon, allowed, corrections, rank_all, per_source)
        if found is not None:
            return found
    found = await _text(conn, sq, index, lexicon, allowed, rank_all, per_source)
    if found is None:
        return await sqlpath.search(conn, sq, total=total, corrections=corrections)
    rows, n = found
    if n >= sqlpath.FUZZY_BELOW or len(sq.q.strip()) < sqlpath.FUZZY_MIN_CHARS:
        return rows, n
    # Nothing matched: sqlpath.search's typo steps, the corrected query again from the index.
    known, corrected = correct(index, sq.q, corrections)
    if not known:  # a word only PostgreSQL can correct: the SQL path's steps, in their transaction
        async with conn.transaction():
            await sqlpath.typo_thresholds(conn)
            corrected = await sqlpath.corrected_query(conn, sq.q, corrections, known=index.words)
            return await _corrected_or_fuzzy(conn, sq, corrected, index, lexicon, allowed, rank_all, per_source)
    return await _corrected_or_fuzzy(conn, sq, corrected, index, lexicon, allowed, rank_all, per_source)


async def _typo_at_once(conn, sq: sqlpath.SearchQuery, index: SearchIndex, lexicon: Lexicon, allowed: BitMap,
                       corrections: sqlpath.Corrections | None, rank_all: int,
                       per_source: int) -> tuple[list, int] | None:
    """The answer of a query with words the lexicon does not know yet (most often a typo) that
    the index corrects to words it knows, in one round trip: learning its words (what _text
    would ask first) and reading the corrected query's page (what _corrected_or_fuzzy
    would read when the query as typed matches nothing) in one statement. The page is used
    only when the learned words match nothing, so the answer is the steps' own; None: the
    steps are for the caller to take (the words are learned by then, the corrected query's
    too when it has unknown words of its own)."""
    words = searchindex.plain_words(sq.q)
    if words is None:
        return None
    tokens, prefix_words = lexicon.unknown(words)
    if not tokens and not prefix_words:
        return None
    if not index.recheck:
        return await _typo_from_memory(conn, sq, words, index, lexicon, allowed, corrections, rank_all, per_source)
    correction = _correction(index, sq, corrections)
    if correction is None:
        return None
    fixed, fixed_words = correction
    more_tokens, more_words = lexicon.unknown(fixed_words)
    if more_tokens or more_words:
        # Its page needs the corrected words' lexemes: learn them with the typed ones.
        await learn(conn, lexicon, searchindex.Words(tokens + more_tokens, prefix_words + more_words))
        return None
    planned = _planned(fixed, fixed_words, index, lexicon, allowed, rank_all, per_source)
    if planned is None:
        return None
    order, total = planned
    page_sql, args = _page_of_sql(fixed, index, order)
    learn_sql = _LEARN_SQL.format(tokens=f"${len(args) + 1}", words=f"${len(args) + 2}")
    rows = await conn.fetch(
        f"""SELECT l.learned, p.* FROM (SELECT (SELECT json_agg(json_build_array(x.token, x.w, x.english, x.russian,
    x.simple)) FROM ({learn_sql}) x) AS learned) l LEFT JOIN ({page_sql}) p ON true""",
        *args, tokens, prefix_words)
    learned = rows[0]["learned"] or []
    _remember(lexicon, json.loads(learned) if isinstance(learned, str) else learned)  # (a json codec, or none)
    if not _typed_matches_nothing(words, index, lexicon, allowed):
        return None  # the query as typed is _text's (or the SQL path's) to answer
    page = _page_from([r for r in rows if r["slug"] is not None], fixed, index, order)
    return None if page is None else (page, total)


async def _typo_from_memory(conn, sq: sqlpath.SearchQuery, words: searchindex.Words, index: SearchIndex,
                            lexicon: Lexicon, allowed: BitMap, corrections: sqlpath.Corrections | None,
                            rank_all: int, per_source: int) -> tuple[list, int] | None:
    """_typo_at_once where a page is served from memory: the typed words' statement (learn) is
    sent first and PostgreSQL answers it while this process corrects the query and ranks the
    corrected one, so the answer costs one round trip's wait at most, overlapped. The same
    answer as the steps (the corrected page only when the words as typed match nothing)."""
    learning = asyncio.ensure_future(learn(conn, lexicon, words))
    await asyncio.sleep(0)  # the task sends its statement before the work below
    planned = fixed = None
    try:
        correction = _correction(index, sq, corrections)
        if correction is not None:
            fixed, fixed_words = correction
            more_tokens, more_words = lexicon.unknown(fixed_words)
            if not more_tokens and not more_words:
                planned = _planned(fixed, fixed_words, index, lexicon, allowed, rank_all, per_source)
    finally:
        await learning
    if planned is None:
        return None  # the steps are the caller's (its words are known now)
    if not _typed_matches_nothing(words, index, lexicon, allowed):
        return None  # the query as typed is _text's (or the SQL path's) to answer
    order, total = planned
    page = index.hits(order[fixed.offset:fixed.offset + fixed.limit])
    return None if page is None else (page, total)  # None: the steps read it


def _correction(index: SearchIndex, sq: sqlpath.SearchQuery, corrections: sqlpath.Corrections | None,
                ) -> tuple[sqlpath.SearchQuery, searchindex.Words] | None:
    """``sq`` with its query corrected by the index, and the corrected query's words; None when
    a word is not one the index can correct or the correction has no plain words."""
    known, corrected = correct(index, sq.q, corrections)
    if not known or corrected is None:
        return None
    fixed_words = searchindex.plain_words(corrected)
    return None if fixed_words is None else (replace(sq, q=corrected), fixed_words)


def _typed_matches_nothing(words: searchindex.Words, index: SearchIndex, lexicon: Lexicon, allowed: BitMap) -> bool:
    """The typed words (learned by now) match no allowed mod: the corrected page is the answer."""
    parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS)
    return parts is not None and not (parts and index.found(parts) & allowed)


def _planned(sq: sqlpath.SearchQuery, words: searchindex.Words, index: SearchIndex, lexicon: Lexicon,
             allowed: BitMap, rank_all: int, per_source: int) -> tuple[list[int], int] | None:
    """(order, total) when _text would answer ``sq`` (its words known) with a page ranked in
    process (_ranked_in_process), else None."""
    parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS)
    if not parts:
        return None
    query = _in_process_rank(sq, parts, tsquery_of(index, parts))
    if query is None:
        return None
    matches = index.found(parts) & allowed
    if not matches:
        return None
    return _ranked_order(sq, index, matches, parts, query, rank_all, per_source), len(matches)


def correct(index: SearchIndex, q: str, corrections: sqlpath.Corrections | None) -> tuple[bool, str | None]:
    """sqlpath.corrected_query from the index's catalogue words, without a query: (True, q corrected
    or None when nothing changes), or (False, None) when a word is for PostgreSQL to correct (not
    ASCII, or a database whose locale is not C: see trigram's module doc)."""
    words = WORDS.findall(q.lower())[:MAX_QUERY_WORDS]
    fixed = []
    for w in words:
        if len(w) < 3 or w in index.words:
            fixed.append(w)
            continue
        remembered, best = corrections.get(w) if corrections is not None else (False, None)
        if not remembered:
            if not (index.words_exact and w.isascii()):
                return False, None
            best = index.words.nearest(w, sqlpath.CORRECTION_SIMILARITY, sqlpath.FUZZY_WORD_SIMILARITY)
            if corrections is not None:
                corrections.put(w, best)
        fixed.append(best or w)
    return True, (" ".join(fixed) if fixed != words else None)


async def _corrected_or_fuzzy(conn, sq, corrected: str | None, index: SearchIndex, lexicon: Lexicon,
                              allowed: BitMap, rank_all: int, per_source: int) -> tuple[list, int]:
    fixed = sq
    if corrected is not None:
        fixed = replace(sq, q=corrected)
        again = await _text(conn, fixed, index, lexicon, allowed, rank_all, per_source)
        rows, n = again if again is not None else await sqlpath.run(
            conn, fixed, fuzzy=False, broad=(sqlpath.BROAD_MATCHES, sqlpath.BROAD_CANDIDATES))
        if n:
            return rows, n
    partial = await _partial(conn, fixed, index, lexicon, allowed, rank_all, per_source)
    if partial is not None and partial[1]:
        return partial
    return await _fuzzy(conn, sq, index, lexicon, allowed)


async def _partial(conn, sq: sqlpath.SearchQuery, index: SearchIndex, lexicon: Lexicon, allowed: BitMap,
                   rank_all: int, per_source: int) -> tuple[list, int] | None:
    """sqlpath.partial_search from the index: each token's matches and the weights counted on its
    bitmaps, a first relevance page ranked in process (the same rank expression and weights,
    summed in PostgreSQL's order), browse orders paged by the index; the SQL path's statements
    where the index cannot (a phrase it cannot count, a later relevance page)."""
    tokens = sqlpath.partial_tokens(sq.q)
    if tokens is None:
        return None
    await learn(conn, lexicon, searchindex.plain_words(sq.q))
    per = []
    for i, t in enumerate(tokens):
        parts = searchindex.parts_of(searchindex.plain_words(t), lexicon, PREFIX_MIN_CHARS, prefix=i == len(tokens) - 1)
        if parts is None or not exact_union(parts):
            return await sqlpath.partial_search(conn, sq)
        per.append(parts)
    every = list({p.text: p for parts in per for p in parts}.values())
    if not exact_union(every):
        return await sqlpath.partial_search(conn, sq)
    matched = [index.found(parts) & allowed if parts else BitMap() for parts in per]
    total = BitMap.union(*matched)
    if not total:
        return [], 0
    sort = sq.effective_sort
    if sort != "relevance":
        page = index.page(total, sort, sq.offset, sq.limit)
        if page is None:
            return await sqlpath.partial_search(conn, sq)
        return await _hit_rows(conn, sq, index, sort, page), len(total)
    tsq = tsquery_of(index, every)
    query = rank_query(every) if tsq is not None and sq.offset == 0 else None
    if query is None:
        return await sqlpath.partial_search(conn, sq)
    ql = normalized(sq.q)
    if len(total) <= rank_all:
        pool = total
    else:  # each token's most popular matches too: a rare word's few mods are all among them
        pool = BitMap(index.candidates(total, every, ql, sq.limit, per_source))
        for m in matched:
            pool |= BitMap(index.first(m, per_source))
    weights = sqlpath.partial_weights(len(total), [len(m) for m in matched])
    order = index.ranked(pool, query, ql, strong=index.matches(every), weights=list(zip(matched, weights)))
    page = await _page_of(conn, sq, index, order)
    return (page, len(total)) if page is not None else await sqlpath.partial_search(conn, sq)


async def _fuzzy(conn, sq: sqlpath.SearchQuery, index: SearchIndex, lexicon: Lexicon,
                 allowed: BitMap) -> tuple[list, int]:
    """the SQL path's last resort (names word-similar to the query) over the index's superset of
    them, counted by PostgreSQL; the SQL path's own scan when the index cannot bound it."""
    ql = normalized(sq.q)
    in_c = FUZZY_IN_C and index.words_exact
    names = index.similar_names(ql, allowed, sqlpath.FUZZY_WORD_SIMILARITY, FUZZY_MOST_IN_C if in_c else FUZZY_MOST)
    if names is None or not takes(sq):
        return await _fuzzy_sql(conn, sq)
    narrow = not index.words_exact or (not in_c and len(names) > FUZZY_EXACT_MOST)
    similar = None
    if not narrow:
        # Word similarity is exact in process (trigram, under the C ctype), so names that miss
        # it need no query; names that are not ASCII stay for PostgreSQL to decide.
        names, similar = _word_similar(index, ql, names)
    if not names:
        return [], 0
    sort = sq.effective_sort
    words = searchindex.plain_words(sq.q)
    parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS) if words else None
    tsq = tsquery_of(index, parts)
    here = len(names) <= FUZZY_RANKED_MOST or (similar is not None and len(names) <= FUZZY_RANKED_IN_C)
    if here and sort == "relevance" and sq.offset == 0 and tsq is not None \
            and (query := rank_query(parts)) is not None:
        found = await _fuzzy_in_process(conn, sq, index, names, query, similar)
        if found is not None:
            return found
    sql, args = (_ranked_sql(sq, fuzzy=True, tsq=tsq, names=narrow) if sort == "relevance"
                 else _counted_page_sql(sq, sort, fuzzy=True, tsq=tsq, names=narrow))
    args[0] = index.ids(names)
    if narrow:
        args[1] = [index.name_of[o] for o in names]
    rows = await conn.fetch(sql, *args)
    if rows:
        return rows, rows[0]["total"]
    return ([], 0) if sq.offset == 0 else await _fuzzy_sql(conn, sq)


def _word_similar(index: SearchIndex, ql: str, names: BitMap) -> tuple[BitMap, dict[int, float] | None]:
    """The names at least FUZZY_WORD_SIMILARITY word-similar to ``ql`` (ASCII), tested in
    process, and those that are not ASCII (PostgreSQL's to decide); with the similarities
    when every name was ASCII (else None)."""
    odd = names & index.filters.get(searchindex.ODD_NAME, BitMap())
    similar = trigram.similar_among(ql, index.name_of, names - odd if odd else names, sqlpath.FUZZY_WORD_SIMILARITY)
    if not odd:
        return BitMap(similar), similar
    return BitMap(similar) | odd, None


# The fuzzy pass's names (ordinals and lower(name) as the index holds them) that are
# word-similar to the query, with their similarity: PostgreSQL's word_similarity, in C, over
# parameters only (no row is read).
_WORD_SIMILAR_SQL = f"""SELECT c.o, word_similarity($3::text, c.name) AS ws FROM unnest($1::int[], $2::text[]) AS c(o, name)
WHERE word_similarity($3::text, c.name) >= {sqlpath.FUZZY_WORD_SIMILARITY}::float8"""


async def _fuzzy_in_process(conn, sq: sqlpath.SearchQuery, index: SearchIndex, names: BitMap,
                            query: tsrank.Query, similar: dict[int, float] | None) -> tuple[list, int] | None:
    """The fuzzy pass's first relevance page ranked by the index, as _ranked_in_process: the
    names' word similarity from _word_similar (in process: trigram, exact for ASCII names
    under the C ctype) or, when it could not test them all (not ASCII, or many names without
    the C module), from PostgreSQL's word_similarity over the names alone; the rank the SQL path's
    fuzzy one (rank_expression + word_similarity). No full-text match is among them (the pass
    runs when there is none), so the names that pass are the total."""
    ql = normalized(sq.q)
    if similar is None:
        ordinals = list(names)
        name_of = index.name_of
        rows = await conn.fetch(_WORD_SIMILAR_SQL, ordinals, [name_of[o] for o in ordinals], ql)
        similar = {r["o"]: r["ws"] for r in rows}
    if not similar:
        return [], 0
    page = await _page_of(conn, sq, index, index.ranked(similar, query, ql, added=similar, strong=BitMap()))
    return None if page is None else (page, len(similar))


async def _fuzzy_sql(conn, sq: sqlpath.SearchQuery) -> tuple[list, int]:
    """the SQL path's fuzzy scan (its ``<%`` needs typo_thresholds' setting)."""
    async with conn.transaction():
        await sqlpath.typo_thresholds(conn)
        return await sqlpath.run(conn, sq, fuzzy=True)


async def count(conn: asyncpg.Connection, sq: sqlpath.SearchQuery, *, index: SearchIndex | None) -> int:
    """sqlpath.count, from the index where it holds the filters and there is no text (the index's
    count is of the filters alone: a text's matches are sqlpath.count's)."""
    filters = filters_of(sq) if index is not None and sq.q is None else None
    if filters is None:
        return await sqlpath.count(conn, sq)
    return len(index.filtered(filters))
