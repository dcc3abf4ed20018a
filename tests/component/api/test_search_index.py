"""The replica's search index through the API: it follows catalogue events (a new mod appears
after its event, a hidden one never shows once its event is in, nor before it where pages are
re-checked in PostgreSQL), answers /api/v1 and /v2 as the SQL path does, and is not used when it
cannot be known fresh."""

import asyncio
import gc
import weakref

import nats
import pytest

from indexium_api.core.state import API
from indexium_contracts import versions as events
from indexium_db.queries import mods as mods_q
from indexium_jar import formats

FABRIC_120 = (["fabric"], ["1.20.1"])
FORGE_119 = (["forge"], ["1.19.2"])


async def following(client):
    """The client's live index once it is loaded and current (subscribed, nothing pending)."""
    await asyncio.wait_for(client.app[API].bus.subscribed.wait(), 10)
    live = client.app[API].search_index
    for _ in range(1000):
        if live.current() is not None:
            return live
        await asyncio.sleep(0.01)
    raise AssertionError("the search index never became current")


async def settled(live) -> None:
    for _ in range(1000):
        if live.current() is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the search index never caught up")


async def publish(nats_url, event, subject=events.INDEXED) -> None:
    nc = await nats.connect(nats_url)
    await nc.jetstream().publish(subject, events.encoder.encode(event))
    await nc.drain()


def indexed_event(mod, vid, slug):
    return events.VersionIndexed(mod_id=str(mod["id"]), slug=slug, version_id=str(vid), version_number="1.0",
                                 visible=True)


async def body(client, path="/api/v1/mods", **params):
    resp = await client.get(path, params=params)
    assert resp.status == 200, await resp.text()
    return await resp.json()


async def hits(client, **params):
    b = await body(client, **params)
    return [h["slug"] for h in b["hits"]], b["total"]


async def holds(live, slug: str) -> None:
    """Wait until the index holds ``slug`` and is current again (its event's re-read landed)."""
    for _ in range(500):
        if slug in live.index.by_slug and live.current() is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the index never took {slug} in")


async def test_a_new_mod_is_found_from_the_index_after_its_event(make_client, nats_url, seed):
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    new = await seed.mod("quokka", name="Quokka Lanterns", summary="Lanterns for quokkas")
    vid = await seed.version(new, "1.0", [FABRIC_120])
    assert "quokka" not in live.index.by_slug  # no event yet: the index does not know it
    await publish(nats_url, indexed_event(new, vid, "quokka"))
    await holds(live, "quokka")
    assert await hits(client, q="quokka lant") == (["quokka"], 1)
    assert await hits(client, q="lanterns", game_version="1.20.1", loader="fabric") == (["quokka"], 1)
    assert await hits(client, q="lanterns", game_version="1.19.2", loader="fabric") == ([], 0)


async def test_the_index_re_reads_on_its_own_connections_while_every_request_connection_is_busy(
        make_client, nats_url, seed):
    """A stale index sends searches to PostgreSQL; were its re-read queued behind them (one pool),
    a loaded replica's index stayed stale while they kept the pool full (the soak's minutes of
    300 ms medians). The index's own connections re-read it all the same."""
    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_DB_POOL_SIZE="1")
    live = await following(client)
    api = client.app[API]
    assert api.index_db is not None and api.index_db.pool is not api.db.pool
    held = await api.db.pool.acquire()  # the requests' only connection, busy
    try:
        new = await seed.mod("quokka", name="Quokka Lanterns", summary="Lanterns for quokkas")
        vid = await seed.version(new, "1.0", [FABRIC_120])
        await publish(nats_url, indexed_event(new, vid, "quokka"))
        await holds(live, "quokka")
    finally:
        await api.db.pool.release(held)
    assert await hits(client, q="quokka lant") == (["quokka"], 1)


async def test_a_search_right_after_an_event_waits_for_its_re_read_and_answers_from_the_index(
        make_client, nats_url, seed):
    """A search arriving while an event's re-read is pending waits for it (LiveIndex.landed) and
    answers from the index, the event's mod in it; when the re-read cannot land in time (the
    index's connections busy), the SQL path answers as before."""
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    pool = client.app[API].index_db.pool

    async def pending_with_connections_held(slug: str, name: str) -> list:
        """The index's own connections held, so the event's re-read stays pending."""
        held = [await pool.acquire() for _ in range(pool.get_max_size())]
        mod = await seed.mod(slug, name=name)
        await publish(nats_url, indexed_event(mod, await seed.version(mod, "1.0", [FABRIC_120]), slug))
        for _ in range(1000):
            if live._pending:
                return held
            await asyncio.sleep(0.005)
        raise AssertionError("the event was never heard")

    held = await pending_with_connections_held("quokka", "Quokka Lanterns")
    waiting = asyncio.create_task(live.landed(wait_s=10))
    try:
        await asyncio.sleep(0.2)
        assert not waiting.done() and live.current() is None  # waiting for the re-read
    finally:
        for conn in held:
            await pool.release(conn)
    index = await waiting
    assert index is live.index and "quokka" in index.by_slug
    assert await hits(client, q="quokka lant") == (["quokka"], 1)
    # Held again: the next event's re-read cannot land, the wait gives up, PostgreSQL answers.
    held = await pending_with_connections_held("numbat", "Numbat Lanterns")
    try:
        assert await live.landed(wait_s=0.2) is None
        assert sorted((await hits(client, q="lanterns"))[0]) == ["numbat", "quokka"]
    finally:
        for conn in held:
            await pool.release(conn)
    await holds(live, "numbat")
    # A request waiting for a re-read holds none of the requests' pooled connections meanwhile
    # (it waits before it takes one): else a burst of re-reads fills the pool with waiting searches.
    requests = client.app[API].db.pool
    entered, landed = asyncio.Event(), live.landed

    async def noted(*args, **kwargs):
        entered.set()
        return await landed(*args, **kwargs)

    live.landed = noted
    held = await pending_with_connections_held("wombat", "Wombat Lanterns")
    try:
        searching = asyncio.create_task(hits(client, q="wombat"))
        await asyncio.wait_for(entered.wait(), 10)
        await asyncio.sleep(0.05)
        assert not searching.done() and requests.get_size() - requests.get_idle_size() == 0
    finally:
        for conn in held:
            await pool.release(conn)
    assert await searching == (["wombat"], 1)


@pytest.mark.parametrize("recheck", [True, False])
async def test_a_hidden_mod_shows_until_its_event_only_where_pages_come_from_memory(make_client, nats_url, seed,
                                                                                   recheck):
    """INDEXIUM_API_SEARCH_INDEX_RECHECK=true: a hidden mod never shows, even before the index
    catches up (PostgreSQL's own check in the page's one query drops it). The default (pages
    from the index's copies): until its event arrives, as a cached answer would; never after."""
    m = await seed.mod("vanishing", name="Vanishing Lanterns")
    vid = await seed.version(m, "1.0", [FABRIC_120])
    other = await seed.mod("staying", name="Staying Lanterns")
    await seed.version(other, "1.0", [FABRIC_120])
    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_INDEX_RECHECK=str(recheck).lower())
    live = await following(client)
    assert "vanishing" in live.index.by_slug and live.index.recheck is recheck
    assert sorted((await hits(client, q="lanterns"))[0]) == ["staying", "vanishing"]
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", vid)
    await mods_q.refresh_rollup(seed.db, m["id"])
    # No event yet: the index still holds it.
    assert "vanishing" in live.index.by_slug and live.current() is not None
    assert (await hits(client, q="lantern"))[0] == (["staying"] if recheck else ["staying", "vanishing"])
    await publish(nats_url, events.VersionHidden(mod_id=str(m["id"]), slug="vanishing", version_id=str(vid),
                                                 version_number="1.0", reason="release deleted"),
                  subject=events.HIDDEN)
    for _ in range(500):
        if "vanishing" not in live.index.by_slug:
            break
        await asyncio.sleep(0.01)
    await settled(live)
    assert "vanishing" not in live.index.by_slug
    assert await hits(client, q="lanterns") == (["staying"], 1)
    assert (await body(client))["total"] == 1  # the browse total is the index's too


async def _catalogue(seed):
    for i, (name, files, env, downloads) in enumerate([
            ("Sodium", [FABRIC_120], "client", 900), ("Sodium Extra", [FABRIC_120, FORGE_119], "client", 50),
            ("Iron Chests", [FORGE_119], "both", 400), ("Iron Furnaces", [FABRIC_120], "server", 30),
            ("Olga's Iron Tools", [(["fabric", "quilt"], ["1.20.1", "1.20.4"])], "both", 5),
            ("Хранилище", [FABRIC_120], "both", 1)]):
        m = await seed.mod(f"mod{i}", name=name, summary=f"{name} for everyone", environment=env,
                           categories=["storage"] if "Chests" in name else [])
        await seed.version(m, "1.0", files, downloads=downloads, published=seed.T0 + seed.days(i % 3))
    # A resource pack and a plugin beside the mods: v2's project_type facets tell them apart.
    pack = await seed.mod("irontextures", name="Iron Textures", summary="Iron Textures for everyone")
    await seed.version(pack, "1.0", [(["minecraft"], ["1.20.1"])], downloads=20, published=seed.T0)
    await mods_q.set_project_type(seed.db, pack["id"], formats.RESOURCEPACK)
    plugin = await seed.mod("ironwarps", name="Iron Warps", summary="Iron Warps for everyone")
    await seed.version(plugin, "1.0", [(["paper"], ["1.20.1"])], downloads=10, published=seed.T0)
    await mods_q.set_project_type(seed.db, plugin["id"], formats.PLUGIN)


QUERIES = [
    {"q": "sodium"}, {"q": "sod"}, {"q": "iron"}, {"q": "iron", "sort": "downloads"}, {"q": "olga's iron"},
    {"q": "iron", "game_version": "1.20.1", "loader": "fabric"}, {"q": "iron", "environment": "server"},
    {"q": "хранилище"}, {"q": "sodim"}, {"q": "irn chests"}, {"q": "irno chests"}, {"q": "sodium exra"},
    {"game_version": "1.20.1"},
    {"loader": "forge", "sort": "newest"}, {"sort": "name"}, {"category": "storage"}, {"offset": "2", "limit": "2"},
    {"q": "iron", "type": "mod"}, {"q": "iron", "type": "plugin"}, {"q": "iron", "type": "resourcepack"},
    {"type": "shader"}, {"type": "mod", "loader": "fabric", "sort": "downloads"},
]
V2_QUERIES = [
    {"query": "iron"}, {"query": "sodium", "facets": '[["categories:fabric"],["versions:1.20.1"]]'},
    {"query": "iron", "facets": '[["client_side:required"]]'}, {"facets": '[["categories:forge"]]', "index": "newest"},
    {"query": "iron", "facets": '[["project_type:mod"]]', "index": "downloads"}, {"limit": "0"},
    {"query": "iron", "facets": '[["project_type:resourcepack"]]'}, {"query": "iron", "facets": '[["project_type:plugin"]]'},
    {"facets": '[["project_type:shader"]]'}, {"facets": '[["project_type:mod","project_type:resourcepack"]]'},
    {"query": "iron", "limit": "0"}, {"query": "zzzznotthere", "limit": "0"},  # a text's count, not the filters'
]


async def test_the_index_answers_v1_and_v2_as_the_sql_path_does(make_client, nats_url, seed):
    await _catalogue(seed)
    indexed = await make_client(NATS_URL=nats_url)
    await following(indexed)
    plain = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_INDEX="false")
    assert plain.app[API].search_index is None
    for params in QUERIES:
        assert await body(indexed, **params) == await body(plain, **params), params
    for params in V2_QUERIES:
        assert await body(indexed, "/v2/search", **params) == await body(plain, "/v2/search", **params), params
    assert (await body(indexed, q="iron"))["total"] == 5
    for client in (indexed, plain):
        found = {ptype: sorted(h["slug"] for h in (await body(client, "/v2/search", query="iron", facets=f'[["project_type:{ptype}"]]'))["hits"])
                 for ptype in ("mod", "plugin", "resourcepack")}
        # A resource pack is not a mod; a plugin is one on v2 (Modrinth rewrites it so) and a plugin.
        assert found == {"mod": ["ironwarps", "mod2", "mod3", "mod4"], "plugin": ["ironwarps"],
                         "resourcepack": ["irontextures"]}, found
        # /api/v1's type filter: the same semantics, and every hit says its own type.
        v1 = {ptype: sorted((h["slug"], h["project_type"]) for h in (await body(client, q="iron", type=ptype))["hits"])
              for ptype in ("mod", "plugin", "resourcepack")}
        assert v1 == {"mod": [("ironwarps", "plugin"), ("mod2", "mod"), ("mod3", "mod"), ("mod4", "mod")],
                      "plugin": [("ironwarps", "plugin")], "resourcepack": [("irontextures", "resourcepack")]}, v1


async def test_without_events_the_index_is_not_used(make_client, seed):
    client = await make_client()  # NATS unreachable: nothing would tell the index of a change
    live = client.app[API].search_index
    assert live.index is not None and live.current() is None
    m = await seed.mod("unannounced", name="Unannounced Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])
    assert await hits(client, q="lanterns") == (["unannounced"], 1)  # the SQL path: always fresh


async def test_a_dropped_event_is_caught_up_from_the_rows_written_lately(make_client, nats_url, seed):
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    m = await seed.mod("unheard", name="Unheard Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])  # committed, but its event never arrives
    assert await hits(client, q="unheard") == ([], 0)  # the index does not know it yet
    assert await live.catch_up() == 1
    await settled(live)
    assert "unheard" in live.index.by_slug
    client.app[API].cache.invalidate_all()
    assert await hits(client, q="unheard") == (["unheard"], 1)
    assert await live.catch_up() == 0  # the index's copy is the row's now: nothing to re-read


async def test_a_reconnect_catches_up_with_what_changed_meanwhile_and_invalidates(make_client, nats_url, seed):
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    m = await seed.mod("missed", name="Missed Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])  # while the subscription was away, say
    assert await hits(client, q="missed") == ([], 0)  # and now that answer is cached
    live.resync()  # what the invalidator does when the subscription comes (back) up
    for _ in range(500):
        if "missed" in live.index.by_slug and live.current() is not None:
            break
        await asyncio.sleep(0.01)
    assert await hits(client, q="missed") == (["missed"], 1)  # re-read, and the cache dropped


async def test_an_event_without_a_mod_reloads_the_whole_index(make_client, nats_url, seed):
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    old = live.index
    m = await seed.mod("reloaded", name="Reloaded Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])
    assert await hits(client, q="reloaded") == ([], 0)  # cached
    nc = await nats.connect(nats_url)
    await nc.publish(f"{events.SUBJECT_PREFIX}.unknown", b"\xc1 not msgpack")  # undecodable: anything changed
    await nc.drain()
    for _ in range(500):
        if live.index is not old and live.current() is not None:
            break
        await asyncio.sleep(0.01)
    assert live.index is not old and "reloaded" in live.index.by_slug
    assert await hits(client, q="reloaded") == (["reloaded"], 1)  # and the cache was dropped again


async def test_a_start_up_load_past_its_limit_serves_from_sql_and_loads_in_the_background(make_client, nats_url,
                                                                                          seed):
    """The start-up load is bounded (a replica that does not listen fails its startup probe);
    past the bound the API serves from PostgreSQL alone, and the index comes in afterwards, as
    a background load, which nothing bounds."""
    m = await seed.mod("slowpoke", name="Slowpoke Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])
    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_INDEX_LOAD_TIMEOUT_SECONDS="0.000001")
    live = client.app[API].search_index
    assert live.index is None  # the start-up load gave up
    assert await hits(client, q="slowpoke") == (["slowpoke"], 1)  # answered by the SQL path
    for _ in range(1500):  # the retry comes after search_index.RETRY_S (5 s)
        if live.current() is not None:
            break
        await asyncio.sleep(0.01)
    assert live.current() is not None and "slowpoke" in live.index.by_slug


class _Cycle:
    def __init__(self) -> None:
        self.me = self


async def test_with_the_heap_settled_the_index_is_frozen_and_a_reload_leaves_no_garbage(heap_on, make_client,
                                                                                       nats_url, seed):
    """As the API process runs (app.main turns platform.heap on): the collector is paused while
    the index loads and settles once it is in, so later passes skip the index; what requests
    left as cyclic garbage meanwhile is collected by that pass, not frozen with the index."""
    m = await seed.mod("frozen", name="Frozen Lanterns")
    await seed.version(m, "1.0", [FABRIC_120])
    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    assert gc.isenabled()
    assert not any(o is live.index or o is live.index.entries for o in gc.get_objects())  # frozen
    assert await hits(client, q="frozen") == (["frozen"], 1)
    old = live.index
    reloading = asyncio.create_task(live.reload(invalidate=False))
    await asyncio.sleep(0)
    assert not gc.isenabled()  # paused while it loads
    garbage = weakref.ref(_Cycle())  # what a request served meanwhile may leave
    assert await hits(client, q="frozen") == (["frozen"], 1)
    await reloading
    assert live.index is not old and gc.isenabled()
    assert garbage() is None
    assert not any(o is live.index for o in gc.get_objects())


async def test_each_project_of_a_two_mod_release_is_found_from_the_index_after_the_jobs_events(
        make_client, nats_url, pool):
    """A release publishing two mods makes two projects (issue 34), each announced: a replica's
    index finds each by its own name (before, the second mod had no card to find)."""
    import aiohttp  # noqa: PLC0415

    from indexium_devstack import jars  # noqa: PLC0415
    from indexium_devstack.fakegithub import FakeGitHub  # noqa: PLC0415
    from indexium_indexer.release.job import ReleaseIndexer  # noqa: PLC0415
    from indexium_jar.http.remote import DownloadPolicy  # noqa: PLC0415
    from tests.component.indexer.conftest import Releases  # noqa: PLC0415

    client = await make_client(NATS_URL=nats_url)
    live = await following(client)
    async with FakeGitHub() as gh, aiohttp.ClientSession() as session:
        repo = gh.add_repo("mono", "monorepo")
        rel = gh.add_release(repo, "v1", [
            ("alpha.jar", jars.fabric_jar("mono_alpha", "1.0", "Quokka Alpha", "Lanterns, the first kind.")),
            ("beta.jar", jars.fabric_jar("mono_beta", "1.0", "Wombat Beta", "Burrows, the second kind."))])
        policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
        result = await Releases(gh, ReleaseIndexer(pool, session, policy, publish_before_scan=True)).handle(rel)
    assert sorted(e.slug for e in result.events) == ["mono_alpha", "mono_beta"]
    for event in result.events:
        await publish(nats_url, event)
    for _ in range(500):
        if {"mono_alpha", "mono_beta"} <= set(live.index.by_slug) and live.current() is not None:
            break
        await asyncio.sleep(0.01)
    assert await hits(client, q="quokka") == (["mono_alpha"], 1)
    assert await hits(client, q="wombat burrows") == (["mono_beta"], 1)
