"""Hash lookups and update checks: algorithm detection, visibility, per-file filters, no downgrade."""

FABRIC_120 = ["fabric"], ["1.20.1"]


async def post(client, path, body):
    resp = await client.post(f"/api/v1/versions/{path}", json=body)
    return resp.status, await resp.json()


async def test_by_hash_every_algorithm_detected_or_given(client, seed):
    m = await seed.mod("hashed")
    h = seed.hashes(1)
    await seed.version(m, "1.0", [(*FABRIC_120, h)])
    for algorithm, value in h.items():
        for query in ({}, {"algorithm": algorithm}):
            resp = await client.get(f"/api/v1/versions/by-hash/{value.upper()}", params=query)
            assert resp.status == 200, (algorithm, query)
            body = await resp.json()
            assert body["mod"] == "hashed" and body["version_number"] == "1.0"
            assert body["files"][0]["hashes"] == h
    resp = await client.get(f"/api/v1/versions/by-hash/{seed.hashes(99)['sha1']}")
    assert resp.status == 404


async def test_by_hash_bad_input_is_400(client):
    for value, query, name in [("abc", {}, "hash"), ("z" * 40, {}, "hash"), ("0" * 41, {}, "hash"),
                               ("0" * 40, {"algorithm": "sha256"}, "hash"),
                               ("0" * 40, {"algorithm": "md5"}, "algorithm")]:
        resp = await client.get(f"/api/v1/versions/by-hash/{value}", params=query)
        assert resp.status == 400 and f"'{name}'" in (await resp.json())["description"], value


async def test_non_public_versions_are_unknown_hashes(client, seed):
    m = await seed.mod("shady")
    await seed.version(m, "1.0", [(*FABRIC_120, seed.hashes(1))])
    bad = await seed.version(m, "1.1", [(*FABRIC_120, seed.hashes(2))])
    await seed.set_status(m, bad, "quarantined")
    await seed.version(m, "1.2", [(*FABRIC_120, seed.hashes(3))], status="pending_scan")
    gone = await seed.version(m, "1.3", [(*FABRIC_120, seed.hashes(4))])
    await seed.db.execute("UPDATE mod_versions SET hidden = true WHERE id = $1", gone)
    sha1 = [seed.hashes(i)["sha1"] for i in (1, 2, 3, 4)]
    assert (await client.get(f"/api/v1/versions/by-hash/{sha1[1]}")).status == 404
    status, body = await post(client, "by-hashes", {"hashes": sha1})
    assert status == 200 and list(body) == [sha1[0]]
    status, body = await post(client, "update-check", {"hashes": sha1})
    assert status == 200 and list(body) == [sha1[0]] and body[sha1[0]]["version_number"] == "1.0"


async def test_by_hashes_mixed_algorithms_and_duplicates(client, seed):
    m = await seed.mod("bulk")
    await seed.version(m, "1.0", [(*FABRIC_120, seed.hashes(1))])
    await seed.version(m, "2.0", [(*FABRIC_120, seed.hashes(2))])
    wanted = [seed.hashes(1)["sha1"], seed.hashes(2)["sha512"].upper(), seed.hashes(2)["sha512"], "f" * 64]
    status, body = await post(client, "by-hashes", {"hashes": wanted})
    assert status == 200
    assert {h: v["version_number"] for h, v in body.items()} == {
        seed.hashes(1)["sha1"]: "1.0", seed.hashes(2)["sha512"]: "2.0"}
    status, body = await post(client, "by-hashes", {"hashes": [seed.hashes(1)["sha256"]], "algorithm": "sha256"})
    assert status == 200 and len(body) == 1
    assert (await post(client, "by-hashes", {"hashes": []})) == (200, {})


BAD_BODIES = [
    ({}, "hashes"), ({"hashes": "abc"}, "hashes"), ({"hashes": ["nothex"]}, "hashes"),
    ({"hashes": ["0" * 40], "algorithm": "sha512"}, "hashes"), ({"hashes": [], "extra": 1}, "extra"),
    ({"hashes": ["0" * 40] * 1001}, "hashes"), ({"hashes": [], "version_types": ["nightly"]}, "version_types"),
    ({"hashes": [], "loaders": [1]}, "loaders"), ([1, 2], "object"),
]


async def test_bulk_bad_bodies_are_400(client):
    for body, name in BAD_BODIES:
        for path in ("by-hashes", "update-check"):
            if path == "by-hashes" and isinstance(body, dict) and set(body) & {"version_types", "loaders"}:
                continue
            status, out = await post(client, path, body)
            assert status == 400 and name in out["description"], (path, body, out)
    resp = await client.post("/api/v1/versions/update-check", data=b"{not json")
    assert resp.status == 400 and (await resp.json())["error"] == "invalid_body"


async def test_update_check_never_downgrades(client, seed):
    m = await seed.mod("branches")
    installed = seed.hashes(20)
    # 2.0 for 1.20.1 is installed; 1.9.5 is a later-published hotfix on the 1.19 branch.
    await seed.version(m, "1.9.0", [(["fabric"], ["1.19.2"])], published=seed.T0)
    await seed.version(m, "2.0.0", [(["fabric"], ["1.20.1"], installed)], published=seed.T0 + seed.days(10))
    await seed.version(m, "1.9.5", [(["fabric"], ["1.19.2"])], published=seed.T0 + seed.days(20))
    h = installed["sha1"]
    # The launcher now asks for 1.19.2 only: everything that matches is older -> absent.
    status, body = await post(client, "update-check", {"hashes": [h], "loaders": ["fabric"],
                                                       "game_versions": ["1.19.2"]})
    assert status == 200 and body == {}
    # Nothing newer at all: the installed version itself (up to date).
    status, body = await post(client, "update-check", {"hashes": [h], "loaders": ["fabric"],
                                                       "game_versions": ["1.20.1"]})
    assert body[h]["version_number"] == "2.0.0"
    await seed.version(m, "2.1.0", [(["fabric"], ["1.20.1"])], published=seed.T0 + seed.days(30))
    status, body = await post(client, "update-check", {"hashes": [h], "loaders": ["fabric"],
                                                       "game_versions": ["1.20.1"]})
    assert body[h]["version_number"] == "2.1.0"


async def test_update_check_filters_hold_on_one_file_and_types(client, seed):
    m = await seed.mod("filters")
    h = seed.hashes(30)
    await seed.version(m, "1.0", [(["forge"], ["1.20.1"], h)], published=seed.T0)
    # Forge and 1.21 both appear in 1.1, but never on the same file.
    await seed.version(m, "1.1", [(["forge"], ["1.20.1"]), (["fabric"], ["1.21"])], published=seed.T0 + seed.days(1))
    await seed.version(m, "1.2", [(["forge"], ["1.21"])], version_type="beta", published=seed.T0 + seed.days(2))
    await seed.version(m, "1.3", [(["forge"], ["1.21"])], status="pending_scan", published=seed.T0 + seed.days(3))

    async def newest(**filters):
        status, body = await post(client, "update-check", {"hashes": [h["sha256"]], **filters})
        assert status == 200
        return body.get(h["sha256"], {}).get("version_number")

    assert await newest(loaders=["forge"], game_versions=["1.21"]) == "1.2"
    assert await newest(loaders=["forge"], game_versions=["1.21"], version_types=["release"]) is None
    assert await newest(loaders=["forge"], game_versions=["1.20.1"]) == "1.1"
    assert await newest(loaders=["fabric"], game_versions=["1.21"]) == "1.1"
    assert await newest(loaders=["quilt"]) is None
    assert await newest() == "1.2"
    assert await newest(version_types=["release"]) == "1.1"
