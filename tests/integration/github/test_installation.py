"""installation / installation_repositories events: registration (or a recorded skip), backfill,
hiding on removal, uninstall and suspension, showing again on reinstall and unsuspend."""

from __future__ import annotations

import json

import aiohttp

from indexium_devstack import jars

FABRIC_JSON = json.dumps({"schemaVersion": 1, "id": "lumen", "version": "${version}", "name": "Lumen",
                          "description": "Dynamic lights.", "contact": {"issues": "https://example.org/issues"}})


def mod_repo(gh, name="alice/lumen", mod_id="lumen", releases=2, manifest_path="src/main/resources/fabric.mod.json"):
    repo = gh.add_repo(name, description="Lights for Minecraft", topics=["minecraft-mod", "lighting"])
    if manifest_path:
        gh.set_file(repo, manifest_path, FABRIC_JSON)
    for i in range(releases):
        jar = jars.fabric_jar(mod_id, f"1.{i}.0", "Lumen", "Dynamic lights.")
        gh.add_release(repo, f"v1.{i}.0", [(f"{mod_id}-1.{i}.0.jar", jar)], created_at=1_700_000_000 + i * 60)
    return repo


async def versions_of(db, repo) -> list[str]:
    rows = await db.fetch("""SELECT v.version_number FROM mod_versions v JOIN mods m ON m.id = v.mod_id
                             WHERE m.github_repo_id = $1 AND NOT v.hidden ORDER BY v.version_number""", repo.id)
    return [r["version_number"] for r in rows]


async def test_installation_created_registers_mods_skips_others_and_backfills(gh, stack, db, eventually):
    lumen = mod_repo(gh)
    multi = mod_repo(gh, "bob/glow", "glow", releases=1, manifest_path="neoforge/src/main/resources/META-INF/neoforge.mods.toml")
    jar_only = mod_repo(gh, "carol/spark", "spark", releases=1, manifest_path=None)
    tool = gh.add_repo("alice/dotfiles")
    gh.add_release(tool, "v1", [("notes.txt", b"hello")])
    empty = gh.add_repo("alice/empty")
    secret = gh.add_repo("alice/secret", private=True)
    inst = gh.add_installation([lumen, multi, jar_only, tool, empty, secret])

    assert await stack.send("installation", gh.installation_payload(inst, "created")) == 202
    rows = await eventually(_all_evaluated(db, 6))
    by_name = {r["full_name"]: r for r in rows}
    assert by_name["alice/lumen"]["state"] == "registered"
    assert by_name["alice/lumen"]["manifest_source"] == "branch:src/main/resources/fabric.mod.json"
    assert by_name["bob/glow"]["manifest_source"] == "branch:neoforge/src/main/resources/META-INF/neoforge.mods.toml"
    assert by_name["carol/spark"]["state"] == "registered"
    assert by_name["carol/spark"]["manifest_source"] == "release:v1.0.0/spark-1.0.0.jar"
    assert by_name["alice/dotfiles"]["state"] == "skipped"
    assert "latest release v1 has no jar" in by_name["alice/dotfiles"]["skip_reason"]
    assert by_name["alice/empty"]["skip_reason"] == "no mod manifest on branch main and no published release"
    assert by_name["alice/secret"]["skip_reason"] == "private repository"

    # Backfill sends the existing releases through the normal indexer.
    assert await eventually(lambda: _versions_are(db, lumen, ["v1.0.0", "v1.1.0"]))
    assert await eventually(lambda: _versions_are(db, jar_only, ["v1.0.0"]))
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 3 FROM github_repositories WHERE backfill_state = 'done'"))
    mod = await db.fetchrow("SELECT slug, listed, hidden FROM mods WHERE github_repo_id = $1", lumen.id)
    assert mod["slug"] == "lumen" and mod["listed"] and not mod["hidden"]

    # The role's own metrics: the remaining quota, API calls, evaluations, releases sent.
    async with aiohttp.ClientSession() as http, http.get(stack.role_server.make_url("/metrics")) as resp:
        text = await resp.text()
    assert 'indexium_github_rate_limit_remaining{auth="installation"}' in text
    assert 'indexium_github_api_requests_total{op="get_tree",status="4xx"}' in text  # no commits: 409
    assert 'indexium_github_repositories_evaluated_total{outcome="skipped"} 2.0' in text
    assert 'indexium_github_releases_sent_total{source="backfill"} 4.0' in text


def _all_evaluated(db, n):
    async def check():
        rows = await db.fetch("SELECT * FROM github_repositories WHERE state <> 'pending' ORDER BY full_name")
        return rows if len(rows) == n else None
    return check


async def _versions_are(db, repo, expected):
    return await versions_of(db, repo) == expected


async def test_removal_uninstall_suspend_hide_and_reinstall_shows_again(gh, stack, db, eventually):
    lumen = mod_repo(gh)
    inst = gh.add_installation([lumen])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", lumen.id))

    async def listed():
        return await db.fetchrow("SELECT listed, hidden, hidden_reason FROM mods WHERE github_repo_id = $1", lumen.id)

    # removed from the installation -> hidden, kept
    inst.repos.remove(lumen)
    await stack.send("installation_repositories", gh.installation_repositories_payload(inst, removed=[lumen]))
    assert await eventually(lambda: _is(listed, hidden=True))
    assert (await listed())["hidden_reason"] == "github: repository removed from the installation"
    assert await versions_of(db, lumen) == ["v1.0.0", "v1.1.0"]  # nothing deleted

    # added back -> shown again, no release sent twice
    inst.repos.append(lumen)
    await stack.send("installation_repositories", gh.installation_repositories_payload(inst, added=[lumen]))
    assert await eventually(lambda: _is(listed, hidden=False, listed=True))

    # suspended -> hidden; unsuspended -> shown
    inst.suspended_at = gh.now()
    await stack.send("installation", gh.installation_payload(inst, "suspend"))
    assert await eventually(lambda: _is(listed, hidden=True))
    assert (await listed())["hidden_reason"] == "github: installation suspended"
    inst.suspended_at = None
    await stack.send("installation", gh.installation_payload(inst, "unsuspend"))
    assert await eventually(lambda: _is(listed, hidden=False, listed=True))

    # uninstalled -> hidden; installed again -> shown
    await stack.send("installation", gh.installation_payload(inst, "deleted"))
    assert await eventually(lambda: _is(listed, hidden=True))
    assert (await listed())["hidden_reason"] == "github: app uninstalled"
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: _is(listed, hidden=False, listed=True))

    await eventually(lambda: db.fetchval(
        "SELECT backfill_state = 'done' FROM github_repositories WHERE github_repo_id = $1", lumen.id))
    msgs = await stack.release_messages()
    assert len(msgs) == 2  # each release sent once, for all the comings and goings
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2


async def _is(fetch, **expected):
    row = await fetch()
    return row is not None and all(row[k] == v for k, v in expected.items())


async def test_an_older_event_arriving_late_does_not_undo_a_newer_one(gh, stack, db, eventually):
    lumen = mod_repo(gh, releases=1)
    inst = gh.add_installation([lumen])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", lumen.id))
    deleted = gh.installation_payload(inst, "deleted")
    await stack.send("installation", deleted, delivery_id="d-deleted")
    assert await eventually(lambda: db.fetchval("SELECT hidden FROM mods WHERE github_repo_id = $1", lumen.id))
    # A "suspend" received earlier but processed now (redelivered from a dead letter, say)
    # would be stale; simulate by replaying an old-timestamped event straight onto the stream.
    import nats
    from indexium_contracts import github as gh_types, ingest

    old = ingest.InstallationReceived(
        delivery_id="d-old-unsuspend", received_at="2020-01-01T00:00:00+00:00",
        webhook=gh_types.InstallationWebhook(action="unsuspend", installation=gh_types.Installation(id=inst.id)),
    )
    nc = await nats.connect(stack.nats_url)
    await nc.jetstream().publish(ingest.INSTALLATION, ingest.encoder.encode(old), headers={"Nats-Msg-Id": "d-old"})
    await nc.drain()
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'stale' FROM webhook_deliveries WHERE delivery_id = 'd-old-unsuspend'"))
    assert await db.fetchval("SELECT state FROM github_installations WHERE id = $1", inst.id) == "deleted"
    assert await db.fetchval("SELECT hidden FROM mods WHERE github_repo_id = $1", lumen.id)


async def test_pack_repositories_onboard_by_the_registrys_source_paths(gh, stack, db, eventually):
    """A resource pack (pack.mcmeta at the root), a shader pack (shaders/) and modpacks (modrinth.index.json;
    packwiz's pack.toml) are registered from their default branch; a repository with a pack.mcmeta only
    inside a mod's resources, or a shaders/ folder below the root, is not a pack by that."""
    rp = gh.add_repo("dana/faithful-ish")
    gh.set_file(rp, "pack.mcmeta", json.dumps({"pack": {"pack_format": 15, "description": "x"}}))
    gh.set_file(rp, "assets/minecraft/textures/block/stone.png", b"png")
    shader = gh.add_repo("dana/glsl-shaders")
    gh.set_file(shader, "shaders/final.fsh", "void main() {}")
    modpack = gh.add_repo("dana/adventure-pack")
    gh.set_file(modpack, "modrinth.index.json", json.dumps({"formatVersion": 1, "game": "minecraft"}))
    packwiz = gh.add_repo("dana/packwiz-pack")
    gh.set_file(packwiz, "pack.toml", 'name = "P"\n[versions]\nminecraft = "1.20.1"\n')
    nested = gh.add_repo("dana/not-a-pack")
    gh.set_file(nested, "docs/shaders/notes.txt", "a folder of notes")
    gh.set_file(nested, "example/src/main/resources/pack.mcmeta", "{}")
    inst = gh.add_installation([rp, shader, modpack, packwiz, nested])

    assert await stack.send("installation", gh.installation_payload(inst, "created")) == 202
    by_name = {r["full_name"]: r for r in await eventually(_all_evaluated(db, 5))}
    assert {n: (r["state"], r["manifest_source"]) for n, r in by_name.items()} == {
        "dana/faithful-ish": ("registered", "branch:pack.mcmeta"),
        "dana/glsl-shaders": ("registered", "branch:shaders/final.fsh"),
        "dana/adventure-pack": ("registered", "branch:modrinth.index.json"),
        "dana/packwiz-pack": ("registered", "branch:pack.toml"),
        "dana/not-a-pack": ("skipped", None),
    }
