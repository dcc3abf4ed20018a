"""Small pure pieces: hash detection, prefix queries, ETag matching, event tags, search query shapes."""

import random

import msgspec
import pytest

from indexium_api.core import hashes, invalidation, respond
from indexium_contracts import versions
from indexium_search import sqlpath
from indexium_platform.web import ApiError


def test_hash_algorithms_are_detected_by_length():
    assert hashes.algorithm_of("a" * 40, None) == "sha1"
    assert hashes.algorithm_of("a" * 64, None) == "sha256"
    assert hashes.algorithm_of("a" * 128, "sha512") == "sha512"
    for value, algorithm in [("a" * 39, None), ("g" * 40, None), ("a" * 40, "sha256"), ("", None)]:
        with pytest.raises(ApiError) as err:
            hashes.algorithm_of(value, algorithm)
        assert err.value.status == 400 and "'hash'" in err.value.description
    assert hashes.group(["A" * 40, "a" * 40, "b" * 64], None) == {"sha1": ["a" * 40], "sha256": ["b" * 64]}


def test_prefix_query_for_as_you_type():
    assert sqlpath.prefix_tsquery("Fast rend") == "'fast' & 'rend':*"
    assert sqlpath.prefix_tsquery("  сундук ") == "'сундук':*"
    assert sqlpath.prefix_tsquery("a'b | c_dee") == "'a' & 'b' & 'c' & 'dee':*"  # no tsquery syntax survives
    assert sqlpath.prefix_tsquery("!!! ---") is None
    assert sqlpath.prefix_tsquery("fast r") == "'fast'"  # a one- or two-letter prefix is left out
    assert sqlpath.prefix_tsquery("a") is None


def test_search_query_normalizes_facets_and_picks_default_sort():
    sq = sqlpath.SearchQuery(None, "1.20.1", None)
    assert sq.game_versions == ("1.20.1",) and sq.loaders == () and sq.effective_sort == "updated"
    assert sqlpath.SearchQuery("x").effective_sort == "relevance"
    with pytest.raises(ValueError):
        sqlpath.SearchQuery("x", sort="random")


def test_both_facets_become_per_file_pairs():
    sql, args = sqlpath.page_sql(sqlpath.SearchQuery(None, ("1.20.1", "1.21"), ("forge",)), fuzzy=False)
    assert "m.file_facets && $1::text[]" in sql and args[0] == ["forge|1.20.1", "forge|1.21"]


def test_etag_matching():
    assert respond.etag_matches('"a"', '"a"') and respond.etag_matches('W/"a"', '"a"')
    assert respond.etag_matches('"x", "a"', '"a"') and respond.etag_matches("*", '"a"')
    assert not respond.etag_matches('"b"', '"a"') and not respond.etag_matches(None, '"a"')


def test_event_tags():
    event = versions.VersionIndexed(mod_id="m", slug="sodium", version_id="v", version_number="1", visible=True)
    assert invalidation.tags_for(versions.encoder.encode(event)) == ("version_indexed.v1", ("global", "mod:sodium"))
    future = msgspec.msgpack.encode({"type": "version_rescanned.v9", "slug": "x", "new": [1]})
    assert invalidation.tags_for(future) == ("other", ("global", "mod:x"))
    assert invalidation.tags_for(msgspec.msgpack.encode({"type": "version_hidden.v1"}))[1] is None
    assert invalidation.tags_for(b"\xc1") == ("undecodable", None)


def test_a_whole_mod_hidden_or_shown_invalidates_its_card_and_every_listing():
    event = versions.ModChanged(mod_id="m", slug="lumen", visible=False, cause="repository.privatized",
                                hidden_reason="github: repository is private")
    data = versions.encoder.encode(event)
    assert invalidation.tags_for(data) == ("mod_changed.v1", ("global", "mod:lumen"))
    assert versions.decoder.decode(data) == event


def test_cached_headers_are_built_once_and_each_response_gets_its_own_copy():
    from aiohttp import web

    from indexium_api.core.respond import make

    value = make(200, {"hits": []})
    headers = value.headers("HIT", "public, max-age=0, must-revalidate")
    assert dict(headers) == {"Content-Type": "application/json", "ETag": value.etag,
                             "Cache-Control": "public, max-age=0, must-revalidate", "X-Cache": "HIT"}
    assert value.headers("HIT", "public, max-age=0, must-revalidate") is headers
    # A miss's are built each time: most entries a miss stores are never asked for again (~1 KB each kept).
    miss = value.headers("MISS", "public, max-age=0, must-revalidate")
    assert miss["X-Cache"] == "MISS" and value.headers("MISS", "public, max-age=0, must-revalidate") is not miss
    assert value.headers("STALE", "public, max-age=0, must-revalidate")["X-Cache"] == "STALE"
    assert value.headers("HIT", "public, max-age=3600")["Cache-Control"] == "public, max-age=3600"
    response = web.Response(status=200, body=value.body, headers=headers)
    response.headers["X-Request-Id"] = "a"
    assert "X-Request-Id" not in headers and response.content_type == "application/json"
    assert make(200, {"hits": []}) == value  # the memo takes no part in equality


@pytest.mark.parametrize("header, ok", [
    ("gzip, deflate, br", True), ("GZIP", True), ("x-gzip", True), ("deflate, gzip;q=0.5", True),
    ("*", True), ("br;q=1, *;q=0.1", True), ("gzip;q=0, *", False), ("*;q=0", False),
    ("identity", False), ("deflate, br", False), ("gzip;q=0", False), ("gzip;q=oops", False),
    ("", False), (None, False), ("gzip ; q=0.001", True),
])
def test_accept_encoding_allows_gzip_only_when_it_says_so(header, ok):
    assert respond.accepts_gzip(header) is ok
    assert respond.accepts_gzip(header) is ok  # (the remembered answer)


def test_an_answer_is_kept_gzipped_only_when_it_is_long_compressible_and_not_an_error():
    text = b'{"hits": [' + b", ".join(b'{"slug": "mod-%d", "title": "A mod"}' % i for i in range(100)) + b"]}"
    big = respond.Cached(200, text, respond.etag_of(text))
    assert big.gzipped and len(big.stored) < len(text) / 4 and big.body == text
    assert big.sent(True) == (big.stored, True) and big.sent(False) == (text, False)
    assert big.etag_for(True) == "W/" + big.etag and big.etag_for(False) == big.etag
    assert respond.sizeof(big) == len(big.stored) + respond.ENTRY_OVERHEAD
    gz = big.headers("HIT", "public", True)
    assert gz["Content-Encoding"] == "gzip" and gz["Vary"] == "Accept-Encoding" and gz["ETag"] == "W/" + big.etag
    plain = big.headers("HIT", "public", False)
    assert "Content-Encoding" not in plain and plain["Vary"] == "Accept-Encoding" and plain["ETag"] == big.etag
    small = respond.Cached(200, text[:500], '"s"')
    noise = random.Random(1).randbytes(2048)  # (does not shrink by an eighth)
    for kept in (small, respond.Cached(404, text, '"e"'), respond.Cached(200, text, '"i"', "image/png"),
                 respond.Cached(200, noise, '"n"')):
        assert not kept.gzipped and kept.stored is kept.body and kept.sent(True) == (kept.body, False)
        assert "Vary" not in kept.headers("HIT", "public", False)
