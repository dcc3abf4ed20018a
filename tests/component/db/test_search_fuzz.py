"""Any text a client may send as ``q`` (the API has already refused NUL and over-long values)
is a search on real PostgreSQL, never a database error."""

from __future__ import annotations

import asyncio
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from indexium_api.core.params import MAX_QUERY_CHARS
from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_search import sqlpath
from indexium_search.websearch import defuse

# What websearch_to_tsquery and the tsvector parser give meaning to, plus words and spaces.
_SYNTAX = st.sampled_from(list("-\"'\\!&|()<>:*. \t\u3000\u00a0") + ["or", "OR", "and", "sodium", "the", "a"])
# Runs of negations, with what the parser skips between them (what overflowed its stack).
_RUNS = st.tuples(st.integers(1, 50), st.sampled_from(["", " ", "!", "&", "(", ")", "|", "<", " - ", '"'])).map(
    lambda t: (t[1] + "-") * t[0])
QUERIES = st.lists(st.one_of(_SYNTAX, _RUNS, st.text(st.characters(blacklist_characters="\x00",
                                                            blacklist_categories=("Cs",)), max_size=4)),
                   max_size=120).map("".join).map(lambda q: q[:MAX_QUERY_CHARS])


@pytest.fixture
def search_db(database_url):
    """A connection on its own event loop: hypothesis drives a plain function."""
    with asyncio.Runner() as runner:
        conn = runner.run(connect(database_url))
        runner.run(_seed(conn))
        yield runner, conn
        runner.run(conn.close())


async def _seed(conn) -> None:
    await mods_q.upsert_author(conn, 1, "caffeine")
    card = mods_q.Card(name="Sodium", summary="Fast rendering", description="Fast.", authors=["Jelly"],
                     licenses=["MIT"], links={}, environment="client")
    mod = await mods_q.create(conn, github_repo_id=1, repo_full_name="caffeine/sodium", owner_id=1,
                            owner_login="caffeine", manifest_id="sodium", default_branch="main", categories=[],
                            card=card)
    vid = await versions_q.upsert_version(
        conn, mod_id=mod["id"], version_number="0.5.3", github_release_id=1, tag_name="0.5.3", name="0.5.3",
        changelog="", version_type="release", published_at=None, status="public", game_versions=["1.20.1"],
        loaders=["fabric"])
    await versions_q.replace_files(conn, vid, [versions_q.FileRow(
        github_asset_id=1, filename="sodium.jar", url="https://x/sodium.jar", size=10, content_type=None,
        github_digest=None, sidecar_url=None, loaders=["fabric"], game_versions=["1.20.1"], manifests=[],
        is_primary=True, download_count=3)])
    await mods_q.refresh_rollup(conn, mod["id"])


def _search(search_db, q: str):
    runner, conn = search_db
    return runner.run(sqlpath.search(conn, sqlpath.SearchQuery(q, None, None, 10, 0)))


@pytest.mark.parametrize("q", ["-" * 33, "sodium " + "-" * 40, "- " * 40 + "sodium", "-!" * 40 + "x",
                               '"sodium ' + "-" * 40 + '"'])
def test_runs_of_dashes_search_instead_of_failing(search_db, q):
    rows, total = _search(search_db, q)
    assert total == len(rows)


def test_a_run_of_dashes_still_negates(search_db):
    runner, conn = search_db
    parsed = runner.run(conn.fetchval("SELECT websearch_to_tsquery('simple', $1)::text",
                                      defuse("fast " + "- " * 40 + "sodium")))
    assert parsed == "'fast' & !'sodium'"
    assert _search(search_db, "sodium " + "-" * 40)[1] == 1


@settings(max_examples=int(os.environ.get("INDEXIUM_SEARCH_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=QUERIES)
def test_no_query_text_is_a_database_error(search_db, q):
    _search(search_db, q)
