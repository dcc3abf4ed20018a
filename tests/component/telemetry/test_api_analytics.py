"""The API's telemetry routes (services/api analytics.py) on a real PostgreSQL."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest
from aiohttp.test_utils import TestClient, TestServer

from indexium_api.app import create_app
from indexium_api.settings import Settings
from indexium_devstack.embedded import free_port
from indexium_platform.settings import load
from indexium_db.queries import samples as samples_q

SVG_NS = "{http://www.w3.org/2000/svg}"
TODAY = datetime.now(UTC).date()
YESTERDAY = TODAY - timedelta(days=1)


@pytest.fixture
async def api(database_url):
    # Nothing listens on that NATS port: the API's cache then expires by TTL only.
    env = {"DATABASE_URL": database_url, "NATS_URL": f"nats://127.0.0.1:{free_port()}"}
    async with TestClient(TestServer(create_app(load(Settings, env)))) as client:
        yield client


@pytest.fixture
async def mods(db):
    ids = await samples_q.seed_mods(db, ["sodium", "lithium"])
    ids.update(await samples_q.seed_mods(db, ["unlisted"], listed=False, offset=100))
    rows = [(ids["sodium"], TODAY - timedelta(days=n), 100 + n) for n in range(1, 40)]
    rows.append((ids["sodium"], TODAY, 7))
    await db.executemany(
        "INSERT INTO mod_daily_stats (mod_id, day, servers, breakdown) VALUES ($1, $2, $3, $4::text::jsonb)",
        [(m, d, n, '{"loader": {"fabric": %d}}' % n) for m, d, n in rows])
    return ids


async def test_analytics_series_latest_breakdown_and_today_apart(api, mods):
    resp = await api.get("/api/v1/mods/sodium/analytics?range=7d")
    assert resp.status == 200
    body = await resp.json()
    assert body["range"] == "7d" and body["to"] == YESTERDAY.isoformat()
    assert [d["servers"] for d in body["days"]] == [107, 106, 105, 104, 103, 102, 101]
    assert body["latest"] == {"day": YESTERDAY.isoformat(), "servers": 101,
                              "breakdown": {"loader": {"fabric": 101}}}
    assert body["today"] == {"day": TODAY.isoformat(), "servers_so_far": 7}
    assert resp.headers["Cache-Control"] == "public, max-age=300"


async def test_default_range_is_30d_zero_filled(api, mods):
    body = await (await api.get("/api/v1/mods/lithium/analytics")).json()
    assert body["range"] == "30d" and len(body["days"]) == 30
    assert {d["servers"] for d in body["days"]} == {0}
    assert body["latest"]["servers"] == 0 and body["latest"]["breakdown"] == {}
    ninety = await (await api.get("/api/v1/mods/sodium/analytics?range=90d")).json()
    assert len(ninety["days"]) == 90 and ninety["days"][0]["servers"] == 0  # before the first ping


async def test_bad_range_unknown_and_unlisted_mods(api, mods):
    resp = await api.get("/api/v1/mods/sodium/analytics?range=1y")
    assert resp.status == 400 and "range" in (await resp.json())["description"]
    for slug in ("nope", "unlisted", "BAD!slug"):
        resp = await api.get(f"/api/v1/mods/{slug}/analytics")
        assert resp.status == 404 and (await resp.json())["error"] == "not_found"


async def test_analytics_are_cached_for_five_minutes(api, mods, db):
    first = await api.get("/api/v1/mods/sodium/analytics?range=7d")
    await db.execute("UPDATE mod_daily_stats SET servers = 1")
    second = await api.get("/api/v1/mods/sodium/analytics?range=7d")
    assert second.headers["X-Cache"] == "HIT"
    assert await first.json() == await second.json()
    etag = second.headers["ETag"]
    assert (await api.get("/api/v1/mods/sodium/analytics?range=7d",
                          headers={"If-None-Match": etag})).status == 304


def parse_svg(body: bytes) -> ET.Element:
    root = ET.fromstring(body)  # raises on anything that is not well-formed XML
    assert root.tag == f"{SVG_NS}svg" and float(root.get("width")) > 0
    return root


def texts(root: ET.Element) -> list[str]:
    return [t.text for t in root.iter(f"{SVG_NS}text")]


async def test_badge_is_valid_svg_with_yesterdays_count_and_cache_headers(api, mods):
    resp = await api.get("/api/v1/badges/sodium/servers.svg")
    assert resp.status == 200 and resp.content_type == "image/svg+xml"
    assert resp.headers["Cache-Control"] == "public, max-age=1800" and resp.headers["ETag"]
    root = parse_svg(await resp.read())
    assert texts(root) == ["servers", "servers", "101", "101"]
    assert root.find(f"{SVG_NS}title").text == "servers: 101"
    again = await api.get("/api/v1/badges/sodium/servers.svg", headers={"If-None-Match": resp.headers["ETag"]})
    assert again.status == 304


async def test_badge_label_is_escaped_and_unknown_mods_get_an_svg_404(api, mods):
    resp = await api.get("/api/v1/badges/sodium/servers.svg", params={"label": '<b>"&\'x'})
    root = parse_svg(await resp.read())
    assert texts(root)[0] == '<b>"&\'x'
    resp = await api.get("/api/v1/badges/nope/servers.svg")
    assert resp.status == 404 and resp.content_type == "image/svg+xml"
    assert "unknown mod" in texts(parse_svg(await resp.read()))
    resp = await api.get("/api/v1/badges/lithium/servers.svg")  # listed, no servers yet
    assert texts(parse_svg(await resp.read()))[2] == "0"


async def test_routes_are_in_the_openapi_document(api):
    doc = await (await api.get("/api/v1/openapi.json")).json()
    assert "/api/v1/mods/{slug}/analytics" in doc["paths"] and "/api/v1/badges/{slug}/servers.svg" in doc["paths"]
