"""Failure handling against real JetStream and PostgreSQL: retries with their spacing, dead
letters with their category, no retry storms, and nothing fetched where it must not be."""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestServer

from indexium_devstack import jars

from .conftest import RETRY_BASE_S


def mod_release(gh, name: str = "sturdy", **jar_kw):
    repo = gh.add_repo("team", name)
    return gh.add_release(repo, "1.0.0", [(f"{name}-1.0.0.jar", jars.fabric_jar(name, "1.0.0", **jar_kw))])


async def test_cdn_503_twice_then_ok_is_indexed_after_spaced_retries(gh, hits, indexer):
    rel = mod_release(gh)
    asset = rel.assets[0]
    gh.fail_next(asset, 503, count=2)
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery) == "indexed"
    times = hits.times("cdn", asset)
    assert len(times) == 3  # two failures, then one suffix read (a small jar is one request)
    # attempt n+1 waits retry_base * 4**(n-1): 0.2 s, then 0.8 s
    assert times[1] - times[0] >= RETRY_BASE_S * 0.9
    assert times[2] - times[1] >= RETRY_BASE_S * 4 * 0.9
    assert await indexer.dead_letters() == []
    assert await indexer.fetchval("SELECT count(*) FROM job_attempts") == 0  # cleared on success
    assert await indexer.metric("indexium_indexer_jobs_total", outcome="retry") == 2


async def test_cdn_503_three_times_then_ok_is_still_indexed(gh, hits, indexer):
    """The first try plus 3 retries (INDEXIUM_INDEXER_MAX_RETRIES=3)."""
    rel = mod_release(gh)
    gh.fail_next(rel.assets[0], 503, count=3)
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery, timeout=30) == "indexed"
    assert len(hits.times("cdn", rel.assets[0])) == 4
    assert await indexer.dead_letters() == []


async def test_cdn_503_forever_is_dead_lettered_after_the_first_try_and_three_retries(gh, hits, indexer):
    rel = mod_release(gh)
    gh.fail_next(rel.assets[0], 503, count=100)
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery, timeout=30) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"], dl["msg_id"]) == ("retries_exhausted", 4, delivery)
    assert "503" in dl["error"]
    await asyncio.sleep(RETRY_BASE_S * 5)  # nothing comes back
    assert len(hits.times("cdn", rel.assets[0])) == 4
    on_stream = await indexer.last_dead_letter_on_stream()
    assert (on_stream.category, on_stream.attempts, on_stream.msg_id) == ("retries_exhausted", 4, delivery)
    assert await indexer.fetchval("SELECT count(*) FROM mod_versions") == 0


async def test_asset_gone_is_one_dead_letter_without_a_retry_storm(gh, hits, indexer):
    rel = mod_release(gh)
    gh.set_mode(rel.assets[0], "404")
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery) == "dead_lettered"
    await asyncio.sleep(RETRY_BASE_S * 5)
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("asset_not_found", 1)
    # the Range request, then once without Range (servers that dislike a Range say 404), then never again
    assert len(hits.times("download", rel.assets[0])) == 2
    assert hits.times("cdn", rel.assets[0]) == []


async def test_429_retry_after_is_honoured(gh, hits, indexer):
    rel = mod_release(gh)
    gh.fail_next(rel.assets[0], 429, count=1, retry_after=1)
    delivery = await indexer.publish(rel)
    assert await indexer.outcome(delivery) == "indexed"
    first, second = hits.times("cdn", rel.assets[0])
    assert second - first >= 0.95  # Retry-After: 1 beats the 0.2 s backoff
    assert await indexer.dead_letters() == []


async def test_corrupt_zip_is_dead_lettered_and_the_version_held_suspicious(gh, indexer):
    repo = gh.add_repo("team", "fragile")
    good = gh.add_release(repo, "1.0.0", [("fragile-1.0.0.jar", jars.fabric_jar("fragile", "1.0.0"))])
    assert await indexer.outcome(await indexer.publish(good)) == "indexed"
    jar = jars.fabric_jar("fragile", "1.1.0")
    at = jar.index(b"fabric.mod.json") + len(b"fabric.mod.json") + 4
    broken = jar[:at] + bytes(b ^ 0xFF for b in jar[at : at + 40]) + jar[at + 40 :]
    bad = gh.add_release(repo, "1.1.0", [("fragile-1.1.0.jar", broken)])
    delivery = await indexer.publish(bad)
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("corrupt_zip", 1)
    # Kept with the repository and the tag of its release: the author's dashboard reads it by the
    # repository and shows the tag, never reading the message's bytes.
    assert [tuple(r) for r in await indexer.fetch("SELECT github_repo_id, tag_name FROM dead_letters")] == [
        (repo.id, "1.1.0")]
    row = await indexer.fetch("SELECT status, suspicious FROM mod_versions WHERE version_number = '1.1.0'")
    assert [tuple(r) for r in row] == [("quarantined", True)]
    assert await indexer.fetchval("SELECT latest_version FROM mods") == "1.0.0"


async def test_no_manifest_is_dead_lettered(gh, indexer):
    repo = gh.add_repo("team", "library")
    lib = jars.build_jar([("META-INF/MANIFEST.MF", jars.manifest({})), ("a/B.class", b"\xca\xfe\xba\xbe")])
    delivery = await indexer.publish(gh.add_release(repo, "1.0", [("library-1.0.jar", lib)]))
    assert await indexer.outcome(delivery) == "dead_lettered"
    (dl,) = await indexer.dead_letters()
    assert (dl["category"], dl["attempts"]) == ("no_manifest", 1)


async def test_redirect_to_a_host_not_allowed_fetches_nothing_there(gh, indexer):
    evil_hits = []

    async def evil(request: web.Request) -> web.Response:
        evil_hits.append(request.path)
        return web.Response(body=jars.fabric_jar("sturdy", "1.0.0"))

    app = web.Application()
    app.router.add_get("/{tail:.*}", evil)
    evil_server = TestServer(app, host="127.0.0.1")
    await evil_server.start_server()
    try:
        rel = mod_release(gh)
        gh.redirect_asset_to(rel.assets[0], str(evil_server.make_url("/sturdy.jar")))
        delivery = await indexer.publish(rel)
        assert await indexer.outcome(delivery) == "dead_lettered"
        (dl,) = await indexer.dead_letters()
        assert (dl["category"], dl["attempts"]) == ("download_host_not_allowed", 1)
        assert evil_hits == []
    finally:
        await evil_server.close()
