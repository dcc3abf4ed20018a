"""The Modrinth-v2-compatible surface: every route's answer validated against Modrinth's own
OpenAPI document (tests/conftest.py ModrinthSchema), per-file facets, no downgrades, visibility,
error shape, rate-limit and CORS headers, forge_updates.json, and the mod's own version."""

from __future__ import annotations

import json

import pytest

from indexium_content.categories import CATEGORIES
from indexium_api.core.state import API

FABRIC_120 = ["fabric"], ["1.20.1"]
FORGE_119 = ["forge"], ["1.19.2"]


def record(mod_id: str, version: str | None, loader: str = "fabric", deps=(), nested=()) -> dict:
    out = {"loader": loader, "manifest_path": "fabric.mod.json", "mod_id": mod_id, "version": version}
    if deps:
        out["dependencies"] = [{"mod_id": d, "kind": k} for d, k in deps]
    if nested:
        out["nested_jars"] = list(nested)
    return out


@pytest.fixture
async def catalogue(seed):
    """sodium (two loaders on two files, depends on 'fabric-api'), fabric-api, and a mod whose
    only version is quarantined."""
    api = await seed.mod("fabric-api", name="Fabric API", categories=["library"])
    await seed.version(api, "0.90.0", [(*FABRIC_120, seed.hashes(10))], manifests=[[record("fabric-api", "0.90.0")]])
    sodium = await seed.mod("sodium", name="Sodium", summary="Fast rendering", categories=["optimization"],
                            environment="client")
    await seed.icon(sodium)
    v1 = await seed.version(sodium, "mc1.20.1-0.5.3", [(*FABRIC_120, seed.hashes(1)), (*FORGE_119, seed.hashes(2))],
                            published=seed.T0,
                            manifests=[[record("sodium", "0.5.3", deps=[("fabric-api", "required"),
                                                                           ("minecraft", "required")],
                                               nested=["META-INF/jars/lib-1.0.jar"])],
                                       [record("sodium", "0.5.3-forge", loader="forge")]])
    hidden = await seed.mod("shady")
    bad = await seed.version(hidden, "1.0", [(*FABRIC_120, seed.hashes(3))])
    await seed.set_status(hidden, bad, "quarantined")
    return {"sodium": sodium, "api": api, "sodium_v1": v1}


async def get(client, path, **params):
    resp = await client.get(path, params=params)
    return resp.status, await resp.json(), resp


async def test_every_get_route_validates_against_modrinths_document(client, catalogue, modrinth_schema):
    status, body, resp = await get(client, "/v2/search", query="sodium")
    assert status == 200
    modrinth_schema.check(body, "/search")
    hit = body["hits"][0]
    assert hit["slug"] == "sodium" and hit["title"] == "Sodium" and len(hit["project_id"]) == 8
    assert {"fabric", "forge", "optimization"} <= set(hit["categories"]) == set(hit["display_categories"])
    assert hit["icon_url"].endswith("/api/v1/mods/sodium/icon") and hit["icon_url"].startswith("http://")
    assert hit["client_side"] == "required" and hit["server_side"] == "unsupported"
    pid = hit["project_id"]

    for key in (pid, "sodium"):
        status, project, _ = await get(client, f"/v2/project/{key}")
        assert status == 200, key
        modrinth_schema.check(project, "/project/{id|slug}")
        assert project["id"] == pid and project["slug"] == "sodium" and project["license"]["id"] == "MIT"
        assert project["source_url"] == "https://github.com/owner/sodium"
        status, check, _ = await get(client, f"/v2/project/{key}/check")
        assert status == 200 and check == {"id": pid}
        modrinth_schema.check(check, "/project/{id|slug}/check")

    status, projects, _ = await get(client, "/v2/projects", ids=json.dumps([pid, "fabric-api", "shady", "nope"]))
    assert status == 200 and [p["slug"] for p in projects] == ["sodium", "fabric-api"]
    modrinth_schema.check(projects, "/projects")

    status, versions, _ = await get(client, "/v2/project/sodium/version")
    assert status == 200 and len(versions) == 1
    modrinth_schema.check(versions, "/project/{id|slug}/version")
    v = versions[0]
    assert v["version_number"] == "mc1.20.1-0.5.3" and v["project_id"] == pid and v["changelog"] == "changes"
    assert {f["hashes"]["sha1"] for f in v["files"]} == {seed_sha1(1), seed_sha1(2)}
    deps = {(d["project_id"], d["file_name"], d["dependency_type"]) for d in v["dependencies"]}
    api_id = projects[1]["id"]
    assert deps == {(api_id, None, "required"), (None, "lib-1.0.jar", "embedded")}  # 'minecraft' is the platform

    for path in (f"/v2/version/{v['id']}", f"/v2/project/sodium/version/{v['id']}",
                 f"/v2/project/{pid}/version/mc1.20.1-0.5.3"):
        status, one, _ = await get(client, path)
        assert status == 200 and one["id"] == v["id"], path
        modrinth_schema.check(one, "/version/{id}")
    status, many, _ = await get(client, "/v2/versions", ids=json.dumps([v["id"], "ZZZZZZZZ"]))
    assert status == 200 and [x["id"] for x in many] == [v["id"]]
    modrinth_schema.check(many, "/versions")

    status, deps_body, _ = await get(client, "/v2/project/sodium/dependencies")
    assert status == 200
    modrinth_schema.check(deps_body, "/project/{id|slug}/dependencies")
    assert [p["slug"] for p in deps_body["projects"]] == ["fabric-api"]
    assert [x["version_number"] for x in deps_body["versions"]] == ["0.90.0"]

    status, by_hash, _ = await get(client, f"/v2/version_file/{seed_sha1(1)}")
    assert status == 200 and by_hash["id"] == v["id"]
    modrinth_schema.check(by_hash, "/version_file/{hash}")
    status, by_hash, _ = await get(client, f"/v2/version_file/{seed_sha512(2)}", algorithm="sha512", multiple="true")
    assert status == 200 and [x["id"] for x in by_hash] == [v["id"]]
    modrinth_schema.validate(by_hash, {"type": "array", "items": {"$ref": "#/components/schemas/Version"}})

    for tag, path in (("game_version", "/tag/game_version"), ("loader", "/tag/loader"), ("category", "/tag/category"),
                      ("license", "/tag/license"), ("project_type", "/tag/project_type"),
                      ("side_type", "/tag/side_type")):
        status, body, _ = await get(client, f"/v2/tag/{tag}")
        assert status == 200 and body, tag
        modrinth_schema.check(body, path)
    status, loaders, _ = await get(client, "/v2/tag/loader")
    assert {"fabric", "forge", "neoforge", "quilt"} <= {x["name"] for x in loaders}
    status, gvs, _ = await get(client, "/v2/tag/game_version")
    assert any(g["version"] == "1.20.1" and g["version_type"] == "release" for g in gvs)
    assert any(g["version"] == "1.20" and g["major"] for g in gvs)
    status, cats, _ = await get(client, "/v2/tag/category")
    # The vocabulary, as Modrinth's: never a topic an author typed, never a loader.
    assert [c["name"] for c in cats] == list(CATEGORIES) and {c["header"] for c in cats} == {"categories"}


async def test_every_tag_route_of_modrinths_document_is_served(client, catalogue, modrinth_schema):
    """Every /tag/ path of Modrinth's document answers as the document shapes it (an unmodified
    client asks for donation platforms first), and our own OpenAPI document lists each."""
    tag_paths = [p for p in modrinth_schema.doc["paths"] if p.startswith("/tag/")]
    assert {"/tag/donation_platform", "/tag/report_type", "/tag/license/{id}"} <= set(tag_paths)
    ours = (await (await client.get("/openapi.json")).json())["paths"]
    for path in tag_paths:
        concrete = path.replace("{id}", "MIT")
        status, body, _ = await get(client, f"/v2{concrete}")
        assert status == 200, path
        modrinth_schema.check(body, path)
        assert f"/v2{path}" in ours, path
    # Nothing to name: projects here carry no donation links, and nothing takes a report.
    assert (await get(client, "/v2/tag/donation_platform"))[1] == []
    assert (await get(client, "/v2/tag/report_type"))[1] == []
    assert (await get(client, "/v2/project/sodium"))[1]["donation_urls"] == []

    # A license's title, and where its text is: we ship no license texts.
    status, mit, _ = await get(client, "/v2/tag/license/MIT")
    assert mit["title"] == "MIT License" and mit["body"].endswith("https://spdx.org/licenses/MIT.html")
    assert "does not ship license texts" in mit["body"]
    status, gpl, _ = await get(client, "/v2/tag/license/gpl-3.0")  # a deprecated short form, any case (SPDX's rule)
    assert status == 200 and gpl["title"] == "GNU General Public License v3.0 only"
    assert gpl["body"].endswith("https://spdx.org/licenses/GPL-3.0-only.html")
    for ref in ("LicenseRef-All-Rights-Reserved", "LicenseRef-Unknown"):  # the two ids we give every mod alike
        status, body, _ = await get(client, f"/v2/tag/license/{ref}")
        assert status == 200 and body["title"] in ("All Rights Reserved", "Unknown") and body["body"], ref
        modrinth_schema.check(body, "/tag/license/{id}")
    for unknown in ("EPL-2.0", "LicenseRef-My-Own"):  # an id we do not name (a real SPDX one, too) is not here
        status, body, _ = await get(client, f"/v2/tag/license/{unknown}")
        assert status == 404 and body["error"] == "not_found", unknown
        modrinth_schema.validate(body, "InvalidInputError")
    status, body, _ = await get(client, f"/v2/tag/license/{'x' * 65}")
    assert status == 400 and body["error"] == "invalid_parameter"


def seed_sha1(n: int) -> str:
    return f"{n:040x}"


def seed_sha512(n: int) -> str:
    return f"{n:0128x}"


async def test_post_routes_validate_and_never_downgrade(client, seed, modrinth_schema):
    m = await seed.mod("lines")
    # 2.0.0 first, then a 1.5.0 hotfix of the old line published later: never offered to a 2.0.0 user.
    await seed.version(m, "1.0.0", [(*FABRIC_120, seed.hashes(1))], published=seed.T0)
    await seed.version(m, "2.0.0", [(*FABRIC_120, seed.hashes(2))], published=seed.T0 + seed.days(2))
    await seed.version(m, "1.5.0", [(*FABRIC_120, seed.hashes(3))], published=seed.T0 + seed.days(3))
    await seed.version(m, "2.1.0", [(*FORGE_119, seed.hashes(4))], published=seed.T0 + seed.days(4))
    h1, h2 = seed_sha1(1), seed_sha1(2)

    resp = await client.post("/v2/version_files", json={"hashes": [h1, h2, "f" * 40], "algorithm": "sha1"})
    body = await resp.json()
    assert resp.status == 200 and {h: v["version_number"] for h, v in body.items()} == {h1: "1.0.0", h2: "2.0.0"}
    modrinth_schema.check(body, "/version_files", "post")

    # fabric + 1.20.1: 2.1.0 is forge-only, so 2.0.0 is the answer for both; 1.5.0 never.
    req = {"hashes": [h1, h2], "algorithm": "sha1", "loaders": ["fabric"], "game_versions": ["1.20.1"]}
    resp = await client.post("/v2/version_files/update", json=req)
    body = await resp.json()
    assert resp.status == 200 and {h: v["version_number"] for h, v in body.items()} == {h1: "2.0.0", h2: "2.0.0"}
    modrinth_schema.check(body, "/version_files/update", "post")
    # Empty lists mean any (what @xmcl/modrinth sends): 2.1.0.
    resp = await client.post("/v2/version_files/update", json={"hashes": [h2], "loaders": [], "game_versions": []})
    assert {h: v["version_number"] for h, v in (await resp.json()).items()} == {h2: "2.1.0"}

    resp = await client.post(f"/v2/version_file/{h2}/update", params={"algorithm": "sha1"},
                             json={"loaders": ["fabric"], "game_versions": ["1.20.1"]})
    one = await resp.json()
    assert resp.status == 200 and one["version_number"] == "2.0.0"
    modrinth_schema.check(one, "/version_file/{hash}/update", "post")
    resp = await client.post(f"/v2/version_file/{h2}/update", json={"loaders": ["quilt"], "game_versions": []})
    assert resp.status == 404 and set(await resp.json()) == {"error", "description"}

    resp = await client.post("/v2/version_files/update_many", json={"hashes": [h1, h2], "loaders": ["fabric"],
                                                                     "game_versions": ["1.20.1"]})
    many = await resp.json()
    assert resp.status == 200
    assert {h: [v["version_number"] for v in vs] for h, vs in many.items()} == {
        h1: ["2.0.0", "1.5.0", "1.0.0"], h2: ["2.0.0"]}
    for versions in many.values():
        modrinth_schema.validate(versions, {"type": "array", "items": {"$ref": "#/components/schemas/Version"}})

    resp = await client.get(f"/v2/version_file/{h1}/download", allow_redirects=False)
    assert resp.status == 302 and resp.headers["Location"].startswith("https://github.com/")


async def test_facets_hold_per_file(client, seed, modrinth_schema):
    split = await seed.mod("split")  # fabric on 1.20.1 and forge on 1.19.2: no file is forge + 1.20.1
    await seed.version(split, "1.0", [FABRIC_120, FORGE_119])
    both = await seed.mod("both")
    await seed.version(both, "1.0", [(["forge"], ["1.20.1"])])

    async def slugs(facets) -> list[str]:
        status, body, _ = await get(client, "/v2/search", facets=json.dumps(facets), index="newest")
        assert status == 200, body
        modrinth_schema.check(body, "/search")
        return sorted(h["slug"] for h in body["hits"])

    assert await slugs([["categories:forge"], ["versions:1.20.1"]]) == ["both"]
    assert await slugs([["categories:fabric"], ["versions:1.19.2"]]) == []
    assert await slugs([["categories:fabric"], ["versions:1.20.1"]]) == ["split"]
    assert await slugs([["categories:forge", "categories:fabric"], ["versions:1.19.2"]]) == ["split"]
    assert await slugs([["project_type:mod"], ["versions:1.20.1"]]) == ["both", "split"]
    assert await slugs([["versions!=1.19.2"]]) == ["both"]
    assert await slugs([["title:Split"]]) == ["split"]
    assert await slugs([["license:mit"], ["downloads>=1"]]) == ["both", "split"]
    assert await slugs([["client_side:required"]]) == ["both", "split"]
    assert await slugs([["server_side:unsupported"]]) == []


async def test_search_parameters(client, seed):
    for i in range(3):
        m = await seed.mod(f"mod{i}")
        await seed.version(m, "1.0", [FABRIC_120], published=seed.T0 + seed.days(i))
    status, body, _ = await get(client, "/v2/search")
    assert status == 200 and body["limit"] == 10 and body["total_hits"] == 3 and body["offset"] == 0
    status, body, _ = await get(client, "/v2/search", limit="0")
    assert status == 200 and body["hits"] == [] and body["total_hits"] == 3
    # With a query, only the count: the text's matches, not every mod the filters pass.
    status, body, _ = await get(client, "/v2/search", query="mod1", limit="0")
    assert status == 200 and body["hits"] == [] and body["total_hits"] == 1
    status, body, _ = await get(client, "/v2/search", query="zzzznotthere", limit="0")
    assert status == 200 and body["hits"] == [] and body["total_hits"] == 0
    status, body, _ = await get(client, "/v2/search", index="newest", limit="2", offset="1")
    assert [h["slug"] for h in body["hits"]] == ["mod1", "mod0"] and body["total_hits"] == 3
    status, body, _ = await get(client, "/v2/search", query="", filter="")  # what @xmcl/modrinth sends
    assert status == 200 and body["total_hits"] == 3
    for params, name in [({"limit": "101"}, "limit"), ({"index": "stars"}, "index"), ({"facets": "[[1]]"}, "facets"),
                         ({"facets": '[["colour:red"]]'}, "facets"), ({"facets": '[["versions>1.20"]]'}, "facets"),
                         ({"facets": "nope"}, "facets"), ({"offset": "-1"}, "offset")]:
        status, body, _ = await get(client, "/v2/search", **params)
        assert status == 400 and set(body) == {"error", "description"} and f"'{name}'" in body["description"], params


async def test_a_search_parsed_once_per_surface_answers_each_surface_its_own_way(client, seed):
    """Searches are parsed once per raw query string; /v2 and /api/v1 read the same string
    differently (limit defaults, 'limit=0'), so a remembered parse never crosses surfaces, and a
    bad one is refused every time."""
    for i in range(3):
        m = await seed.mod(f"mod{i}")
        await seed.version(m, "1.0", [FABRIC_120], published=seed.T0 + seed.days(i))
    for _ in range(2):
        status, v2, _ = await get(client, "/v2/search")
        assert status == 200 and v2["limit"] == 10 and len(v2["hits"]) == 3
        status, v1, _ = await get(client, "/api/v1/mods")
        assert status == 200 and "total_hits" not in v1
        status, body, _ = await get(client, "/v2/search", limit="0")
        assert status == 200 and body["hits"] == [] and body["total_hits"] == 3
        status, body, _ = await get(client, "/api/v1/mods", limit="0")  # /api/v1 pages hold at least 1
        assert status == 400 and "'limit'" in body["description"]
        for _ in range(2):
            status, body, _ = await get(client, "/v2/search", limit="101")
            assert status == 400 and "'limit'" in body["description"]


async def test_hidden_things_do_not_exist(client, catalogue, seed):
    assert (await get(client, "/v2/project/shady"))[0] == 404
    status, body, _ = await get(client, "/v2/project/shady/version")
    assert status == 404 and set(body) == {"error", "description"}
    assert (await get(client, f"/v2/version_file/{seed_sha1(3)}"))[0] == 404
    status, body, _ = await get(client, "/v2/search", query="shady")
    assert body["total_hits"] == 0
    # A quarantined version of a listed mod is absent from its list and by id.
    bad = await seed.version(catalogue["sodium"], "0.6.0", [(*FABRIC_120, seed.hashes(7))])
    vid = await seed.db.fetchval("SELECT public_id FROM mod_versions WHERE id = $1", bad)
    await seed.set_status(catalogue["sodium"], bad, "quarantined")
    assert (await get(client, f"/v2/version/{vid}"))[0] == 404
    status, body, _ = await get(client, "/v2/project/sodium/version", include_changelog="false")
    assert [v["version_number"] for v in body] == ["mc1.20.1-0.5.3"] and body[0]["changelog"] is None
    for bad_path in ("/v2/project/a%20b", "/v2/project/x/version", "/v2/version/!!"):
        status, body, _ = await get(client, bad_path)
        assert status == 404 and set(body) == {"error", "description"}, bad_path


async def test_a_version_is_served_on_v2_only_once_every_file_has_its_hashes(client, seed, modrinth_schema):
    """INDEXIUM_PUBLISH_BEFORE_SCAN=true: a version is public before the scan stage hashed its
    files. Modrinth's clients index installed files by sha1/sha512, so /v2 serves it only once
    they are known; /api/v1 shows it at once, its hashes null."""
    m = await seed.mod("early")
    await seed.version(m, "1.0.0", [(*FABRIC_120, seed.hashes(1))], published=seed.T0)
    # 2.0.0: two files, published before the scan; one of them happens to be hashed already.
    early = await seed.version(m, "2.0.0", [(*FABRIC_120, seed.hashes(2)), FORGE_119],
                               published=seed.T0 + seed.days(1), scanned=False)
    early_id = await seed.db.fetchval("SELECT public_id FROM mod_versions WHERE id = $1", early)
    h1, h2 = seed_sha1(1), seed_sha1(2)

    async def v2_numbers() -> dict:
        project = (await get(client, "/v2/project/early"))[1]
        listed = (await get(client, "/v2/project/early/version"))[1]
        for v in listed:
            modrinth_schema.validate(v, "Version")
            assert all(f["hashes"].get("sha1") and f["hashes"].get("sha512") for f in v["files"]), v
        return {"project.versions": len(project["versions"]), "list": [v["version_number"] for v in listed],
                "by id": (await get(client, f"/v2/version/{early_id}"))[0],
                "by number": (await get(client, "/v2/project/early/version/2.0.0"))[0],
                "by hash": (await get(client, f"/v2/version_file/{h2}"))[0],
                "download": (await client.get(f"/v2/version_file/{h2}/download", allow_redirects=False)).status}

    async def v2_update() -> str | None:
        resp = await client.post("/v2/version_files/update", json={"hashes": [h1], "loaders": ["fabric"]})
        return ((await resp.json()).get(h1) or {}).get("version_number")

    assert await v2_numbers() == {"project.versions": 1, "list": ["1.0.0"], "by id": 404, "by number": 404,
                                  "by hash": 404, "download": 404}
    assert await v2_update() == "1.0.0"  # nothing newer is served yet
    # /api/v1 has it at once (its files' hashes are null until the scan).
    v1 = await (await client.get("/api/v1/mods/early/versions")).json()
    assert [v["version_number"] for v in v1] == ["2.0.0", "1.0.0"]
    assert {f["hashes"]["sha1"] for f in v1[0]["files"]} == {h2, None}
    resp = await client.post("/api/v1/versions/update-check", json={"hashes": [h1], "loaders": ["fabric"]})
    assert (await resp.json())[h1]["version_number"] == "2.0.0"

    # The scan stage writes the hashes (and publishes version_scanned.v1, which drops the cache).
    for fid in await seed.db.fetchval("SELECT array_agg(id) FROM version_files WHERE version_id = $1 "
                                      "AND sha1 IS NULL", early):
        await seed.db.execute("UPDATE version_files SET sha1 = $2, sha256 = $3, sha512 = $4 WHERE id = $1",
                              fid, *seed.hashes(9).values())
    client.app[API].cache.invalidate_all()
    assert await v2_numbers() == {"project.versions": 2, "list": ["2.0.0", "1.0.0"], "by id": 200,
                                  "by number": 200, "by hash": 200, "download": 302}
    assert await v2_update() == "2.0.0"


async def test_versions_filters_hold_per_file(client, seed):
    m = await seed.mod("filtered")
    await seed.version(m, "1.0", [FABRIC_120, FORGE_119], published=seed.T0)
    await seed.version(m, "2.0", [(["forge"], ["1.20.1"])], published=seed.T0 + seed.days(1))

    async def numbers(**params):
        status, body, _ = await get(client, "/v2/project/filtered/version", **params)
        assert status == 200, body
        return [v["version_number"] for v in body]

    assert await numbers() == ["2.0", "1.0"]
    assert await numbers(loaders='["forge"]', game_versions='["1.20.1"]') == ["2.0"]
    assert await numbers(loaders='["fabric"]', game_versions='["1.19.2"]') == []
    assert await numbers(loaders='["fabric"]') == ["1.0"]
    assert await numbers(featured="true") == []
    status, body, _ = await get(client, "/v2/project/filtered/version", loaders="fabric")
    assert status == 400 and "'loaders'" in body["description"]


async def test_ids_are_stable_base62_and_never_a_slug(client, seed, db):
    m = await seed.mod("stable")
    vid = await seed.version(m, "1.0", [FABRIC_120])
    pid, team = await db.fetchval("SELECT public_id FROM mods WHERE id = $1", m["id"]), None
    row = await db.fetchrow("SELECT public_id, team_id FROM mods WHERE id = $1", m["id"])
    assert row["public_id"] == pid and len(pid) == 8 and pid.isalnum() and pid.lower() != pid
    first = await db.fetchval("SELECT public_id FROM mod_versions WHERE id = $1", vid)
    await seed.version(m, "1.0", [FABRIC_120])  # re-indexing the same release keeps the id
    assert await db.fetchval("SELECT public_id FROM mod_versions WHERE id = $1", vid) == first
    with pytest.raises(Exception, match="never change"):
        await db.execute("UPDATE mods SET public_id = 'AAAAAAAA' WHERE id = $1", m["id"])
    status, body, _ = await get(client, f"/v2/project/{pid}")
    assert status == 200 and body["team"] == row["team_id"] and body["versions"] == [first]


async def test_headers_errors_and_cors(make_client, seed):
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="100")
    m = await seed.mod("headed")
    await seed.version(m, "1.0", [FABRIC_120])
    for path in ("/v2/search", "/v2/project/headed", "/v2/project/missing", "/v2/tag/loader", "/v2/nothing",
                 "/updates/headed/forge_updates.json"):
        resp = await client.get(path)
        assert resp.headers["Access-Control-Allow-Origin"] == "*", path
        for h in ("X-Ratelimit-Limit", "X-Ratelimit-Remaining", "X-Ratelimit-Reset"):
            assert h in resp.headers, (path, h)
        if resp.status >= 400:
            assert set(await resp.json()) == {"error", "description"}, path
    resp = await client.post("/v2/version_files", data=b"{nope")
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_body"
    resp = await client.post("/v2/version_files", json={"hashes": ["abc"]})
    assert resp.status == 400 and "'hashes'" in (await resp.json())["description"]


async def test_forge_updates_promote_the_manifest_version(client, seed, modrinth_schema):
    m = await seed.mod("forgey")
    await seed.version(m, "v1.0.0", [(["forge"], ["1.20.1"])], published=seed.T0, changelog="first",
                       manifests=[[record("forgey", "0.9.1", loader="forge")]])
    await seed.version(m, "v1.1.0-beta", [(["forge"], ["1.20.1"])], published=seed.T0 + seed.days(1),
                       version_type="beta", changelog="beta", manifests=[[record("forgey", "1.1.0b", loader="forge")]])
    await seed.version(m, "v2.0.0", [(["neoforge"], ["1.21.1"])], published=seed.T0 + seed.days(2),
                       manifests=[[record("forgey", "2.0.0", loader="neoforge")]])
    status, body, _ = await get(client, "/updates/forgey/forge_updates.json")
    assert status == 200
    modrinth_schema.check(body, "/updates/{id|slug}/forge_updates.json")
    assert body["promos"] == {"1.20.1-latest": "1.1.0b", "1.20.1-recommended": "0.9.1"}
    assert body["1.20.1"] == {"1.1.0b": "beta", "0.9.1": "first"}
    assert body["homepage"] == "https://github.com/owner/forgey"
    status, body, _ = await get(client, "/updates/forgey/forge_updates.json", neoforge="include")
    assert body["promos"]["1.21.1-latest"] == "2.0.0" and "1.20.1-latest" in body["promos"]
    status, body, _ = await get(client, "/updates/forgey/forge_updates.json", neoforge="only")
    assert set(body["promos"]) == {"1.21.1-latest", "1.21.1-recommended"}
    assert (await get(client, "/updates/nobody/forge_updates.json"))[0] == 404


async def test_the_mods_own_version_per_file_on_v1(client, seed):
    m = await seed.mod("own")
    await seed.version(m, "v1.0.0", [FABRIC_120], manifests=[[record("own", "0.9.1")]])
    status, body, _ = await get(client, "/api/v1/mods/own/versions")
    assert status == 200 and body[0]["version_number"] == "v1.0.0"
    assert body[0]["files"][0]["mod_id"] == "own" and body[0]["files"][0]["mod_version"] == "0.9.1"
    status, card, _ = await get(client, "/api/v1/mods/own")
    assert card["latest_version"] == "v1.0.0" and card["latest_mod_version"] == "0.9.1"


async def test_absolute_urls_come_from_the_public_url_never_from_the_host_header(make_client, catalogue, seed):
    await seed.icon(catalogue["api"])  # so that sodium's dependencies carry an icon URL too
    client = await make_client(INDEXIUM_PUBLIC_URL="https://mods.example.org/")
    api = client.app[API]
    icon = "https://mods.example.org/api/v1/mods/sodium/icon"
    paths = [("/v2/search", {"query": "sodium"}), ("/v2/project/sodium", {}),
             ("/v2/projects", {"ids": '["sodium"]'}), ("/v2/project/sodium/dependencies", {})]
    # Hostile hosts first, so that any of them would be what the cache holds; then the real one.
    for host in ("evil.example", "evil.example:8443", "127.0.0.1", "mods.example.org"):
        for path, query in paths:
            resp = await client.get(path, params=query, headers={"Host": host, "X-Forwarded-Proto": "http"})
            text = await resp.text()
            assert resp.status == 200 and "evil" not in text and "http://" not in text, (host, path)
        assert len(api.cache) == len(paths)  # one entry per answer, whatever the Host said
    hit = (await (await client.get("/v2/search", params={"query": "sodium"})).json())["hits"][0]
    assert hit["icon_url"] == icon
    assert (await (await client.get("/v2/project/sodium")).json())["icon_url"] == icon
    deps = await (await client.get("/v2/project/sodium/dependencies")).json()
    assert [p["icon_url"] for p in deps["projects"]] == ["https://mods.example.org/api/v1/mods/fabric-api/icon"]


async def test_bulk_gets_take_a_thousand_ids_and_a_longer_line_is_the_envelope(client, catalogue):
    """Launchers ask for a modpack's projects and versions in one GET: 1,000 ids pass (aiohttp's
    own 8,190-byte request line refused ~480 of them with a text/plain 400); past the platform's
    line limit the answer is a 414 envelope; past 1,000 ids a 400 naming the parameter."""
    _, sodium, _ = await get(client, "/v2/project/sodium")
    _, versions, _ = await get(client, "/v2/project/sodium/version")
    for path, real in (("/v2/projects", sodium["id"]), ("/v2/versions", versions[0]["id"])):
        ids = [f"Z{i:07d}" for i in range(999)] + [real]
        status, body, _ = await get(client, path, ids=json.dumps(ids))
        assert status == 200 and [x["id"] for x in body] == [real], path
        status, body, _ = await get(client, path, ids=json.dumps(ids + ["Zextra00"]))
        assert status == 400 and "ids" in body["description"], path
        slugs = [f"{i:064d}" for i in range(1000)]  # the longest keys there are
        assert (await get(client, path, ids=json.dumps(slugs)))[0] == 200
    resp = await client.get("/v2/projects", params={"ids": json.dumps(["x" * 64] * 1200)})
    assert resp.status == 414 and (await resp.json())["error"] == "uri_too_long"
