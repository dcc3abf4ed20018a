""""Check again" tells the author the truth: queued for a GitHub App role that reads the queue
now, or queued with no one to read it yet (JetStream's view of the INGEST/github consumer)."""

from __future__ import annotations

import asyncio

import nats

from indexium_api.core.state import API
from indexium_contracts import ingest

from .test_auth import _csrf, _sign_in, gh, github_role, site  # noqa: F401 - fixtures


async def _check(client, repo_id: int) -> str:
    token = await _csrf(client)
    r = await client.post("/dashboard/check", data={"csrf_token": token, "repository_id": str(repo_id)},
                          allow_redirects=False)
    assert r.status == 303
    return r.headers["Location"]


async def test_check_again_says_so_when_no_github_role_reads_the_queue(site, gh, nats_url):
    client = await site()
    await asyncio.wait_for(client.app[API].bus.subscribed.wait(), 30)
    await _sign_in(client)
    repo = gh.state.find_repo("alice", "lanterns")
    where = await _check(client, repo.id)
    assert where.startswith(f"/dashboard?queued={repo.id}")
    page = await (await client.get(where)).text()
    assert "not running right now" in page and "nothing is lost" in page
    nc = await nats.connect(nats_url)
    try:  # the request waits on the stream all the same
        assert (await nc.jetstream().stream_info(ingest.STREAM.name)).state.messages == 1
    finally:
        await nc.drain()


async def test_check_again_with_a_github_role_reading_is_taken_at_once(site, gh, github_role):
    client = await site()
    await asyncio.wait_for(client.app[API].bus.subscribed.wait(), 30)
    await _sign_in(client)
    repo = gh.state.find_repo("alice", "lanterns")
    where = await _check(client, repo.id)
    assert where.startswith(f"/dashboard?checked={repo.id}")
    assert "not running right now" not in await (await client.get(where)).text()
    for _ in range(100):
        if github_role:
            break
        await asyncio.sleep(0.05)
    assert [e.github_repo_id for e in github_role] == [repo.id]
