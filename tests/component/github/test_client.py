"""The shared GitHub client against the GitHub-shaped server: tokens, quota, ETags, pages."""

from __future__ import annotations

import asyncio
import time

import pytest

from indexium_github import InstallationUnavailable, NotFound, RateLimited, Unauthorized
from indexium_github import AppConfig, GitHubClient


async def test_installation_token_is_minted_once_and_reused(gh, make_client):
    repo = gh.add_repo("alice/lumen")
    inst = gh.add_installation([repo])
    client = make_client()
    for _ in range(3):
        resp = await client.get("/installation/repositories", installation_id=inst.id)
        assert resp.json()["repositories"][0]["full_name"] == "alice/lumen"
    assert client.tokens.minted == 1
    assert gh.api_calls["POST /app/installations/{installation_id}/access_tokens"] == 1


async def test_concurrent_callers_share_one_token(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client()
    await asyncio.gather(*(client.get("/installation/repositories", installation_id=inst.id)
                           for _ in range(10)))
    assert client.tokens.minted == 1


async def test_token_refreshed_shortly_before_expiry(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client()
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.advance(3600 - 200)  # inside the 5-minute margin: not used any more
    await client.get("/installation/repositories", installation_id=inst.id)
    assert client.tokens.minted == 2


async def test_revoked_token_is_replaced_on_401(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client()
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.expire_tokens()  # GitHub says 401 Bad credentials although our cache thinks it is fine
    resp = await client.get("/installation/repositories", installation_id=inst.id)
    assert resp.status == 200 and client.tokens.minted == 2


async def test_suspended_installation_is_unavailable(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    inst.suspended_at = gh.now()
    with pytest.raises(InstallationUnavailable):
        await make_client().get("/installation/repositories", installation_id=inst.id)
    with pytest.raises(InstallationUnavailable):
        await make_client().get("/installation/repositories", installation_id=424242)


async def test_wrong_app_key_is_unauthorized(gh, session):
    from indexium_devstack.fakegithub import generate_rsa_pem

    other, _ = generate_rsa_pem()
    client = GitHubClient(session, AppConfig(gh.app_id, other.decode(), gh.api_url), mutation_interval_s=0)
    with pytest.raises(Unauthorized):
        await client.get("/app/hook/deliveries", app=True)


async def test_exhausted_quota_waits_for_the_reset_instead_of_failing(gh, make_client, fake_sleep):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client(max_wait_s=7200)
    await client.get("/installation/repositories", installation_id=inst.id)  # mints a token first
    gh.set_rate_limit(5000, remaining=0, reset_in_seconds=1800)
    calls = len(gh.api_log)
    resp = await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert resp.status == 200
    assert 1800 <= sum(fake_sleep.waits) <= 1803  # waited for the reset (plus a second of slack)
    # one refused request taught the client the reset time; it did not hammer
    assert len(gh.api_log) - calls == 2


async def test_known_empty_bucket_waits_before_sending(gh, make_client, fake_sleep):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client(max_wait_s=7200)
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.set_rate_limit(5000, remaining=1, reset_in_seconds=600)
    await client.get("/repos/alice/lumen", installation_id=inst.id)  # spends the last one
    calls = len(gh.api_log)
    await client.get("/repos/alice/lumen", installation_id=inst.id, conditional=False)
    assert len(gh.api_log) - calls == 1  # no refused request at all: the client waited first
    assert 598 <= fake_sleep.waits[-1] <= 602


async def test_rate_limit_with_real_clock_short_reset(gh, session):
    """No fake clock: the client really sleeps until X-RateLimit-Reset (2 s away)."""
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = GitHubClient(session, AppConfig(gh.app_id, gh.test_private_key, gh.api_url), mutation_interval_s=0)
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.set_rate_limit(5000, remaining=0, reset_in_seconds=2, status=429)
    started = time.monotonic()
    resp = await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert resp.status == 200
    assert 1.0 <= time.monotonic() - started < 6


async def test_wait_longer_than_allowed_raises_rate_limited(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client(max_wait_s=60)
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.set_rate_limit(5000, remaining=0, reset_in_seconds=1800)
    with pytest.raises(RateLimited) as info:
        await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert info.value.retry_at >= gh.now() + 1700


async def test_reserve_leaves_quota_to_others(gh, make_client, fake_sleep):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client(max_wait_s=7200)
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.set_rate_limit(5000, remaining=100, reset_in_seconds=900)
    await client.get("/repos/alice/lumen", installation_id=inst.id)
    with pytest.raises(RateLimited) as info:
        await client.get("/repos/alice/lumen", installation_id=inst.id, reserve=500, max_wait_s=60)
    assert info.value.reason == "reserve"
    await client.get("/repos/alice/lumen", installation_id=inst.id)  # no reserve: goes through


async def test_secondary_limit_retry_after_is_honoured(gh, make_client, fake_sleep):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client()
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.secondary_limit_next(2, retry_after=30)
    resp = await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert resp.status == 200 and [round(w) for w in fake_sleep.waits] == [30, 30]


async def test_304_costs_no_quota_and_serves_the_cached_body(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen", description="Light")])
    client = make_client()
    first = await client.get("/repos/alice/lumen", installation_id=inst.id)
    remaining = gh.limiter.remaining
    second = await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert second.not_modified and second.body == first.body
    assert gh.limiter.remaining == remaining  # a 304 spends nothing
    assert client.counters.not_modified == 1
    gh.repo("alice/lumen").description = "Lighter"
    third = await client.get("/repos/alice/lumen", installation_id=inst.id)
    assert not third.not_modified and third.json()["description"] == "Lighter"
    assert gh.limiter.remaining == remaining - 1


async def test_link_pagination_visits_every_page(gh, make_client):
    repo = gh.add_repo("alice/lumen")
    inst = gh.add_installation([repo])
    for i in range(250):
        gh.add_release(repo, f"v{i}", created_at=1_700_000_000 + i)
    client = make_client()
    pages = [p async for p in client.paginate("/repos/alice/lumen/releases", installation_id=inst.id)]
    assert len(pages) == 3
    tags = [r["tag_name"] for p in pages for r in p.json()]
    assert len(tags) == 250 and len(set(tags)) == 250


async def test_5xx_is_retried_then_raised(gh, make_client, fake_sleep):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    client = make_client(retries=2)
    await client.get("/installation/repositories", installation_id=inst.id)
    gh.fail_next(status=502, count=2, where="api")
    assert (await client.get("/repos/alice/lumen", installation_id=inst.id)).status == 200
    gh.fail_next(status=500, count=5, where="api")
    with pytest.raises(Exception) as info:
        await client.get("/repos/alice/lumen", installation_id=inst.id, conditional=False)
    assert info.value.status == 500 and info.value.retryable


async def test_not_found(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    with pytest.raises(NotFound):
        await make_client().get("/repos/alice/lumen/contents/nope.txt", installation_id=inst.id)


async def test_credentials_never_leave_the_api_host(gh, make_client):
    inst = gh.add_installation([gh.add_repo("alice/lumen")])
    with pytest.raises(Exception, match="not the API host"):
        await make_client().get("http://example.com/steal", installation_id=inst.id)


async def test_renamed_repository_redirect_is_followed_on_the_api_host(session):
    """GitHub answers a repository's old name with 301 to /repositories/{id}."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    async def old(request):
        raise web.HTTPMovedPermanently(location=str(request.url.with_path("/repositories/7")))

    async def new(request):
        return web.json_response({"id": 7, "full_name": "alice/renamed"})

    app = web.Application()
    app.router.add_get("/repos/alice/old", old)
    app.router.add_get("/repositories/7", new)
    async with TestServer(app) as server:
        from indexium_devstack.fakegithub import generate_rsa_pem

        pem = generate_rsa_pem()[0].decode()
        client = GitHubClient(session, AppConfig(1, pem, str(server.make_url(""))), mutation_interval_s=0)
        resp = await client.get("/repos/alice/old")
        assert resp.json()["full_name"] == "alice/renamed"


async def test_a_stored_etag_gets_a_304_without_a_body_and_the_readme_route_serves_both_forms(gh, make_client):
    """The README's ETag lives in PostgreSQL, not in the client's cache: the client given it
    gets GitHub's 304 (no quota) as status 304 with no body. The fake's /readme answers JSON
    (base64) or raw bytes by the Accept header, each with its own ETag, like GitHub."""
    import base64

    repo = gh.add_repo("alice/lumen")
    gh.set_file(repo, "docs/README.md", "# Lumen\n")
    gh.set_file(repo, "README.rst", "Lumen\n=====\n")  # the root's .md-less README loses to none: root first
    inst = gh.add_installation([repo])
    client = make_client()
    first = await client.get("/repos/alice/lumen/readme", installation_id=inst.id)
    data = first.json()
    assert first.status == 200 and data["path"] == "README.rst"
    assert base64.b64decode(data["content"]) == b"Lumen\n=====\n"
    remaining = gh.limiter.snapshot()["remaining"]
    again = await client.get("/repos/alice/lumen/readme", installation_id=inst.id,
                                    if_none_match=first.headers["ETag"])
    assert again.status == 304 and again.not_modified and again.body == b""
    assert gh.limiter.snapshot()["remaining"] == remaining  # a 304 is free
    raw = await client.get("/repos/alice/lumen/readme", installation_id=inst.id,
                                  accept="application/vnd.github.raw+json", if_none_match=first.headers["ETag"])
    assert raw.status == 200 and raw.body == b"Lumen\n=====\n" and raw.headers["ETag"] != first.headers["ETag"]
    gh.set_file(repo, "README.rst", None)
    moved = await client.get("/repos/alice/lumen/readme", installation_id=inst.id,
                                    if_none_match=first.headers["ETag"])
    assert moved.status == 200 and moved.json()["path"] == "docs/README.md"
    gh.set_file(repo, "docs/README.md", None)
    with pytest.raises(NotFound):
        await client.get("/repos/alice/lumen/readme", installation_id=inst.id)
    assert [s for t, s in gh.api_statuses if t.endswith("/readme")] == [200, 304, 200, 200, 404]
