"""Two API processes, one NATS: a version event makes a new release searchable on both within 2 s,
while each keeps serving its hot queries from its own cache."""

import asyncio
import time

import aiohttp
import nats
import pytest

from indexium_contracts import versions as events
from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q, versions as versions_q
from indexium_devstack.embedded import free_port
from indexium_devstack.procs import BY_NAME, ServiceProcess


@pytest.fixture
async def replicas(nats_url, database_url, tmp_path):
    env = {"NATS_URL": nats_url, "DATABASE_URL": database_url, "INDEXIUM_LOG_FORMAT": "json"}
    procs = [ServiceProcess(BY_NAME["api"], port=free_port(), env=env, log_path=tmp_path / f"api{i}.log")
             for i in range(2)]
    for p in procs:
        p.start()
    try:
        await asyncio.gather(*(asyncio.to_thread(p.wait_ready, 60) for p in procs))
        async with aiohttp.ClientSession() as http:
            for p in procs:  # the invalidation subscription is up (it does not gate readiness)
                await wait_until(lambda p=p: metric(http, p.url, "indexium_api_nats_connected"), 1.0, timeout=10)
        yield procs
    finally:
        codes = [await asyncio.to_thread(p.stop, 30) for p in procs]
        for p, code in zip(procs, codes):
            if code != 0:
                print(p.log_path.read_text()[-3000:])
    assert codes == [0, 0]


async def metric(http, url, name) -> float | None:
    async with http.get(f"{url}/metrics") as resp:
        for line in (await resp.text()).splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


async def wait_until(probe, expected, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await probe() == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never became {expected}")


async def add_mod(conn, repo_id: int, manifest_id: str, summary: str):
    await mods_q.upsert_author(conn, repo_id, "owner")
    card = mods_q.Card(name=manifest_id.title(), summary=summary, description="", authors=[], licenses=[],
                     links={}, environment="both")
    mod = await mods_q.create(conn, github_repo_id=repo_id, repo_full_name=f"owner/{manifest_id}", owner_id=repo_id,
                            owner_login="owner", manifest_id=manifest_id, default_branch="main", categories=[],
                            card=card)
    vid = await versions_q.upsert_version(
        conn, mod_id=mod["id"], version_number="1.0", github_release_id=repo_id, tag_name="1.0", name="1.0",
        changelog="", version_type="release", published_at=None, status="public", game_versions=["1.20.1"],
        loaders=["fabric"])
    await versions_q.replace_files(conn, vid, [versions_q.FileRow(
        github_asset_id=repo_id, filename="a.jar", url="https://x/a.jar", size=1, content_type=None,
        github_digest=None, sidecar_url=None, loaders=["fabric"], game_versions=["1.20.1"], manifests=[],
        is_primary=True, download_count=0)])
    await mods_q.refresh_rollup(conn, mod["id"])
    return mod, vid


async def test_event_invalidates_both_processes(replicas, nats_url, database_url):
    conn = await connect(database_url)
    try:
        steady, steady_vid = await add_mod(conn, 1, "steady", "shiny things")
        async with aiohttp.ClientSession() as http:
            # As the indexer does, the release's event follows its commit: each replica's search
            # index re-reads the mod (search answers from it once it has).
            nc = await nats.connect(nats_url)
            await nc.jetstream().publish(events.INDEXED, events.encoder.encode(events.VersionIndexed(
                mod_id=str(steady["id"]), slug="steady", version_id=str(steady_vid), version_number="1.0",
                visible=True)))
            await nc.drain()
            for p in replicas:
                await wait_until(lambda p=p: metric(http, p.url, "indexium_api_search_index_mods"), 1.0, timeout=10)

            async def search(url):
                async with http.get(f"{url}/api/v1/mods", params={"q": "shiny"}) as resp:
                    assert resp.status == 200
                    return resp.headers["X-Cache"], [h["slug"] for h in (await resp.json())["hits"]]

            for p in replicas:
                assert await search(p.url) == ("MISS", ["steady"])
                assert await search(p.url) == ("HIT", ["steady"])
            mod, vid = await add_mod(conn, 2, "newcomer", "more shiny things")
            for p in replicas:  # committed, but no event yet: hot queries stay cached
                assert await search(p.url) == ("HIT", ["steady"])
            nc = await nats.connect(nats_url)
            started = time.monotonic()
            await nc.jetstream().publish(events.INDEXED, events.encoder.encode(events.VersionIndexed(
                mod_id=str(mod["id"]), slug="newcomer", version_id=str(vid), version_number="1.0", visible=True)))
            await nc.drain()
            for p in replicas:
                while "newcomer" not in (await search(p.url))[1]:
                    assert time.monotonic() - started < 2.0
                    await asyncio.sleep(0.01)
                state, found = await search(p.url)
                assert state == "HIT" and sorted(found) == ["newcomer", "steady"]
            for p in replicas:  # every collector pass timed; the index's load ended in a full one (settle)
                assert await metric(http, p.url, 'indexium_api_gc_pause_seconds_count{generation="2"}') >= 1
    finally:
        await conn.close()
