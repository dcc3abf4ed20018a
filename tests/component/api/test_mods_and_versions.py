"""Mod cards, version lists (order, per-file filters), single versions, icons and tags."""

FABRIC_120 = (["fabric"], ["1.20.1"])


async def test_mod_card(client, seed, db):
    m = await seed.mod("sodium", name="Sodium", summary="Fast", description="Fast\n\nMore.", authors=["Jelly"],
                       owner="caffeine", categories=["optimization"], environment="client")
    await seed.version(m, "0.5.3", [FABRIC_120])
    await seed.icon(m)
    await db.execute("INSERT INTO mod_daily_stats (mod_id, day, servers) VALUES "
                     "($1, (now() AT TIME ZONE 'UTC')::date - 1, 42)", m["id"])
    resp = await client.get("/api/v1/mods/sodium")
    assert resp.status == 200
    card = await resp.json()
    assert card["name"] == "Sodium" and card["description"] == "Fast\n\nMore." and card["owner"] == "caffeine"
    assert card["environment"] == "client" and card["categories"] == ["optimization"]
    assert card["latest_version"] == "0.5.3" and card["repository"] == "caffeine/sodium"
    assert card["icon_url"] == "/api/v1/mods/sodium/icon" and card["active_servers"] == 42
    assert card["links"] == {"sources": "https://example.org"} and card["licenses"] == ["MIT"]


async def test_unknown_and_malformed_slugs_are_404(client, seed):
    pending = await seed.mod("pending")
    await seed.version(pending, "1.0", [FABRIC_120], status="pending_scan")
    for path in ("/api/v1/mods/nope", "/api/v1/mods/pending", "/api/v1/mods/Bad%20Slug",
                 "/api/v1/mods/" + "x" * 300, "/api/v1/mods/nope/versions", "/api/v1/mods/nope/versions/1.0",
                 "/api/v1/mods/nope/icon", "/api/v1/mods/pending/versions"):
        resp = await client.get(path)
        assert resp.status == 404, path
        assert (await resp.json())["error"] == "not_found"


async def test_versions_newest_first_by_version_order_then_publish_time(client, seed):
    m = await seed.mod("ordered")
    # Published out of order on purpose: a 1.9 hotfix after 2.0, a beta after the release.
    for number, day in [("1.0", 0), ("2.0", 5), ("1.9", 8), ("1.10", 3), ("2.0-beta.2", 9), ("2.0-beta.10", 10),
                        ("v2.1", 1), ("2.1+mc1.19.2", 2), ("2.1+mc1.20.1", 4)]:
        await seed.version(m, number, [FABRIC_120], published=seed.T0 + seed.days(day), scanned=False)
    body = await (await client.get("/api/v1/mods/ordered/versions")).json()
    assert [v["version_number"] for v in body] == [
        "2.1+mc1.20.1", "2.1+mc1.19.2", "v2.1",  # same version order: newest publish first
        "2.0", "2.0-beta.10", "2.0-beta.2", "1.10", "1.9", "1.0"]
    v = body[0]
    assert v["mod"] == "ordered" and v["version_type"] == "release" and v["downloads"] == 5
    assert v["files"][0]["primary"] is True and v["files"][0]["hashes"] == {"sha1": None, "sha256": None,
                                                                             "sha512": None}
    assert (await (await client.get("/api/v1/mods/ordered")).json())["latest_version"] is not None


async def test_version_filters_hold_per_file_and_hide_non_public(client, seed):
    m = await seed.mod("multi")
    await seed.version(m, "1.0", [(["forge"], ["1.19.2"]), (["fabric"], ["1.20.1"])])
    await seed.version(m, "1.1", [(["forge"], ["1.20.1"])], version_type="beta")
    await seed.version(m, "1.2", [(["forge"], ["1.20.1"])], status="pending_scan")
    hidden = await seed.version(m, "1.3", [(["forge"], ["1.20.1"])])
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", hidden)

    async def numbers(params):
        resp = await client.get("/api/v1/mods/multi/versions", params=params)
        assert resp.status == 200
        return [v["version_number"] for v in await resp.json()]

    assert await numbers({}) == ["1.1", "1.0"]
    assert await numbers({"game_version": "1.20.1", "loader": "forge"}) == ["1.1"]
    assert await numbers({"game_version": "1.19.2", "loader": "forge"}) == ["1.0"]
    assert await numbers({"game_version": "1.19.2", "loader": "fabric"}) == []
    assert await numbers({"version_type": "release"}) == ["1.0"]
    assert await numbers([("version_type", "release"), ("version_type", "beta")]) == ["1.1", "1.0"]
    resp = await client.get("/api/v1/mods/multi/versions", params={"version_type": "nightly"})
    assert resp.status == 400 and "'version_type'" in (await resp.json())["description"]


async def test_single_version(client, seed):
    m = await seed.mod("one")
    await seed.version(m, "1.0", [FABRIC_120])
    await seed.version(m, "release/2.0", [FABRIC_120])
    await seed.version(m, "3.0", [FABRIC_120], status="quarantined")
    resp = await client.get("/api/v1/mods/one/versions/1.0")
    assert resp.status == 200 and (await resp.json())["version_number"] == "1.0"
    resp = await client.get("/api/v1/mods/one/versions/release/2.0")
    assert resp.status == 200 and (await resp.json())["version_number"] == "release/2.0"
    for number in ("3.0", "9.9"):
        resp = await client.get(f"/api/v1/mods/one/versions/{number}")
        assert resp.status == 404 and "no public version" in (await resp.json())["description"]


async def test_icon_with_etag(client, seed):
    m = await seed.mod("pretty")
    await seed.version(m, "1.0", [FABRIC_120])
    await seed.icon(m, b"\x89PNG\r\n\x1a\nbytes")
    resp = await client.get("/api/v1/mods/pretty/icon")
    assert resp.status == 200 and resp.content_type == "image/png" and await resp.read() == b"\x89PNG\r\n\x1a\nbytes"
    assert resp.headers["ETag"] == '"icon-etag"' and "max-age=3600" in resp.headers["Cache-Control"]
    again = await client.get("/api/v1/mods/pretty/icon", headers={"If-None-Match": '"icon-etag"'})
    assert again.status == 304


async def test_tags(client):
    loaders = await (await client.get("/api/v1/tags/loaders")).json()
    assert {"name": "fabric", "project_types": ["mod", "modpack"]} in loaders
    assert {"name": "neoforge", "project_types": ["mod", "modpack"]} in loaders
    versions = await (await client.get("/api/v1/tags/game-versions")).json()
    by_id = {v["version"]: v for v in versions}
    assert by_id["1.20.1"]["version_type"] == "release" and by_id["1.20.1"]["date"].startswith("2023-06")
    assert any(v["version_type"] == "snapshot" for v in versions)
    assert versions[0]["date"] >= versions[-1]["date"]  # newest first
