"""Tools for players over HTTP: POST /api/v1/resolve, /api/v1/packs/export (mrpack, packwiz) and
POST /api/v1/upgrade-check, on a seeded database: answers, bad input as the 400 envelope, bounds,
and the rate limit on the new routes."""

from __future__ import annotations

import io
import json
import tomllib
import zipfile

import pytest

from indexium_api.core import packexport

pytestmark = pytest.mark.component
GAME = "1.21.4"


def rec(mod_id, version, *deps, loader="fabric", environment=None):
    r = {"loader": loader, "mod_id": mod_id, "version": version,
         "dependencies": [{"mod_id": d[0], "version_range": d[1], "kind": d[2] if len(d) > 2 else "required"}
                          for d in deps]}
    if environment:
        r["environment"] = environment
    return r


async def catalogue(seed):
    """app 1.0 needs lib >=1.0 and Fabric Loader >=0.16 (and flywheel, not indexed); lib has 1.1
    for 1.21.4 and 2.0 for 1.21.1 only; old has nothing for 1.21.4; shader is client-only."""
    app, lib, old, shader = (await seed.mod("app", name="App"), await seed.mod("lib", name="Lib"),
                             await seed.mod("old", name="Old Mod"), await seed.mod("shader", name="Shader"))
    await seed.version(app, "1.0", [(["fabric"], [GAME], seed.hashes(1))], manifests=[[rec(
        "app", "1.0", ("lib", ">=1.0"), ("fabricloader", ">=0.16"), ("flywheel", "[1.0,2.0)"))]])
    await seed.version(app, "0.9", [(["fabric"], ["1.21.1"], seed.hashes(2))], published=seed.T0 - seed.days(5),
                       manifests=[[rec("app", "0.9", ("lib", ">=2.0"))]])
    await seed.version(lib, "1.1", [(["fabric"], [GAME], seed.hashes(3))], manifests=[[rec("lib", "1.1")]])
    await seed.version(lib, "2.0", [(["fabric"], ["1.21.1"], seed.hashes(4))], published=seed.T0 + seed.days(1),
                       manifests=[[rec("lib", "2.0")]])
    await seed.version(old, "0.15", [(["fabric"], ["1.21.1", "1.21"], seed.hashes(5))], manifests=[[rec("old", "0.15")]])
    await seed.version(shader, "3.0", [(["fabric"], [GAME], seed.hashes(6))],
                       manifests=[[rec("shader", "3.0", environment="client")]])
    return app, lib, old, shader


async def post(client, path, body, status=200):
    resp = await client.post(path, json=body)
    assert resp.status == status, await resp.text()
    return resp


async def test_resolve_picks_one_file_per_mod_with_reasons_and_not_indexed(client, seed):
    await catalogue(seed)
    body = {"loader": "fabric", "game_version": GAME, "mods": ["app", seed.hashes(6)["sha1"]]}
    resp = await post(client, "/api/v1/resolve", body)
    assert resp.headers["Cache-Control"] == "no-store"
    answer = await resp.json()
    assert answer["ok"] is True and answer["problem"] is None
    mods = {m["mod_id"]: m for m in answer["mods"]}
    assert {k: m["version"] for k, m in mods.items()} == {"app": "1.0", "lib": "1.1", "shader": "3.0"}
    assert mods["lib"]["reasons"] == ["needed by App 1.0: lib >=1.0"] and not mods["lib"]["requested"]
    assert mods["app"]["requested"] and mods["app"]["file"]["sha1"] == seed.hashes(1)["sha1"]
    assert mods["app"]["file"]["url"].startswith("https://github.com/") and mods["app"]["slug"] == "app"
    assert answer["not_indexed"] == [{"mod_id": "flywheel", "range": "[1.0,2.0)", "needed_by": ["App 1.0"],
                                      "text": "not on Indexium: flywheel [1.0,2.0), needed by App 1.0"}]
    assert [p["text"] for p in answer["platform"]] == ["Fabric Loader 0.16 or newer"]
    again = await post(client, "/api/v1/resolve", {**body, "mods": list(reversed(body["mods"]))})
    assert await again.read() == await resp.read()  # deterministic, whatever the order asked in


async def test_resolve_without_a_solution_says_why(client, seed):
    await catalogue(seed)
    answer = await (await post(client, "/api/v1/resolve",
                               {"loader": "fabric", "game_version": GAME, "mods": ["old"]})).json()
    assert answer["ok"] is False and answer["mods"] == []
    assert answer["problem"] == "no version of Old Mod supports 1.21.4 on Fabric; its newest is 0.15 for 1.21.1, 1.21"
    answer = await (await post(client, "/api/v1/resolve",
                               {"loader": "fabric", "game_version": GAME, "mods": ["app", "nope", "f" * 40]})).json()
    assert answer["ok"] is False and answer["unknown"] == ["nope", "f" * 40]
    assert answer["problem"] == f"not on Indexium: nope, {'f' * 40}"


@pytest.mark.parametrize(("body", "code", "words"), [
    ({"loader": "fabric", "mods": ["app"]}, "invalid_body", "game_version"),
    ({"loader": "fabric", "game_version": GAME, "mods": "app"}, "invalid_body", "$.mods"),
    ({"loader": "fabric", "game_version": GAME, "mods": ["app"], "extra": 1}, "invalid_body", "extra"),
    ({"loader": "rift", "game_version": GAME, "mods": ["app"]}, "invalid_parameter", "'loader' must be one of"),
    ({"loader": "fabric", "game_version": GAME, "mods": []}, "invalid_parameter", "'mods' must name at least"),
    ({"loader": "fabric", "game_version": GAME, "mods": [f"m{i}" for i in range(101)]}, "invalid_parameter",
     "'mods' may hold at most 100"),
    ({"loader": "fabric", "game_version": "x" * 65, "mods": ["app"]}, "invalid_parameter", "at most 64"),
    ({"loader": "fabric", "game_version": GAME, "mods": ["a\u0000b"]}, "invalid_parameter", "NUL"),
])
async def test_resolve_bad_input_is_a_400_envelope(client, body, code, words):
    resp = await post(client, "/api/v1/resolve", body, 400)
    answer = await resp.json()
    assert answer["error"] == code and words in answer["description"], answer


async def test_resolve_body_is_bounded(client):
    resp = await client.post("/api/v1/resolve", data=b'{"mods": [' + b'"x",' * 400_000 + b'"x"]}',
                             headers={"Content-Type": "application/json"})
    assert resp.status == 413 and (await resp.json())["error"] == "payload_too_large"
    resp = await client.post("/api/v1/resolve", data=b"not json")
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_body"


async def test_export_mrpack_and_packwiz_from_one_resolution(client, seed):
    await catalogue(seed)
    body = {"loader": "fabric", "game_version": GAME, "mods": ["app", "shader"], "name": "My pack"}
    resp = await post(client, "/api/v1/packs/export?format=mrpack", body)
    assert resp.headers["Content-Disposition"] == 'attachment; filename="My-pack.mrpack"'
    data = await resp.read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        index = json.loads(z.read("modrinth.index.json"))
    assert index["formatVersion"] == 1 and index["game"] == "minecraft" and index["name"] == "My pack"
    assert index["versionId"] == "1.0.0"
    assert index["dependencies"] == {"minecraft": GAME, "fabric-loader": "0.16.14"}
    files = {f["path"]: f for f in index["files"]}
    assert set(files) == {"mods/app-1.0-0.jar", "mods/lib-1.1-0.jar", "mods/shader-3.0-0.jar"}
    app = files["mods/app-1.0-0.jar"]
    assert app["hashes"] == {"sha1": seed.hashes(1)["sha1"], "sha512": seed.hashes(1)["sha512"]}
    assert app["downloads"] == ["https://github.com/o/r/releases/download/1.0/f0.jar"] and app["fileSize"] == 1000
    assert app["env"] == {"client": "required", "server": "required"}
    assert files["mods/shader-3.0-0.jar"]["env"] == {"client": "required", "server": "unsupported"}
    # GET with the same fields as parameters: the same bytes.
    got = await client.get("/api/v1/packs/export", params=[("format", "mrpack"), ("loader", "fabric"),
                                                           ("game_version", GAME), ("mod", "app"), ("mod", "shader"),
                                                           ("name", "My pack")])
    assert got.status == 200 and await got.read() == data

    resp = await post(client, "/api/v1/packs/export?format=packwiz", body)
    with zipfile.ZipFile(io.BytesIO(await resp.read())) as z:
        pack = tomllib.loads(z.read("pack.toml").decode())
        raw_index = z.read("index.toml")
        metas = {n: tomllib.loads(z.read(n).decode()) for n in z.namelist() if n.endswith(".pw.toml")}
    assert pack["pack-format"] == "packwiz:1.1.0" and pack["versions"] == {"minecraft": GAME, "fabric": "0.16.14"}
    import hashlib
    assert pack["index"]["hash"] == hashlib.sha256(raw_index).hexdigest()
    assert set(metas) == {"mods/app.pw.toml", "mods/lib.pw.toml", "mods/shader.pw.toml"}
    assert metas["mods/lib.pw.toml"]["download"] == {"url": "https://github.com/o/r/releases/download/1.1/f0.jar",
                                                     "hash-format": "sha512", "hash": seed.hashes(3)["sha512"]}
    assert metas["mods/shader.pw.toml"]["side"] == "client"


async def test_export_refuses_what_it_cannot_build(client, seed):
    await catalogue(seed)
    body = {"loader": "fabric", "game_version": GAME, "mods": ["old"]}
    answer = await (await post(client, "/api/v1/packs/export?format=mrpack", body, 409)).json()
    assert answer["error"] == "no_solution" and "no version of Old Mod supports 1.21.4" in answer["description"]
    body = {"loader": "fabric", "game_version": GAME, "mods": ["app"], "loader_version": "0.15.11"}
    answer = await (await post(client, "/api/v1/packs/export?format=mrpack", body, 400)).json()
    assert answer["error"] == "invalid_parameter" and "Fabric Loader 0.16 or newer" in answer["description"]
    for url, error in (("/api/v1/packs/export", "'format' is required"),
                       ("/api/v1/packs/export?format=zip", "'format' must be one of")):
        assert error in (await (await post(client, url, body, 400)).json())["description"]
    got = await client.get("/api/v1/packs/export?format=packwiz&loader=fabric&game_version=1.21.4")
    assert got.status == 400 and "'mod' is required" in (await got.json())["description"]
    answer = await (await post(client, "/api/v1/packs/export?format=mrpack",
                               {"loader": "bukkit", "game_version": GAME, "mods": ["app"]}, 400)).json()
    assert "for a pack" in answer["description"]


async def test_export_for_a_loader_without_a_known_version_asks_for_one(client, seed):
    mod = await seed.mod("neo", name="Neo")
    await seed.version(mod, "1.0", [(["neoforge"], [GAME], seed.hashes(9))],
                       manifests=[[rec("neo", "1.0", ("neoforge", "[21.4,)"), loader="neoforge")]])
    body = {"loader": "neoforge", "game_version": GAME, "mods": ["neo"]}
    answer = await (await post(client, "/api/v1/packs/export?format=mrpack", body, 400)).json()
    assert answer["error"] == "loader_version_required" and "NeoForge 21.4 or newer" in answer["description"]
    resp = await post(client, "/api/v1/packs/export?format=mrpack", {**body, "loader_version": "21.4.120"})
    with zipfile.ZipFile(io.BytesIO(await resp.read())) as z:
        assert json.loads(z.read("modrinth.index.json"))["dependencies"] == {"minecraft": GAME, "neoforge": "21.4.120"}


async def test_export_picks_a_known_quilt_forge_or_neoforge_release_every_mod_accepts(client, seed):
    """No loader_version given: the newest release Indexium knows of for the game version that
    every mod's range admits (NeoForge and Forge builds are per game version; Quilt's are not)."""
    cases = [("neoforge", "1.21.1", "[21.1.0,21.1.240)", "21.1.218"), ("neoforge", "1.21.1", "[21.1.0,)", "21.1.250"),
             ("forge", "1.20.1", "[47,47.3)", "47.2.0"), ("quilt", "1.21.1", "<0.29", "0.28.0")]
    for n, (loader, game, needs, chosen) in enumerate(cases):
        loader_id = packexport.LOADER_IDS[loader]
        mod = await seed.mod(f"m{n}", name=f"M{n}")
        await seed.version(mod, "1.0", [([loader], [game], seed.hashes(20 + n))],
                           manifests=[[rec(f"m{n}", "1.0", (loader_id, needs), loader=loader)]])
        body = {"loader": loader, "game_version": game, "mods": [f"m{n}"]}
        resp = await post(client, "/api/v1/packs/export?format=mrpack", body)
        with zipfile.ZipFile(io.BytesIO(await resp.read())) as z:
            deps = json.loads(z.read("modrinth.index.json"))["dependencies"]
        assert deps == {"minecraft": game, packexport.MRPACK_KEYS[loader]: chosen}, (loader, needs)
    # A range no known release meets still asks for one, naming what the mods accept.
    mod = await seed.mod("picky", name="Picky")
    await seed.version(mod, "1.0", [(["neoforge"], ["1.21.1"], seed.hashes(30))],
                       manifests=[[rec("picky", "1.0", ("neoforge", "[21.1.300,)"), loader="neoforge")]])
    body = {"loader": "neoforge", "game_version": "1.21.1", "mods": ["picky"]}
    answer = await (await post(client, "/api/v1/packs/export?format=mrpack", body, 400)).json()
    assert answer["error"] == "loader_version_required" and "21.1.300 or newer" in answer["description"]


async def test_upgrade_check_per_file_and_summary(client, seed):
    app, lib, old, shader = await catalogue(seed)
    blocked = await seed.mod("needy", name="Needy")
    await seed.version(blocked, "1.0", [(["fabric"], ["1.21.1"], seed.hashes(10))],
                       manifests=[[rec("needy", "1.0", ("old", ">=0.15"))]])
    await seed.version(blocked, "1.1", [(["fabric"], [GAME], seed.hashes(11))],
                       manifests=[[rec("needy", "1.1", ("old", ">=0.15"))]])
    hashes = [seed.hashes(2)["sha1"], seed.hashes(5)["sha512"], seed.hashes(10)["sha1"], "e" * 40]
    answer = await (await post(client, "/api/v1/upgrade-check",
                               {"hashes": hashes, "target_game_version": GAME, "loader": "fabric"})).json()
    assert answer["summary"] == "1 of 4 ready for 1.21.4" and (answer["ready"], answer["total"]) == (1, 4)
    files = {f["hash"]: f for f in answer["files"]}
    app_file = files[seed.hashes(2)["sha1"]]
    assert app_file["installed"] == {"slug": "app", "name": "App", "mod_id": "app", "version": "0.9"}
    assert app_file["ready"] and app_file["target"] == {"version": "1.0", "game_versions": [GAME]}
    old_file = files[seed.hashes(5)["sha512"]]
    assert not old_file["ready"] and old_file["target"] is None
    assert old_file["newest"] == {"version": "0.15", "game_versions": ["1.21.1", "1.21"]}
    assert old_file["text"] == "none yet for 1.21.4; its newest is 0.15 for 1.21.1, 1.21"
    needy = files[seed.hashes(10)["sha1"]]
    assert needy["target"]["version"] == "1.1" and not needy["ready"]
    assert needy["blocked_by"] == ["needs Old Mod 0.15 or newer (no Old Mod 0.15 or newer for 1.21.4 yet)"]
    assert files["e" * 40] == {"hash": "e" * 40, "known": False, "installed": None, "target": None, "newest": None,
                               "blocked_by": [], "ready": False, "text": "not on Indexium (or not public)"}


@pytest.mark.parametrize(("body", "words"), [
    ({"hashes": ["a" * 40] * 501, "target_game_version": GAME, "loader": "fabric"}, "at most 500"),
    ({"hashes": [], "target_game_version": GAME, "loader": "fabric"}, "at least one"),
    ({"hashes": ["a" * 64], "target_game_version": GAME, "loader": "fabric"}, "sha1 (40 hex digits) or sha512"),
    ({"hashes": ["zz"], "target_game_version": GAME, "loader": "fabric"}, "hexadecimal"),
    ({"hashes": ["a" * 40], "loader": "fabric"}, "target_game_version"),
    ({"hashes": ["a" * 40], "target_game_version": GAME, "loader": "x"}, "'loader' must be one of"),
])
async def test_upgrade_check_bad_input_is_a_400_envelope(client, body, words):
    answer = await (await post(client, "/api/v1/upgrade-check", body, 400)).json()
    assert answer["error"] in ("invalid_body", "invalid_parameter") and words in answer["description"], answer


async def test_the_new_routes_count_against_the_rate_limit(make_client, seed):
    await catalogue(seed)
    client = await make_client(INDEXIUM_API_RATE_LIMIT_PER_MINUTE="3", INDEXIUM_API_RATE_LIMIT_BURST="3")
    body = {"loader": "fabric", "game_version": GAME, "mods": ["app"]}
    seen = []
    for path in ("/api/v1/resolve", "/api/v1/packs/export?format=mrpack", "/api/v1/upgrade-check", "/api/v1/resolve"):
        payload = body if "upgrade" not in path else {"hashes": ["a" * 40], "target_game_version": GAME,
                                                       "loader": "fabric"}
        resp = await client.post(path, json=payload)
        seen.append(resp.status)
        assert "X-RateLimit-Limit" in resp.headers or resp.status == 429
    assert seen == [200, 200, 200, 429]


async def test_openapi_documents_the_new_routes(client):
    doc = await (await client.get("/openapi.json")).json()
    assert {"/api/v1/resolve", "/api/v1/packs/export", "/api/v1/upgrade-check"} <= set(doc["paths"])
    assert doc["paths"]["/api/v1/resolve"]["post"]["requestBody"]["content"]["application/json"]["schema"][
        "properties"]["mods"]["maxItems"] == 100
    assert {"ResolveAnswer", "UpgradeAnswer"} <= set(doc["components"]["schemas"])


async def test_browsers_may_call_the_new_routes(client):
    for path, method in (("/api/v1/resolve", "POST"), ("/api/v1/packs/export", "GET"),
                         ("/api/v1/upgrade-check", "POST")):
        resp = await client.options(path, headers={"Origin": "https://example.org",
                                                    "Access-Control-Request-Method": method})
        assert resp.status == 204 and method in resp.headers["Access-Control-Allow-Methods"]
