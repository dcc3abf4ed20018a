"""Cross-replica invalidation: two API apps, one NATS; a version event clears both caches."""

import asyncio
import time

import msgspec
import nats

from indexium_api.app import INVALIDATOR
from indexium_api.core.state import API
from indexium_contracts import versions as events
from indexium_db.queries import mods as mods_q

FABRIC_120 = (["fabric"], ["1.20.1"])


async def replicas(make_client, nats_url, n=2):
    clients = [await make_client(NATS_URL=nats_url) for _ in range(n)]
    for c in clients:
        await asyncio.wait_for(c.app[INVALIDATOR].subscribed.wait(), 10)
    return clients


async def publish(nats_url, event, subject=events.INDEXED) -> None:
    nc = await nats.connect(nats_url)
    await nc.jetstream().publish(subject, events.encoder.encode(event))
    await nc.drain()


async def search(client, q):
    resp = await client.get("/api/v1/mods", params={"q": q})
    return resp.headers["X-Cache"], [h["slug"] for h in (await resp.json())["hits"]]


async def test_a_new_release_is_searchable_on_every_replica_within_seconds(make_client, nats_url, seed):
    a, b = await replicas(make_client, nats_url)
    old = await seed.mod("steady", summary="a fresh idea")
    old_vid = await seed.version(old, "1.0", [FABRIC_120])
    # As the indexer does, the release's event follows its commit: each replica's search index
    # re-reads the mod (search answers from it once it has).
    await publish(nats_url, events.VersionIndexed(mod_id=str(old["id"]), slug="steady", version_id=str(old_vid),
                                                  version_number="1.0", visible=True))
    for c in (a, b):
        live = c.app[API].search_index
        while "steady" not in live.index.by_slug or live.current() is None:
            await asyncio.sleep(0.01)
    for c in (a, b):  # warm both caches, and the untouched mod's card
        assert await search(c, "fresh") == ("MISS", ["steady"])
        assert await search(c, "fresh") == ("HIT", ["steady"])
        assert (await c.get("/api/v1/mods/steady")).status == 200
    new = await seed.mod("newcomer", summary="another fresh mod")
    vid = await seed.version(new, "1.0", [FABRIC_120])
    assert (await search(a, "fresh"))[1] == ["steady"]  # still cached: nothing told us yet
    started = time.monotonic()
    await publish(nats_url, events.VersionIndexed(mod_id=str(new["id"]), slug="newcomer", version_id=str(vid),
                                                  version_number="1.0", visible=True))
    for c in (a, b):
        while True:
            state, found = await search(c, "fresh")
            if "newcomer" in found:
                break
            assert time.monotonic() - started < 2.0, "not searchable within 2 s"
            await asyncio.sleep(0.01)
        assert state == "MISS"
        # Another mod's card was not touched by this event.
        assert (await c.get("/api/v1/mods/steady")).headers["X-Cache"] == "HIT"


async def test_hidden_and_unknown_event_types_invalidate_too(make_client, nats_url, seed):
    (a,) = await replicas(make_client, nats_url, n=1)
    m = await seed.mod("vanishing")
    vid = await seed.version(m, "1.0", [FABRIC_120])
    assert (await a.get("/api/v1/mods/vanishing")).status == 200
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", vid)
    await mods_q.refresh_rollup(seed.db, m["id"])
    await publish(nats_url, events.VersionHidden(mod_id=str(m["id"]), slug="vanishing", version_id=str(vid),
                                                 version_number="1.0", reason="release deleted"),
                  subject=events.HIDDEN)
    await wait_for_status(a, "/api/v1/mods/vanishing", 404)
    # A future event type (the scan stage's quarantine, say) with a slug is understood as well.
    m2 = await seed.mod("quarantine-me")
    v2 = await seed.version(m2, "1.0", [FABRIC_120])
    assert (await a.get("/api/v1/mods/quarantine-me")).status == 200
    await seed.set_status(m2, v2, "quarantined")
    nc = await nats.connect(nats_url)
    await nc.jetstream().publish("indexium.version.quarantined", msgspec.msgpack.encode(
        {"type": "version_quarantined.v1", "mod_id": str(m2["id"]), "slug": "quarantine-me", "findings": ["x"]}))
    await nc.drain()
    await wait_for_status(a, "/api/v1/mods/quarantine-me", 404)
    # Garbage on the subject: everything is invalidated (safe), nothing crashes.
    cache = a.app[API].cache
    assert (await a.get("/api/v1/tags/loaders")).headers["X-Cache"] in ("MISS", "HIT")
    nc = await nats.connect(nats_url)
    await nc.jetstream().publish("indexium.version.indexed", b"\xc1not msgpack")
    await nc.drain()
    for _ in range(100):
        if (await a.get("/api/v1/tags/loaders")).headers["X-Cache"] == "MISS":
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("undecodable event did not invalidate the cache")
    assert len(cache) > 0


async def wait_for_status(client, path, status, timeout=2.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        resp = await client.get(path)
        if resp.status == status:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} did not become {status}")


async def test_v2_entries_are_dropped_by_the_same_events_as_v1(make_client, nats_url, seed):
    """A hidden version disappears from /v2 answers asked by slug and by id as from /api/v1's."""
    (client,) = await replicas(make_client, nats_url, n=1)
    m = await seed.mod("twofaced", summary="shown on both surfaces")
    await seed.version(m, "1.0", [FABRIC_120], published=seed.T0)
    vid = await seed.version(m, "2.0", [FABRIC_120], published=seed.T0 + seed.days(1))
    pid = await seed.db.fetchval("SELECT public_id FROM mods WHERE id = $1", m["id"])
    version_id = await seed.db.fetchval("SELECT public_id FROM mod_versions WHERE id = $1", vid)
    paths = ["/api/v1/mods/twofaced/versions", "/v2/project/twofaced/version", f"/v2/project/{pid}",
             f"/v2/version/{version_id}", "/v2/search?query=surfaces", "/updates/twofaced/forge_updates.json"]
    for path in paths:  # warm
        await client.get(path)
        assert (await client.get(path)).headers["X-Cache"] == "HIT", path
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", vid)
    await mods_q.refresh_rollup(seed.db, m["id"])
    await publish(nats_url, events.VersionHidden(mod_id=str(m["id"]), slug="twofaced", version_id=str(vid),
                                                 version_number="2.0", reason="release deleted"), events.HIDDEN)
    deadline = time.monotonic() + 2.0
    while (await client.get(f"/v2/version/{version_id}")).status != 404:
        assert time.monotonic() < deadline, "v2 version by id still served after the event"
        await asyncio.sleep(0.01)
    for path in paths:
        if path.startswith("/v2/version/"):
            continue  # re-cached (as a 404) by the wait above
        resp = await client.get(path)
        assert resp.headers["X-Cache"] == "MISS", path
    body = await (await client.get("/v2/project/twofaced/version")).json()
    assert [v["version_number"] for v in body] == ["1.0"]
    assert len((await (await client.get(f"/v2/project/{pid}")).json())["versions"]) == 1


async def test_a_catalogue_event_forgets_remembered_typo_corrections(make_client, nats_url, seed):
    """A typo remembered as 'no correction' finds the word a new release brings."""
    (a,) = await replicas(make_client, nats_url, n=1)
    corrections = a.app[API].corrections
    corrections.put("glimmerstne", None)
    assert corrections.get("glimmerstne") == (True, None)
    m = await seed.mod("glimmer", summary="glimmerstone lamps")
    vid = await seed.version(m, "1.0", [FABRIC_120])
    await publish(nats_url, events.VersionIndexed(mod_id=str(m["id"]), slug="glimmer", version_id=str(vid),
                                                  version_number="1.0", visible=True))
    started = time.monotonic()
    while corrections.get("glimmerstne")[0]:
        assert time.monotonic() - started < 2.0, "corrections still remembered 2 s after the event"
        await asyncio.sleep(0.01)


async def test_a_release_sent_again_unchanged_drops_nothing(make_client, nats_url, seed):
    """VersionIndexed(changed=False): the indexer asks the scan stage again about a release sent
    again whose served state is as it was; no replica drops the mod's answers or its index entry."""
    (a,) = await replicas(make_client, nats_url, n=1)
    m = await seed.mod("steady", summary="a fresh idea")
    vid = await seed.version(m, "1.0", [FABRIC_120])
    other = await seed.mod("other")
    other_vid = await seed.version(other, "1.0", [FABRIC_120])
    for path in ("/api/v1/mods/steady", "/api/v1/mods?q=fresh"):
        await a.get(path)
        assert (await a.get(path)).headers["X-Cache"] == "HIT"
    await publish(nats_url, events.VersionIndexed(mod_id=str(m["id"]), slug="steady", version_id=str(vid),
                                                  version_number="1.0", visible=True, changed=False))
    # A changed one after it, on the same subscription: once it is seen, so was the first.
    await publish(nats_url, events.VersionIndexed(mod_id=str(other["id"]), slug="other", version_id=str(other_vid),
                                                  version_number="1.0", visible=True))
    deadline = time.monotonic() + 2.0
    while (await a.get("/api/v1/mods?q=fresh")).headers["X-Cache"] != "MISS":
        assert time.monotonic() < deadline, "the changed event was not seen"
        await asyncio.sleep(0.01)
    assert (await a.get("/api/v1/mods/steady")).headers["X-Cache"] == "HIT"
