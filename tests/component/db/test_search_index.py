"""The in-process search index against catalog's SQL path on the same catalogue: the same hits
in the same order and the same totals, for text queries, facets and browse orders; following
changes mod by mod; and the trades of a broad query's bounded candidates pinned."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q
from indexium_search import sqlpath
from indexium_search import facets as facets_q, indexed
from indexium_db.queries import versions as versions_q
from indexium_search import searchindex, trigram
from indexium_search.querytext import PREFIX_MIN_CHARS, normalized
from indexium_search.searchindex import Lexicon, plain_words
from pyroaring import BitMap

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ADJ = ["Better", "Simple", "Magic", "Iron", "Cozy", "Lazy", "Dark", "Tiny"]
NOUN = ["Furnaces", "Chests", "Lanterns", "Storage", "Biomes", "Magic", "Rendering", "Maps"]
OWNER = ["Olga's", "Ivan's", ""]
SUMMARY = ["Adds new furnaces and smelting recipes", "Portable storage for players", "Faster chunk rendering",
           "Мод добавляет новые сундуки", "Magic spells and wands", "The best of the rest"]
PAIRS = [(["fabric"], ["1.20.1"]), (["forge"], ["1.19.2"]), (["neoforge", "forge"], ["1.21.1"]),
         (["quilt", "fabric"], ["1.20.1", "1.20.4"])]
# READMEs (every third mod has one): words found nowhere else, words of names and summaries
# (matched in both, ranked by the name's), an address and numbers (never lexemes).
READMES = ["Numbats and wallabies roam these lanterns.", "Marsupial magic for furnaces, see https://x.org/a 1.20.1",
           "Works on Bukkit/Spigot/Paper. Coal/Charcoal smelting.", "Iron numbat storage; dark rendering."]
WORDS = sorted({w for n in ADJ + NOUN for w in [n.lower()]} | {"olga's", "smelting", "сундук", "spells", "the",
                                                               "rest", "sodium", "mod", "furnacs",
                                                               "lantrns", "magik", "quokka", "irn", "bettr",
                                                               "numbats", "wallaby", "marsupial", "spigot", "charcoal",
                                                               "ironchests", "icz", "bl", "cozylan"})


async def _catalogue(conn, n: int = 90, seed: int = 3) -> None:
    """n mods of shared words; some unlisted; per-file facet pairs; ties in time and downloads."""
    rng = random.Random(seed)
    for i in range(n):
        name = " ".join(x for x in (rng.choice(OWNER), rng.choice(ADJ), rng.choice(NOUN)) if x)
        if i % 17 == 0:
            name = rng.choice(NOUN)  # some one-word names: exact-name matches
        if i % 13 == 4:
            name = name.replace(" ", "")  # some names written together: split for indexing
        await mods_q.upsert_author(conn, 10 + i, f"owner{i}")
        card = mods_q.Card(name=name, summary=rng.choice(SUMMARY), description="", authors=[f"Author{i % 5}"],
                         licenses=["MIT"], links={}, environment=rng.choice(["client", "server", "both"]))
        mod = await mods_q.create(conn, github_repo_id=10 + i, repo_full_name=f"owner{i}/m{i}", owner_id=10 + i,
                                owner_login=f"owner{i}", manifest_id=f"m{i:03d}", default_branch="main",
                                categories=rng.sample(["utility", "magic", "storage", "library"], rng.randint(0, 2)),
                                card=card)
        files = rng.sample(PAIRS, rng.randint(1, 2))
        status = "quarantined" if i % 11 == 5 else "public"
        vid = await versions_q.upsert_version(
            conn, mod_id=mod["id"], version_number="1.0", github_release_id=10 + i, tag_name="1.0", name="1.0",
            changelog="", version_type="release", published_at=T0 + timedelta(days=rng.randint(0, 3)),
            status=status, game_versions=sorted({g for f in files for g in f[1]}),
            loaders=sorted({lo for f in files for lo in f[0]}))
        await versions_q.replace_files(conn, vid, [versions_q.FileRow(
            github_asset_id=100 + i * 3 + k, filename=f"m{i}-{k}.jar", url=f"https://x/m{i}-{k}.jar", size=1,
            content_type=None, github_digest=None, sidecar_url=None, loaders=f[0], game_versions=f[1],
            manifests=[], is_primary=k == 0, download_count=rng.choice([0, 5, 5, 40, 300, 7000]))
            for k, f in enumerate(files)])
        await mods_q.refresh_rollup(conn, mod["id"])
        await conn.execute("UPDATE mods SET created_at = $2 WHERE id = $1", mod["id"],
                           T0 + timedelta(hours=rng.randint(0, 5)))
        if i % 3 == 1:
            await mods_q.set_readme(conn, mod["id"], READMES[i % len(READMES)])


@pytest.fixture
def catalogue(database_url):
    """A connection on its own event loop (hypothesis drives plain functions) and the index."""
    with asyncio.Runner() as runner:
        conn = runner.run(connect(database_url))
        runner.run(_catalogue(conn))
        index = runner.run(indexed.load(conn))
        yield runner, conn, index
        runner.run(conn.close())


def _both(catalogue, sq: sqlpath.SearchQuery, **kw):
    runner, conn, index = catalogue

    async def run():
        # The SQL path ranking every match (no bounded candidates), and the index path.
        sql = await sqlpath.search(conn, sq, corrections=sqlpath.Corrections(), broad_matches=10**9)
        ours = await indexed.search(conn, sq, index=index, lexicon=Lexicon(), corrections=sqlpath.Corrections(),
                                    **kw)
        return sql, ours

    (a, at), (b, bt) = runner.run(run())
    return ([r["slug"] for r in a], at), ([r["slug"] for r in b], bt)


def _query(words, last_cut, filters, sort, offset) -> sqlpath.SearchQuery:
    q = " ".join(words)
    if q and last_cut:
        q = q[: max(1, len(q) - last_cut)]
    gv, lo, env, cat, facets = filters
    return sqlpath.SearchQuery(q or None, game_versions=gv, loaders=lo, environment=env, categories=cat,
                                 facets=facets, sort=sort, offset=offset, limit=7)


_F = facets_q.Facet
FILTERS = st.tuples(
    st.sampled_from([(), ("1.20.1",), ("1.19.2", "1.21.1")]),
    st.sampled_from([(), ("fabric",), ("forge", "quilt")]),
    st.sampled_from([None, "client", "server"]),
    st.sampled_from([(), ("magic",), ("utility", "storage")]),
    st.sampled_from([(), ((_F("categories", ":", "fabric"), _F("categories", ":", "magic")),),
                     ((_F("client_side", ":", "required"),),), ((_F("categories", "!=", "storage"),),),
                     ((_F("project_type", ":", "mod"),), (_F("versions", ":", "1.20.4"),))]),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=0, max_size=3), last_cut=st.integers(0, 4),
       filters=FILTERS, sort=st.sampled_from([None, None, "relevance", "updated", "newest", "downloads", "name"]),
       offset=st.sampled_from([0, 0, 3, 30]))
def test_the_index_finds_what_the_sql_path_finds(catalogue, words, last_cut, filters, sort, offset):
    sq = _query(words, last_cut, filters, sort, offset)
    sql, ours = _both(catalogue, sq)
    assert ours == sql, sq


def test_typical_queries_agree_and_take_the_index(catalogue):
    taken = 0
    for q in ["magic", "Magic", "iron chests", "furn", "lazy lant", "olga's magic", "Ivan's", "сундуки",
              "smelting recipes", "the", "the rest", "author3", "m017", "iron c", "chestz", "magik storage"]:
        for sort in (None, "downloads"):
            sq = sqlpath.SearchQuery(q, sort=sort)
            taken += plain_words(q) is not None and indexed.takes(sq)
            sql, ours = _both(catalogue, sq)
            assert ours == sql, q
    assert taken == 32  # every one of them is the index's to answer


def test_filters_the_index_lacks_fall_back_to_sql(catalogue):
    for sq in [sqlpath.SearchQuery("magic", author="author1"), sqlpath.SearchQuery(None, sort="active_servers"),
               sqlpath.SearchQuery("magic", facets=((_F("license", ":", "mit"),),)),
               sqlpath.SearchQuery('"iron chests"'), sqlpath.SearchQuery("magic or iron"),
               sqlpath.SearchQuery("magic -iron"), sqlpath.SearchQuery("iron-chests")]:
        assert not indexed.takes(sq) or plain_words(sq.q or "x") is None
        sql, ours = _both(catalogue, sq)
        assert ours == sql, sq


def test_a_broad_query_keeps_exact_name_prefix_and_name_matches_and_an_exact_total(catalogue):
    runner, conn, index = catalogue
    # The least downloaded listed mod is named Magic: only its name can bring it to the top.
    slug = runner.run(conn.fetchval("SELECT slug FROM mods WHERE listed ORDER BY downloads, slug LIMIT 1"))
    runner.run(conn.execute("UPDATE mods SET name = 'Magic' WHERE slug = $1", slug))
    runner.run(indexed.reread(conn, index, [slug]))
    sq = sqlpath.SearchQuery("magic", limit=5)
    (_, total), _ = _both(catalogue, sq)
    assert total > 10
    # Bounded to very few candidates: the most popular match, plus the name prefixes and names.
    (sql, _), (ours, ours_total) = _both(catalogue, sq, rank_all=2, per_source=1)
    assert ours_total == total  # exact: counted by the index, not estimated
    names = dict(runner.run(conn.fetch("SELECT slug, lower(name) FROM mods")))
    assert ours[0] == slug == sql[0] and names[slug] == "magic"  # the exact name first, as before
    assert any(names[s].startswith("magic ") for s in ours)


def test_a_later_relevance_page_is_ranked_in_process_and_continues_the_first(catalogue):
    """A later page of a relevance query is ranked by the index like the first (no statement at
    all from memory): with a broad query's bounded candidates (rank_all=2, per_source=1) it is
    the slice of one page as long as both, so paging neither repeats nor skips a mod; re-checked
    (recheck True), the same page."""
    runner, conn, index = catalogue
    warm = _prewarmed(catalogue)
    sent: list[str] = []

    async def page(offset: int, limit: int, recheck: bool):
        index.recheck = recheck
        try:
            rows, total = await indexed.search(conn, sqlpath.SearchQuery("magic", offset=offset, limit=limit),
                                               index=index, lexicon=_copy_of(warm),
                                               corrections=sqlpath.Corrections(), rank_all=2, per_source=1)
            return [r["slug"] for r in rows], total
        finally:
            index.recheck = True

    def logger(record):
        sent.append(record.query)

    conn.add_query_logger(logger)
    try:
        later, total = runner.run(page(5, 4, recheck=False))
        runner.run(asyncio.sleep(0.05))  # (the logger is called back after each query)
    finally:
        conn.remove_query_logger(logger)
    assert sent == []  # ranked and read in process
    whole, whole_total = runner.run(page(0, 9, recheck=False))
    assert total == whole_total > 9 and len(later) == 4 and later == whole[5:9]
    assert runner.run(page(5, 4, recheck=True)) == (later, total)
    assert runner.run(page(total, 4, recheck=False)) == ([], total)  # past the end: empty, the same total


def test_the_index_follows_a_mod_hidden_shown_and_changed(catalogue):
    runner, conn, index = catalogue

    async def run():
        slug = await conn.fetchval("SELECT slug FROM mods WHERE listed AND lower(name) LIKE '%magic%' ORDER BY slug LIMIT 1")
        sq = sqlpath.SearchQuery("magic")
        lexicon = Lexicon()
        before, n = await indexed.search(conn, sq, index=index, lexicon=lexicon)
        assert slug in [r["slug"] for r in before]
        # Hidden in the database, not yet re-read: PostgreSQL's own check already drops it.
        await conn.execute("UPDATE mods SET listed = false WHERE slug = $1", slug)
        lagging, _ = await indexed.search(conn, sq, index=index, lexicon=lexicon)
        assert slug not in [r["slug"] for r in lagging]
        await indexed.reread(conn, index, [slug])
        after, n_after = await indexed.search(conn, sq, index=index, lexicon=lexicon)
        assert slug not in [r["slug"] for r in after] and n_after == n - 1
        # Shown again, renamed: found under its new name once re-read.
        await conn.execute("UPDATE mods SET listed = true, name = 'Quokka Lights' WHERE slug = $1", slug)
        await indexed.reread(conn, index, [slug])
        found, total = await indexed.search(conn, sqlpath.SearchQuery("quokka"), index=index, lexicon=lexicon)
        assert [r["slug"] for r in found] == [slug] and total == 1
        sql_found, _ = await sqlpath.search(conn, sqlpath.SearchQuery("magic"), broad_matches=10**9)
        ours, _ = await indexed.search(conn, sq, index=index, lexicon=lexicon)
        assert [r["slug"] for r in ours] == [r["slug"] for r in sql_found]

    runner.run(run())


def test_without_an_index_search_is_the_sql_path(catalogue):
    runner, conn, _ = catalogue

    async def run():
        sq = sqlpath.SearchQuery("iron chests")
        a, at = await sqlpath.search(conn, sq)
        b, bt = await indexed.search(conn, sq, index=None, lexicon=None)
        return [r["slug"] for r in a], at, [r["slug"] for r in b], bt

    a, at, b, bt = runner.run(run())
    assert (a, at) == (b, bt) and at > 0


def test_a_typo_is_corrected_in_process_with_one_query_and_no_transaction(catalogue):
    runner, conn, index = catalogue
    assert index.words_exact  # the test cluster's locale is C (initdb --locale=C)
    sent: list[str] = []

    async def run():
        lexicon, corrections = Lexicon(), sqlpath.Corrections()
        sq = sqlpath.SearchQuery("lantrns")
        sql = await sqlpath.search(conn, sq, corrections=sqlpath.Corrections(), broad_matches=10**9)
        await indexed.learn(conn, lexicon, plain_words("lantrns lanterns"))
        # (once before: asyncpg's own first-use queries of the statement's types are not counted)
        await indexed.search(conn, sq, index=index, lexicon=lexicon, corrections=sqlpath.Corrections())
        def log(record):
            sent.append(record.query)

        conn.add_query_logger(log)
        try:
            ours = await indexed.search(conn, sq, index=index, lexicon=lexicon, corrections=corrections)
        finally:
            conn.remove_query_logger(log)
        return sql, ours, corrections

    (sql, sql_total), (ours, total), corrections = runner.run(run())
    assert [r["slug"] for r in ours] == [r["slug"] for r in sql] and total == sql_total > 0
    assert corrections.get("lantrns") == (True, "lanterns")  # remembered: the next one is free
    assert len(sent) == 1 and not any(q.startswith(("BEGIN", "SET")) for q in sent), sent


def _prewarmed(catalogue) -> Lexicon:
    """A lexicon as the API's is after start-up: every listed name's words learned."""
    runner, conn, index = catalogue
    lexicon = Lexicon()
    runner.run(indexed.prewarm(conn, lexicon, index))
    return lexicon


def _copy_of(warm: Lexicon) -> Lexicon:
    """A lexicon knowing what ``warm`` knows, learning on its own from there."""
    lexicon = Lexicon()
    lexicon._tokens, lexicon._prefix = dict(warm._tokens), dict(warm._prefix)
    return lexicon


def test_an_unlearned_typo_is_learned_and_answered_in_one_query(catalogue):
    """A word the lexicon does not know and the index corrects: its lexemes learned and the
    corrected query's page read in one statement (indexed._typo_at_once), the SQL path's answer."""
    runner, conn, index = catalogue
    warm = _prewarmed(catalogue)
    sent: list[str] = []

    async def run():
        sq = sqlpath.SearchQuery("lantrns")
        sql = await sqlpath.search(conn, sq, corrections=sqlpath.Corrections(), broad_matches=10**9)
        fresh = _copy_of(warm)
        assert fresh.unknown(plain_words("lantrns")) == (["lantrns"], ["lantrns"])
        # (once before, on another copy: asyncpg's own first-use queries of the statement's types are not counted)
        again = _copy_of(warm)
        await indexed.search(conn, sq, index=index, lexicon=again, corrections=sqlpath.Corrections())
        def log(record):
            sent.append(record.query)

        conn.add_query_logger(log)
        try:
            ours = await indexed.search(conn, sq, index=index, lexicon=fresh, corrections=sqlpath.Corrections())
        finally:
            conn.remove_query_logger(log)
        return sql, ours, fresh

    (sql, sql_total), (ours, total), fresh = runner.run(run())
    assert [r["slug"] for r in ours] == [r["slug"] for r in sql] and total == sql_total > 0
    assert fresh.token("lantrns") is not None  # learned along the way: the next one asks nothing
    assert len(sent) == 1 and not any(q.startswith(("BEGIN", "SET")) for q in sent), sent


@pytest.mark.parametrize("facets", [False, True])
def test_words_learned_with_a_speculative_corrected_page_answer_as_the_sql_path(catalogue, monkeypatch, facets):
    """Unknown words with a prewarmed lexicon: typos corrected (the page read with the learning),
    words that match as typed ("furnacs": english stems it as furnaces; "m017": a slug's), the
    speculative page then unused; and words far from any: the same answer as sqlpath.search."""
    runner, conn, index = catalogue
    warm = _prewarmed(catalogue)
    answered = []
    real = indexed._typo_at_once

    async def counted(*args):
        found = await real(*args)
        answered.append(found is not None)
        return found

    monkeypatch.setattr(indexed, "_typo_at_once", counted)
    for q in ["lantrns", "furnacs", "magik storage", "irn chests", "bettr lanterns", "chestz", "m017", "lanterms",
              "quokka", "storag", "Furnacs magic", "olga's magik"]:
        lo, gv = (("fabric",), ("1.20.1",)) if facets else ((), ())
        sq = sqlpath.SearchQuery(q, loaders=lo, game_versions=gv, limit=7)

        async def run(sq=sq):
            sql = await sqlpath.search(conn, sq, corrections=sqlpath.Corrections(), broad_matches=10**9)
            lexicon = _copy_of(warm)
            ours = await indexed.search(conn, sq, index=index, lexicon=lexicon, corrections=sqlpath.Corrections())
            return sql, ours

        (a, at), (b, bt) = runner.run(run())
        assert ([r["slug"] for r in b], bt) == ([r["slug"] for r in a], at), sq
    assert sum(answered) >= 3  # the one-statement answer was taken, not only declined


def test_a_re_read_adds_the_words_a_new_name_brings_to_typo_corrections(catalogue):
    runner, conn, index = catalogue

    async def run():
        slug = await conn.fetchval("SELECT slug FROM mods WHERE listed ORDER BY slug LIMIT 1")
        assert indexed.correct(index, "quokkalights", None) == (True, None)
        await conn.execute("UPDATE mods SET name = 'Quokkalight Lamps' WHERE slug = $1", slug)
        await indexed.reread(conn, index, [slug])
        assert "quokkalight" in index.words
        assert indexed.correct(index, "quokkalights", None) == (True, "quokkalight")
        found, total = await indexed.search(conn, sqlpath.SearchQuery("quokkalights"), index=index,
                                            lexicon=Lexicon())
        return slug, [r["slug"] for r in found], total

    slug, found, total = runner.run(run())
    assert found == [slug] and total == 1


def test_the_tsquery_sent_as_text_is_the_one_catalogs_cte_builds(catalogue):
    """indexed.tsquery_of: the same text, hence the same tree for ts_rank (OR order included)."""
    runner, conn, index = catalogue
    rng = random.Random(21)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(150)]
    queries += [q[:-2] for q in queries[:40]] + ["the rest", "olga's magic", "сундуки", "Iron C", "m017"]

    async def run():
        lexicon, differ, compared = Lexicon(), [], 0
        for q in queries:
            words = plain_words(q)
            if words is None:
                continue
            await indexed.learn(conn, lexicon, words)
            ours = indexed.tsquery_of(index, searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS))
            if ours is None:
                continue
            s = sqlpath.Sql()
            cte, _, _ = sqlpath.text_query(sqlpath.SearchQuery(q), s, fuzzy=False, ranked=False)
            theirs = await conn.fetchval(f"{cte} SELECT tsq::text FROM query", *s.args)
            ours = await conn.fetchval("SELECT $1::tsquery::text", ours)  # the tree it parses to
            compared += 1
            if ours != theirs:
                differ.append((q, ours, theirs))
        return differ, compared

    differ, compared = runner.run(run())
    assert not differ, differ[:5]
    assert compared > 150


def test_a_remembered_prefix_union_follows_the_index(catalogue):
    runner, conn, index = catalogue
    part = [searchindex.Part((("quok",),), prefix=True)]
    assert not index.matches(part) and not index.matches(part, heavy=True)  # now remembered
    slug = runner.run(conn.fetchval("SELECT slug FROM mods WHERE listed ORDER BY slug DESC LIMIT 1"))
    runner.run(conn.execute("UPDATE mods SET name = 'Quokka Lights' WHERE slug = $1", slug))
    runner.run(indexed.reread(conn, index, [slug]))
    ordinal = index.by_slug[slug]
    assert list(index.matches(part)) == [ordinal] == list(index.matches(part, heavy=True))
    # the vocabulary's postings kept in step with the new lexemes ('quokka', 'light')
    assert all(a is index.postings[x] and b is index.heavy.get(x) for x, a, b in
               zip(index._vocabulary, index._vocabulary_postings, index._vocabulary_heavy, strict=True))
    runner.run(conn.execute("UPDATE mods SET listed = false WHERE slug = $1", slug))
    runner.run(indexed.reread(conn, index, [slug]))
    assert not index.matches(part)


@pytest.mark.parametrize(("in_c", "exact_most", "ranked_most"),
                         [(False, 0, 0), (False, 0, 10**6), (False, 10**6, 10**6), (True, 0, 0)])
def test_the_fuzzy_pass_narrowed_in_postgresql_or_in_process_is_the_sql_paths(catalogue, monkeypatch, in_c,
                                                                             exact_most, ranked_most):
    """Names tested by PostgreSQL's word_similarity before their rows are read (exact_most 0)
    with the page ranked by PostgreSQL in the same statement (ranked_most 0) or ranked in
    process after it, or all tested in process first (10**6: a first relevance page ranked in
    process, the others by PostgreSQL), or all tested by the C word similarity (in_c, the
    bound FUZZY_MOST_IN_C; pages of up to FUZZY_RANKED_IN_C names ranked in process): the
    same page and total as catalog's fuzzy scan."""
    if in_c and trigram._fastsearch is None:
        pytest.skip("the C word similarity is not built here (no compiler)")
    monkeypatch.setattr(indexed, "FUZZY_IN_C", in_c)
    monkeypatch.setattr(indexed, "FUZZY_EXACT_MOST", exact_most)
    monkeypatch.setattr(indexed, "FUZZY_RANKED_MOST", ranked_most)
    fuzzy = []
    real = indexed._fuzzy

    async def counted(*args):
        found = await real(*args)
        fuzzy.append(found[1])
        return found

    monkeypatch.setattr(indexed, "_fuzzy", counted)
    ranked = []
    real_ranked = indexed._fuzzy_in_process

    async def in_process(*args):
        found = await real_ranked(*args)
        ranked.append(found is not None and found[1] > 0)
        return found

    monkeypatch.setattr(indexed, "_fuzzy_in_process", in_process)
    narrowed = []
    real_sql = indexed._ranked_sql

    def ranked_sql(*args, **kw):
        narrowed.append(kw.get("names", False))
        return real_sql(*args, **kw)

    monkeypatch.setattr(indexed, "_ranked_sql", ranked_sql)
    # (One token each: a query of two words that match apart is answered by the partial query
    # before the fuzzy pass.)
    for q in ["lazylanterns", "ironmagic", "cozybiomes", "darkchests", "tinymaps", "betterstorage"]:
        for lo, gv in [(("quilt",), ()), ((), ("1.19.2",)), (("forge",), ("1.20.1",))]:
            for sort in (None, "downloads"):
                sq = sqlpath.SearchQuery(q, loaders=lo, game_versions=gv, sort=sort, limit=7)
                sql, ours = _both(catalogue, sq)
                assert ours == sql, sq
    assert sum(1 for n in fuzzy if n) >= 5  # the fuzzy pass ran, and found names
    if ranked_most or in_c:
        assert sum(ranked) >= 3  # relevance pages of it ranked in process
        if in_c:
            assert not any(narrowed)  # every name tested in process: PostgreSQL narrows none
    else:
        assert not ranked and sum(narrowed) >= 3  # one statement: names narrowed, page ranked, by PostgreSQL


def test_relevance_in_process_is_postgresqls_rank_expression_to_the_bit(catalogue):
    """SearchIndex.relevance (tsrank's ts_rank, the name bonus, popularity) against
    sqlpath.rank_expression over every match of many queries; and the same matches."""
    runner, conn, index = catalogue
    rng = random.Random(5)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(150)]
    # (and the abbreviations of names: an exact name's bonus; README words: the penalty)
    queries += sorted({a for e in index.entries if e is not None for a in e.abbreviations})[:40]
    queries += ["numbats", "wallaby lanterns", "marsupial magic", "dark", "iron storage", "charcoal", "spigot"]
    queries += [q[:-2] for q in queries[:40]] + ["olga's magic", "Olga's Ma", "magic", "Magic Maps", "iron c",
                                                 "olga's furnaces", "ivan's lanterns", "Ivan's Lant", "olga's"]

    async def run():
        lexicon, differ, compared, named, covered, readme_only = Lexicon(), [], 0, 0, 0, 0
        for q in queries:
            words = plain_words(q)
            if words is None:
                continue
            await indexed.learn(conn, lexicon, words)
            parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS)
            tsq = indexed.tsquery_of(index, parts)
            query = indexed.rank_query(parts) if tsq is not None else None
            if query is None:
                continue
            ql = normalized(q)
            s = sqlpath.Sql()
            t, p = s.p(tsq, "::tsquery"), s.p(ql, "::text")
            rows = await conn.fetch(f"SELECT m.slug, {sqlpath.rank_expression(t, p)} AS rank FROM mods m"
                                    f" WHERE m.listed AND {sqlpath.text_match(t)}", *s.args)
            if indexed.exact_union(parts):  # (a phrase part covered by a plain one: the same matches)
                assert {index.entries[o].slug for o in index.found(parts)} == {r["slug"] for r in rows}, q
                covered += not all(p.exact for p in parts)
            ordinals = [index.by_slug[r["slug"]] for r in rows]
            strong = index.matches(parts)
            in_c = (searchindex._fastsearch.relevances(index.entries, ordinals, query.operands, query.size, ql)
                    if searchindex._fastsearch is not None else [None] * len(rows))
            by_rank = index.ranked(ordinals, query, ql, strong=strong)
            for r, ordinal, c in zip(rows, ordinals, in_c):
                ours = index.relevance(ordinal, query, ql, strong=ordinal in strong)
                compared += 1
                named += index.entries[ordinal].name.startswith(ql)
                readme_only += ordinal not in strong
                if ql in index.entries[ordinal].abbreviations:
                    c = None  # (the C scores know no abbreviations: ranked() scores those in Python)
                elif c is not None:
                    c -= 0.0 if ordinal in strong else searchindex.README_ONLY_PENALTY
                if ours != r["rank"] or c not in (None, ours):
                    differ.append((q, r["slug"], ours, c, r["rank"]))
            expected = sorted(rows, key=lambda r: (-r["rank"], -index.entries[index.by_slug[r["slug"]]].downloads,
                                                   r["slug"]))
            if [index.entries[o].slug for o in by_rank] != [r["slug"] for r in expected]:
                differ.append((q, "order"))
        return differ, compared, named, covered, readme_only

    differ, compared, named, covered, readme_only = runner.run(run())
    assert not differ, differ[:5]  # (C: relevances in _fastsearch.c, where it is built, to the same bit)
    assert covered >= 4
    assert compared > 800 and named > 20  # (names that are, or start with, the query among them)
    assert readme_only > 20  # (and mods matching only in their README, ranked below)


@pytest.mark.parametrize("hidden", [2, 5])
def test_mods_hidden_before_the_index_knows_leave_the_page_whole(catalogue, hidden):
    """A page ranked in process asks for SPARE_IDS more ids, so a few mods hidden a moment ago
    (PostgreSQL's re-check drops them) leave it whole; more than that: the page PostgreSQL ranks."""
    runner, conn, index = catalogue
    sq = sqlpath.SearchQuery("magic", limit=5)

    async def run():
        before, total = await indexed.search(conn, sq, index=index, lexicon=Lexicon())
        gone = [r["slug"] for r in before[:hidden]]
        await conn.execute("UPDATE mods SET listed = false WHERE slug = ANY($1::text[])", gone)
        sql, _ = await sqlpath.search(conn, sq, broad_matches=10**9)
        ours, ours_total = await indexed.search(conn, sq, index=index, lexicon=Lexicon())
        return gone, [r["slug"] for r in sql], [r["slug"] for r in ours], total, ours_total

    gone, sql, ours, total, ours_total = runner.run(run())
    assert ours == sql and len(ours) == 5 and not set(gone) & set(ours)
    if hidden <= indexed.SPARE_IDS:
        assert ours_total == total  # the index's count, until its re-read
    else:
        assert ours_total == total - hidden  # PostgreSQL's page and count


@pytest.mark.parametrize("walk", [4, 40, 10**6])
def test_the_most_popular_names_with_a_prefix_walked_or_gathered_are_the_same(catalogue, monkeypatch, walk):
    runner, conn, index = catalogue
    monkeypatch.setattr(searchindex, "NAME_WALK", walk)  # the walk, cut short, or never taken
    rng = random.Random(2)
    names = [e.name for e in index.entries if e is not None]
    for text in ["", "m", "ma", "magic", "olga", "zz"] + [n[:rng.randint(1, len(n))] for n in rng.sample(names, 20)]:
        for within in (index.listed, BitMap(rng.sample(list(index.listed), 30)), BitMap()):
            for n in (1, 3, 100):
                assert index.first_name_prefixed(text, within, n) == index.first(
                    index.name_prefixed(text) & within, n), (text, n)


def test_ranked_with_or_without_the_c_relevances_is_the_same_order(catalogue, monkeypatch):
    """SearchIndex.ranked's candidates scored by _fastsearch.relevances, or by relevance() one
    at a time where it is not built: the same order (ties included), with and without the
    fuzzy pass's added similarity."""
    runner, conn, index = catalogue
    if searchindex._fastsearch is None:
        pytest.skip("the C relevances are not built here (no compiler)")
    lexicon, compared = Lexicon(), 0
    for q in ["magic", "iron chests", "olga's ma", "cozy lanterns", "dark"]:
        words = plain_words(q)
        runner.run(indexed.learn(conn, lexicon, words))
        parts = searchindex.parts_of(words, lexicon, PREFIX_MIN_CHARS)
        query = indexed.rank_query(parts)
        matches = list(index.matches(parts))
        added = {o: (o % 7) / 10 for o in matches}
        with_c = index.ranked(matches, query, normalized(q)), index.ranked(matches, query, normalized(q), added)
        with monkeypatch.context() as m:
            m.setattr(searchindex, "_fastsearch", None)
            assert (index.ranked(matches, query, normalized(q)),
                    index.ranked(matches, query, normalized(q), added)) == with_c, q
        compared += len(matches)
    assert compared > 50


# Queries of every path a page takes: ranked in process (narrow, broad, as-you-type), a typo
# corrected, the fuzzy pass, facets, a sort other than relevance, browse orders and pages.
MEMORY_QUERIES = [
    sqlpath.SearchQuery("magic"), sqlpath.SearchQuery("iron chests"), sqlpath.SearchQuery("lant"),
    sqlpath.SearchQuery("olga's magic"), sqlpath.SearchQuery("lantrns"), sqlpath.SearchQuery("magik"),
    sqlpath.SearchQuery("bettr"), sqlpath.SearchQuery("quokka"), sqlpath.SearchQuery("сундук"),
    sqlpath.SearchQuery("storage", game_versions=("1.20.1",), loaders=("fabric",)),
    sqlpath.SearchQuery("irn", loaders=("forge",)), sqlpath.SearchQuery("magic", sort="downloads"),
    sqlpath.SearchQuery("magic", offset=3, limit=4), sqlpath.SearchQuery(None, sort="newest", offset=5),
    sqlpath.SearchQuery(None, sort="updated", loaders=("quilt",)), sqlpath.SearchQuery(None, sort="name"),
    sqlpath.SearchQuery(None, categories=("magic",)),
]


@pytest.mark.parametrize("sq", MEMORY_QUERIES, ids=lambda sq: f"{sq.q}|{sq.sort}|{sq.loaders}|{sq.offset}")
def test_a_page_from_memory_is_the_page_postgresql_reads(catalogue, sq):
    """SearchIndex.recheck False: the hits come from the index's copies of the rows, every
    column equal to what the re-checked page reads from PostgreSQL, in the same order, with the
    same total (the index fresh: loaded, nothing changed since)."""
    runner, conn, index = catalogue
    warm = _prewarmed(catalogue)

    async def run(recheck: bool):
        index.recheck = recheck
        lexicon = _copy_of(warm)
        try:
            return await indexed.search(conn, sq, index=index, lexicon=lexicon, corrections=sqlpath.Corrections())
        finally:
            index.recheck = True

    read, read_total = runner.run(run(True))
    held, held_total = runner.run(run(False))
    # (A typo's read rows carry "learned" too, and a page the SQL ranks in either mode "total".)
    hit = lambda r: {k: r[k] for k in searchindex.HIT_KEYS}  # noqa: E731
    assert [hit(r) for r in held] == [hit(r) for r in read] and held_total == read_total


def test_an_unlearned_typo_from_memory_costs_its_learning_statement_alone(catalogue):
    """The typed word's lexemes are asked for first (one statement, answered while the index
    corrects and ranks), the corrected page comes from memory: the SQL path's answer, one query."""
    runner, conn, index = catalogue
    warm = _prewarmed(catalogue)
    sent: list[str] = []

    async def run():
        sq = sqlpath.SearchQuery("lantrns")
        sql = await sqlpath.search(conn, sq, corrections=sqlpath.Corrections(), broad_matches=10**9)
        fresh = _copy_of(warm)
        index.recheck = False

        def logger(record):
            sent.append(record.query)

        conn.add_query_logger(logger)
        try:
            ours = await indexed.search(conn, sq, index=index, lexicon=fresh, corrections=sqlpath.Corrections())
            again = await indexed.search(conn, sq, index=index, lexicon=fresh, corrections=sqlpath.Corrections())
            await asyncio.sleep(0.05)  # (the logger is called back after each query)
        finally:
            index.recheck = True
            conn.remove_query_logger(logger)
        return sql, ours, again, fresh

    (sql, sql_total), (ours, total), again, fresh = runner.run(run())
    assert [dict(r) for r in ours] == [{k: r[k] for k in searchindex.HIT_KEYS} for r in sql]
    assert total == sql_total > 0 and again == (ours, total)
    assert fresh.token("lantrns") is not None
    assert len(sent) == 1 and "AS token" in sent[0], sent  # learning it; the second time nothing


def test_a_re_read_mod_shows_its_new_row_from_memory(catalogue):
    """What a hit from memory shows follows the mod's row through a re-read (as visibility does):
    renamed, summary and downloads changed, an icon added."""
    runner, conn, index = catalogue

    async def run():
        slug = await conn.fetchval("SELECT slug FROM mods WHERE listed ORDER BY slug LIMIT 1")
        mod_id = await conn.fetchval("SELECT id FROM mods WHERE slug = $1", slug)
        await conn.execute("UPDATE mods SET name = 'Quokka Wombat Lights', summary = 'Marsupial lamps',"
                           " downloads = 123456 WHERE slug = $1", slug)
        await mods_q.upsert_icon(conn, mod_id, "image/png", b"\x89PNG", "e1")
        await indexed.reread(conn, index, [slug])
        sq = sqlpath.SearchQuery("wombat")
        index.recheck = False
        try:
            held = await indexed.search(conn, sq, index=index, lexicon=Lexicon())
        finally:
            index.recheck = True
        read = await indexed.search(conn, sq, index=index, lexicon=Lexicon())
        return slug, held, read

    slug, (held, n), (read, m) = runner.run(run())
    assert [r["slug"] for r in held] == [slug] and n == m == 1
    assert held[0]["name"] == "Quokka Wombat Lights" and held[0]["summary"] == "Marsupial lamps"
    assert held[0]["downloads"] == 123456 and held[0]["has_icon"] is True
    assert dict(held[0]) == dict(read[0]) and tuple(held[0]) == searchindex.HIT_KEYS


def test_a_page_whose_mod_holds_no_hit_is_read_from_postgresql(catalogue):
    """An entry without its hit (a row read without the hit columns) never makes a page from
    memory fail or show a gap: that page is PostgreSQL's re-checked read, the same rows."""
    runner, conn, index = catalogue
    sq = sqlpath.SearchQuery("magic")
    sent: list[str] = []
    warm = _prewarmed(catalogue)

    def logger(record):
        sent.append(record.query)

    async def run():
        read = await indexed.search(conn, sq, index=index, lexicon=warm)
        first = index.by_slug[read[0][0]["slug"]]
        held_hit, index.entries[first].hit = index.entries[first].hit, None
        index.recheck = False
        conn.add_query_logger(logger)
        try:
            fell_back = await indexed.search(conn, sq, index=index, lexicon=warm)
            await asyncio.sleep(0.05)
        finally:
            conn.remove_query_logger(logger)
            index.recheck = True
            index.entries[first].hit = held_hit
        return read, fell_back

    (read, total), (fell_back, fell_total) = runner.run(run())
    assert [dict(r) for r in fell_back] == [dict(r) for r in read] and fell_total == total > 0
    assert len(sent) == 1, sent  # the page read by id


def test_a_re_read_follows_a_changed_readme_and_keeps_an_unchanged_one(catalogue):
    """A README's words find its mod once re-read; a new README takes the old words' postings
    away (remembered prefix unions too); a re-read with the same README keeps its postings."""
    runner, conn, index = catalogue

    async def run():
        slug = await conn.fetchval("SELECT slug FROM mods WHERE listed ORDER BY slug LIMIT 1")
        mod_id = await conn.fetchval("SELECT id FROM mods WHERE slug = $1", slug)
        ordinal = index.by_slug[slug]
        prefix = [searchindex.Part((("bandico",),), prefix=True)]
        assert not index.matches(prefix, readme=True)  # (remembered, empty)
        await mods_q.set_readme(conn, mod_id, "Bandicoots dig tunnels.")
        await indexed.reread(conn, index, [slug])
        assert ordinal in index.matches(prefix, readme=True)
        found = []
        for q in ("bandicoot", "tunnels", "bandic"):
            sql, _ = await sqlpath.search(conn, sqlpath.SearchQuery(q), broad_matches=10**9)
            ours, _ = await indexed.search(conn, sqlpath.SearchQuery(q), index=index, lexicon=Lexicon())
            found.append(([r["slug"] for r in ours], [r["slug"] for r in sql]))
        kept = index.readme["bandicoot"]
        await conn.execute("UPDATE mods SET summary = 'Burrows' WHERE id = $1", mod_id)
        await indexed.reread(conn, index, [slug])  # the same README: its postings untouched
        assert index.readme["bandicoot"] is kept and ordinal in kept
        await mods_q.set_readme(conn, mod_id, "Echidnas instead.")
        await indexed.reread(conn, index, [slug])
        assert ordinal not in index.readme["bandicoot"] and ordinal in index.readme["echidna"]
        assert ordinal not in index.matches(prefix, readme=True)
        gone, _ = await indexed.search(conn, sqlpath.SearchQuery("bandicoot"), index=index, lexicon=Lexicon())
        return slug, found, [r["slug"] for r in gone]

    slug, found, gone = runner.run(run())
    assert all(ours == sql == [slug] for ours, sql in found), found
    assert gone == []
