"""HTTP behaviour: cache (ETag/304, single-flight, stale-while-revalidate), PostgreSQL outages,
the read replica URL, rate limits and CORS."""

import asyncio
import gzip
import json

from indexium_api.core.state import API

FABRIC_120 = (["fabric"], ["1.20.1"])


async def test_etag_304_cache_control_and_x_cache(client, seed):
    m = await seed.mod("cached")
    await seed.version(m, "1.0", [FABRIC_120])
    first = await client.get("/api/v1/mods", params={"q": "cached"})
    assert first.status == 200 and first.headers["X-Cache"] == "MISS"
    etag = first.headers["ETag"]
    assert etag.startswith('"') and first.headers["Cache-Control"] == "public, max-age=0, must-revalidate"
    second = await client.get("/api/v1/mods", params={"q": "cached"})
    assert second.headers["X-Cache"] == "HIT" and second.headers["ETag"] == etag
    assert await second.read() == await first.read()
    for header in (etag, f'W/{etag}', f'"other", {etag}', "*"):
        not_modified = await client.get("/api/v1/mods", params={"q": "cached"}, headers={"If-None-Match": header})
        assert not_modified.status == 304 and not_modified.headers["ETag"] == etag
    changed = await client.get("/api/v1/mods", params={"q": "cached"}, headers={"If-None-Match": '"old"'})
    assert changed.status == 200
    card = await client.get("/api/v1/mods/cached", headers={"If-None-Match": etag})
    assert card.status == 200 and card.headers["ETag"] != etag


def _split(answer: bytes) -> tuple[dict[str, str], bytes]:
    head, body = answer.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")[1:]
    return {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}, body


async def test_a_long_answer_is_kept_gzipped_and_sent_as_each_client_accepts(client, seed, raw_request):
    for i in range(12):
        m = await seed.mod(f"squeeze-{i}", summary="A mod that squeezes long answers into few bytes. " * 3)
        await seed.version(m, "1.0", [FABRIC_120])
    path = "/api/v1/mods?q=squeeze&limit=12"
    status, answer = await raw_request(client, "GET", path, {b"Accept-Encoding": b"br, gzip;q=0.8"})
    zipped, packed = _split(answer)
    assert status == 200 and zipped["content-encoding"] == "gzip" and zipped["vary"] == "Accept-Encoding"
    status, answer = await raw_request(client, "GET", path, {b"Accept-Encoding": b"identity"})
    plain, body = _split(answer)
    assert status == 200 and "content-encoding" not in plain and plain["vary"] == "Accept-Encoding"
    assert gzip.decompress(packed) == body and len(json.loads(body)["hits"]) == 12
    assert len(packed) < len(body) / 3 and plain["x-cache"] == "HIT"  # (one entry: the gzip'ed bytes)
    assert client.app[API].cache.bytes < len(body)
    etag = plain["etag"]
    assert etag.startswith('"') and zipped["etag"] == "W/" + etag  # another representation of the same answer
    for tag in (etag, "W/" + etag):
        for accept in (b"gzip", b"identity"):
            status, answer = await raw_request(client, "GET", path, {b"Accept-Encoding": accept, b"If-None-Match": tag.encode()})
            headers, rest = _split(answer)
            assert status == 304 and rest == b"" and headers["vary"] == "Accept-Encoding"
            assert headers["etag"] == (zipped if accept == b"gzip" else plain)["etag"]
    # No Accept-Encoding at all: the identity body (a client that never asked for gzip gets none).
    status, answer = await raw_request(client, "GET", path, {})
    assert status == 200 and _split(answer)[1] == body
    # A short answer is kept and sent as it is, and says nothing of encodings.
    short = await client.get("/api/v1/mods/squeeze-0/versions/9.9")
    assert short.status == 404 and "Vary" not in short.headers and "Content-Encoding" not in short.headers


async def test_cold_key_is_computed_once(client, seed):
    m = await seed.mod("popular")
    await seed.version(m, "1.0", [FABRIC_120])
    db = client.app[API].db
    calls = []
    original = db.run

    async def counting(fn, *args, **kwargs):
        calls.append(fn)
        await asyncio.sleep(0.05)  # make the window for piling up wide
        return await original(fn, *args, **kwargs)

    db.run = counting
    responses = await asyncio.gather(*(client.get("/api/v1/mods/popular") for _ in range(20)))
    assert {r.status for r in responses} == {200}
    assert len(calls) == 1
    assert sorted(r.headers["X-Cache"] for r in responses).count("MISS") == 20  # 1 computed, 19 coalesced


async def test_stale_while_revalidate(make_client, seed):
    client = await make_client(INDEXIUM_API_CACHE_TTL_SECONDS="0.2", INDEXIUM_API_CACHE_STALE_SECONDS="30")
    m = await seed.mod("swr", summary="old summary")
    await seed.version(m, "1.0", [FABRIC_120])
    assert (await (await client.get("/api/v1/mods/swr")).json())["summary"] == "old summary"
    await seed.db.execute("UPDATE mods SET summary = 'new summary' WHERE slug = 'swr'")
    await asyncio.sleep(0.3)
    stale = await client.get("/api/v1/mods/swr")
    assert stale.headers["X-Cache"] == "STALE" and (await stale.json())["summary"] == "old summary"
    for _ in range(50):  # the background refresh lands shortly
        fresh = await client.get("/api/v1/mods/swr")
        if (await fresh.json())["summary"] == "new summary":
            break
        await asyncio.sleep(0.02)
    assert fresh.headers["X-Cache"] in ("HIT", "STALE") and (await fresh.json())["summary"] == "new summary"


async def test_postgres_down_serves_cache_and_503s_the_rest(make_client, seed, pg_proxy):
    m = await seed.mod("resilient")
    await seed.version(m, "1.0", [FABRIC_120])
    # Reads go to DATABASE_READ_URL when set: DATABASE_URL here points at nothing.
    client = await make_client(DATABASE_URL="postgresql://postgres@127.0.0.1:1/none", DATABASE_READ_URL=pg_proxy.url,
                               INDEXIUM_API_CACHE_TTL_SECONDS="0.2", INDEXIUM_API_CACHE_STALE_SECONDS="0",
                               INDEXIUM_API_RETRY_AFTER_SECONDS="7")
    assert (await client.get("/api/v1/mods/resilient")).status == 200
    assert (await client.get("/api/v1/mods", params={"q": "resilient"})).status == 200
    await pg_proxy.stop()
    await asyncio.sleep(0.3)  # past the TTL and the stale window: only stale-if-error remains
    cached = await client.get("/api/v1/mods/resilient")
    assert cached.status == 200 and cached.headers["X-Cache"] == "STALE"
    assert (await cached.json())["slug"] == "resilient"
    client.app[API].cache.invalidate_all()  # even an invalidated copy beats a 503
    assert (await client.get("/api/v1/mods", params={"q": "resilient"})).status == 200
    for path in ("/api/v1/mods/other", "/api/v1/mods?q=uncached"):
        resp = await client.get(path)
        assert resp.status == 503 and resp.headers["Retry-After"] == "7", path
        assert (await resp.json())["error"] == "database_unavailable"
    resp = await client.post("/api/v1/versions/by-hashes", json={"hashes": ["0" * 40]})
    assert resp.status == 503 and resp.headers["Retry-After"] == "7"
    assert (await client.get("/readyz")).status == 200  # degraded, not out of the load balancer
    await pg_proxy.start()  # PostgreSQL back: answers resume after the short breaker
    for _ in range(60):
        resp = await client.get("/api/v1/mods/other")
        if resp.status == 404:
            break
        await asyncio.sleep(0.05)
    assert resp.status == 404


async def test_a_busy_pool_503s_the_waiter_but_opens_no_breaker(make_client, seed):
    # A pool of one whose connection is held: the next uncached read waits the acquire timeout and
    # gets 503, like PostgreSQL away; with a breaker of 30 s opened, the request after the
    # connection comes back would get 503 too. A busy pool is overload, not an outage.
    client = await make_client(INDEXIUM_API_DB_POOL_SIZE="1", INDEXIUM_API_DB_CONNECT_TIMEOUT_SECONDS="0.3",
                               INDEXIUM_API_DB_BREAKER_SECONDS="30", INDEXIUM_API_RETRY_AFTER_SECONDS="3")
    assert (await client.get("/api/v1/mods/warm")).status == 404  # (the pool's one connection opened)
    db = client.app[API].db
    held = await db.pool.acquire()
    try:
        resp = await client.get("/api/v1/mods/other")
        assert resp.status == 503 and resp.headers["Retry-After"] == "3"
        assert (await resp.json())["error"] == "database_unavailable"
    finally:
        await db.pool.release(held)
    assert db.available
    assert (await client.get("/api/v1/mods/other")).status == 404  # (at once: no breaker to wait out)
    metrics = await (await client.get("/metrics")).text()
    assert "indexium_api_db_pool_busy_total 1.0" in metrics
    assert "indexium_api_db_up 1.0" in metrics


async def test_rate_limit_headers_and_429(make_client, seed):
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="3")
    first = await client.get("/api/v1/tags/loaders")
    assert first.headers["X-RateLimit-Limit"] == "3" and first.headers["X-RateLimit-Remaining"] == "2"
    assert 1 <= int(first.headers["X-RateLimit-Reset"]) <= 60
    # A bulk lookup is one request whatever it holds.
    bulk = await client.post("/api/v1/versions/by-hashes", json={"hashes": [f"{i:040x}" for i in range(500)]})
    assert bulk.status == 200 and bulk.headers["X-RateLimit-Remaining"] == "1"
    await client.get("/api/v1/tags/loaders")
    limited = await client.get("/api/v1/mods")
    assert limited.status == 429 and (await limited.json())["error"] == "rate_limited"
    assert int(limited.headers["Retry-After"]) >= 1 and limited.headers["X-RateLimit-Remaining"] == "0"
    assert (await client.get("/healthz")).status == 200  # operational endpoints are not limited


async def test_trusted_proxy_limits_the_forwarded_client(make_client):
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="2", INDEXIUM_API_TRUSTED_PROXIES="127.0.0.0/8")
    for _ in range(2):
        assert (await client.get("/api/v1/tags/loaders", headers={"X-Forwarded-For": "203.0.113.9"})).status == 200
    assert (await client.get("/api/v1/tags/loaders", headers={"X-Forwarded-For": "203.0.113.9"})).status == 429
    # Another client behind the same proxy has its own budget; the proxy itself is not limited.
    assert (await client.get("/api/v1/tags/loaders", headers={"X-Forwarded-For": "203.0.113.10"})).status == 200
    for _ in range(5):
        resp = await client.get("/api/v1/tags/loaders")
        assert resp.status == 200 and "X-RateLimit-Limit" not in resp.headers


async def test_cors_is_open(client):
    resp = await client.get("/api/v1/tags/loaders", headers={"Origin": "https://launcher.example"})
    assert resp.headers["Access-Control-Allow-Origin"] == "*"
    assert "ETag" in resp.headers["Access-Control-Expose-Headers"]
    error = await client.get("/api/v1/mods", params={"limit": "500"})
    assert error.status == 400 and error.headers["Access-Control-Allow-Origin"] == "*"
    assert error.headers["Cache-Control"] == "no-store"
    preflight = await client.options("/api/v1/versions/by-hashes", headers={
        "Origin": "https://ui.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status == 204 and preflight.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]


async def test_search_hits_are_answered_and_counted_like_every_cached_route(client, seed):
    m = await seed.mod("counted")
    await seed.version(m, "1.0", [FABRIC_120])
    for path, params in (("/api/v1/mods", {"q": "counted"}), ("/v2/search", {"query": "counted"})):
        first = await client.get(path, params=params)
        again = await client.get(path, params=params)
        assert (first.headers["X-Cache"], again.headers["X-Cache"]) == ("MISS", "HIT")
        assert await first.read() == await again.read() and first.headers["ETag"] == again.headers["ETag"]
        assert again.headers["Cache-Control"] == first.headers["Cache-Control"]
        not_modified = await client.get(path, params=params, headers={"If-None-Match": again.headers["ETag"]})
        assert not_modified.status == 304 and not_modified.headers["X-Cache"] == "HIT"
    text = await (await client.get("/metrics")).text()
    for route in ("/api/v1/mods", "/v2/search"):
        assert f'indexium_api_cache_requests_total{{result="hit",route="{route}"}} 2.0' in text
        assert f'indexium_api_cache_requests_total{{result="miss",route="{route}"}} 1.0' in text


async def test_cors_and_no_store_without_a_rate_limit(make_client, seed):
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="0")
    m = await seed.mod("open")
    await seed.version(m, "1.0", [FABRIC_120])
    ids = set()
    for expected in ("MISS", "HIT", "HIT"):
        resp = await client.get("/api/v1/mods/open")
        assert resp.status == 200 and resp.headers["X-Cache"] == expected
        assert resp.headers["Access-Control-Allow-Origin"] == "*"
        assert "X-Request-Id" in resp.headers["Access-Control-Expose-Headers"]
        assert resp.headers["Content-Type"] == "application/json" and "X-RateLimit-Limit" not in resp.headers
        ids.add(resp.headers["X-Request-Id"])
    assert len(ids) == 3  # a hit's headers are copied from the entry's, never shared
    not_modified = await client.get("/api/v1/mods/open", headers={"If-None-Match": resp.headers["ETag"]})
    assert not_modified.status == 304 and not_modified.headers["X-Cache"] == "HIT"
    assert not_modified.headers["Access-Control-Allow-Origin"] == "*"
    error = await client.get("/api/v1/mods", params={"limit": "500"})
    assert error.status == 400 and error.headers["Cache-Control"] == "no-store"
    assert error.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Origin" not in (await client.get("/healthz")).headers  # not public


async def test_openapi_document_is_served(client):
    for path in ("/openapi.json", "/api/v1/openapi.json"):
        resp = await client.get(path)
        doc = await resp.json()
        assert resp.status == 200 and doc["openapi"].startswith("3.1")
        assert "/api/v1/mods" in doc["paths"] and "/api/v1/versions/update-check" in doc["paths"]
        assert "/v2/search" in doc["paths"] and "/updates/{id}/forge_updates.json" in doc["paths"]
        # Components are generated from the Structs that encode the answers.
        assert doc["components"]["schemas"]["File"]["required"][-3:] == ["mod_id", "mod_version", "hashes"]
        assert "v2.Project" in doc["components"]["schemas"] and doc["servers"] == [{"url": "/"}]


async def test_metrics_count_cache_results_by_route_template(client, seed):
    m = await seed.mod("metered")
    await seed.version(m, "1.0", [FABRIC_120])
    for _ in range(3):
        await client.get("/api/v1/mods/metered")
    text = await (await client.get("/metrics")).text()
    assert 'indexium_api_cache_requests_total{result="miss",route="/api/v1/mods/{slug}"} 1.0' in text
    assert 'indexium_api_cache_requests_total{result="hit",route="/api/v1/mods/{slug}"} 2.0' in text
    assert "metered" not in text  # never a slug in a label
