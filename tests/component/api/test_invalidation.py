"""Cross-replica invalidation: two API apps, one NATS; a version event clears both caches."""

import asyncio
import re
import time

import msgspec
import nats

from indexium_api.core.state import API
from indexium_contracts import versions as events
from indexium_db.queries import mods as mods_q

FABRIC_120 = (["fabric"], ["1.20.1"])


async def replicas(make_client, nats_url, n=2):
    clients = [await make_client(NATS_URL=nats_url) for _ in range(n)]
    for c in clients:
        await asyncio.wait_for(c.app[API].bus.subscribed.wait(), 10)
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


def _hashes(n):
    return {"sha1": f"{n:040x}", "sha256": f"{n:064x}", "sha512": f"{n:0128x}"}


async def _modpack(seed, slug, holds):
    """A listed modpack whose version lists the files of hashes ``holds`` (pack_files), as the indexer writes it."""
    from indexium_jar import formats  # noqa: PLC0415

    pack = await seed.mod(slug, name=slug.title(), summary="A pack")
    vid = await seed.version(pack, "1.0", [FABRIC_120])
    fid = await seed.db.fetchval("SELECT id FROM version_files WHERE version_id = $1", vid)
    for n in holds:
        await seed.db.execute(
            "INSERT INTO pack_files (file_id, path, sha1, sha512, downloads) VALUES ($1, $2, $3, $4, $5)",
            fid, f"mods/m{n}.jar", _hashes(n)["sha1"], _hashes(n)["sha512"], [f"https://cdn.modrinth.com/m{n}.jar"])
    await mods_q.set_project_type(seed.db, pack["id"], formats.MODPACK)
    return pack, vid


async def _owned(seed, mod, n):
    await seed.db.execute("INSERT INTO content_owners (sha256, mod_id) VALUES ($1, $2) ON CONFLICT (sha256) "
                          "DO UPDATE SET mod_id = EXCLUDED.mod_id", _hashes(n)["sha256"], mod["id"])


async def _until_miss(client, path, timeout=2.0):
    started = time.monotonic()
    while (resp := await client.get(path)).headers["X-Cache"] == "HIT":
        assert time.monotonic() - started < timeout, f"{path} still cached"
        await asyncio.sleep(0.01)
    return await resp.text()


async def test_a_modpack_event_refreshes_its_mods_pages_and_a_mod_event_the_packs_listing_it(make_client, nats_url,
                                                                                           seed):
    (a,) = await replicas(make_client, nats_url, n=1)
    lumen = await seed.mod("lumen", name="Lumen Lanterns")
    await seed.version(lumen, "1.0", [(["fabric"], ["1.20.1"], _hashes(1))])
    await _owned(seed, lumen, 1)
    bystander = await seed.mod("bystander")
    await seed.version(bystander, "1.0", [(["fabric"], ["1.20.1"], _hashes(2))])
    for path in ("/mods/lumen", "/mods/bystander"):  # cached before the pack exists
        assert (await a.get(path)).status == 200 and (await a.get(path)).headers["X-Cache"] == "HIT"
    assert "Fastpack" not in await (await a.get("/mods/lumen")).text()

    # The modpack is indexed: its event refreshes the page of the mod it lists, not the bystander's.
    pack, pack_vid = await _modpack(seed, "fastpack", holds=[1, 3])
    await publish(nats_url, events.VersionIndexed(mod_id=str(pack["id"]), slug="fastpack", version_id=str(pack_vid),
                                                  version_number="1.0", visible=True))
    body = await _until_miss(a, "/mods/lumen")
    assert re.search(r'<ul class="in-packs">.*href="/mods/fastpack"', body, re.S)
    assert (await a.get("/mods/bystander")).headers["X-Cache"] == "HIT"

    # A mod indexed after the pack that lists its file: the pack's page links it at once.
    assert 'href="/mods/latecomer"' not in await (await a.get("/mods/fastpack")).text()
    assert (await a.get("/mods/fastpack")).headers["X-Cache"] == "HIT"
    late = await seed.mod("latecomer", name="Late Comer")
    late_vid = await seed.version(late, "1.0", [(["fabric"], ["1.20.1"], _hashes(3))])
    await _owned(seed, late, 3)
    await publish(nats_url, events.VersionIndexed(mod_id=str(late["id"]), slug="latecomer", version_id=str(late_vid),
                                                  version_number="1.0", visible=True))
    assert 'href="/mods/latecomer"' in await _until_miss(a, "/mods/fastpack")
    assert (await a.get("/mods/bystander")).headers["X-Cache"] == "HIT"
