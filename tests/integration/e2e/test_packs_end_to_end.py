"""Packs end to end (issue 34): signed release webhooks for a mod, a resource pack, a data pack,
a shader pack and a .mrpack whose files include the mod's jar travel through every service as a
real process (real JetStream, PostgreSQL, Range reads, the scan stage's pass) and come out of
/v2 with their project types, and the modpack's file resolved to the mod's version."""

import asyncio

import aiohttp

from indexium_devstack import jars, packs

from .test_release_to_search import SECRET, gh, services  # noqa: F401 (fixtures)


async def _until(http, url, ready, timeout=60.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        async with http.get(url) as resp:
            body = await resp.json() if resp.status == 200 else None
        if body is not None and ready(body):
            return body
        assert asyncio.get_running_loop().time() < deadline, f"{url}: {body}"
        await asyncio.sleep(0.2)


async def test_packs_are_indexed_scanned_and_served_with_their_types(gh, services):  # noqa: F811
    jar = jars.fabric_jar("sodium", "0.5.3", "Sodium", minecraft="1.20.1")
    mod_repo = gh.add_repo("CaffeineMC", "sodium")
    mod_rel = gh.add_release(mod_repo, "0.5.3", [("sodium-0.5.3.jar", jar)])
    # The address a real pack lists (the fake serves on loopback, which Modrinth's rule holds for
    # review); the file resolves by its hashes, not by this address.
    jar_url = "https://github.com/CaffeineMC/sodium/releases/download/0.5.3/sodium-0.5.3.jar"
    pack = packs.mrpack([packs.pack_file("mods/sodium-0.5.3.jar", jar, jar_url)], name="Speedy",
                        overrides={"mods/extra.jar": jars.fabric_jar("extra", "1.0")})
    releases = [
        mod_rel,
        gh.add_release(gh.add_repo("ana", "crisp"), "v1", [("crisp.zip", packs.resource_pack(15, filler=200))]),
        gh.add_release(gh.add_repo("ana", "loot"), "v1", [("loot.zip", packs.data_pack(15))]),
        gh.add_release(gh.add_repo("ana", "lumina"), "v2", [("lumina.zip", packs.shader_pack())],
                       name="Lumina for MC 1.20.1"),
        gh.add_release(gh.add_repo("packer", "speedy"), "1.0.0", [("speedy-1.0.0.mrpack", pack)]),
    ]
    ingest_url = f"{services['ingest'].url}/webhooks/github"
    for i, rel in enumerate(releases):
        payload = gh.release_payload(rel, action="published")
        assert await gh.send_webhook(ingest_url, "release", payload, SECRET, delivery_id=f"pack-{i}") == 202

    api = services["api"].url
    expected = {"sodium": "mod", "crisp": "resourcepack", "loot": "mod", "lumina": "shader", "speedy": "modpack"}
    async with aiohttp.ClientSession() as http:
        for slug, v2_type in expected.items():
            project = await _until(http, f"{api}/v2/project/{slug}", lambda b: bool(b.get("versions")))
            assert project["project_type"] == v2_type, slug
        loot = await _until(http, f"{api}/v2/project/loot/version", bool)
        assert loot[0]["loaders"] == ["datapack"]
        lumina = await _until(http, f"{api}/v2/project/lumina/version", bool)
        assert lumina[0]["loaders"] == ["iris", "optifine"] and lumina[0]["game_versions"] == ["1.20.1"]
        sodium = await _until(http, f"{api}/v2/project/sodium/version", bool)
        speedy = await _until(http, f"{api}/v2/project/speedy/version", bool)
        assert speedy[0]["files"][0]["filename"] == "speedy-1.0.0.mrpack" and speedy[0]["files"][0]["primary"]
        assert [d for d in speedy[0]["dependencies"] if d["dependency_type"] == "embedded"] == [
            {"version_id": sodium[0]["id"], "project_id": sodium[0]["project_id"], "file_name": None,
             "dependency_type": "embedded"}]
    for rel in releases[1:]:  # every archive read with Range requests within the budget
        stats = gh.stats(rel.assets[0])
        assert stats.ranges and len(stats.ranges) <= 3
