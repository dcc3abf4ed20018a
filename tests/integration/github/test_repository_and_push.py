"""repository events keep the mod in step with its repository; a push to the default branch
that touches a manifest (or brings new description/topics) refreshes the card, not versions."""

from __future__ import annotations

import json

import nats
import pytest

from indexium_contracts import versions
from indexium_devstack import jars

MANIFEST = "src/main/resources/fabric.mod.json"


def fabric_json(name="Lumen", description="Dynamic lights.", homepage=None) -> str:
    data = {"schemaVersion": 1, "id": "lumen", "version": "${version}", "name": name, "description": description}
    if homepage:
        data["contact"] = {"homepage": homepage}
    return json.dumps(data)


@pytest.fixture
async def lumen(gh, stack, db, eventually):
    """A registered, backfilled, listed mod: alice/lumen with two releases."""
    repo = gh.add_repo("alice/lumen", description="Lights", topics=["lighting"], homepage="https://lumen.example")
    gh.set_file(repo, MANIFEST, fabric_json())
    for i in range(2):
        gh.add_release(repo, f"v1.{i}.0", [(f"lumen-1.{i}.0.jar", jars.fabric_jar("lumen", f"1.{i}.0", "Lumen"))],
                       created_at=1_700_000_000 + i)
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 2 FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.github_repo_id = $1",
        repo.id))
    assert await eventually(lambda: db.fetchval("SELECT listed FROM mods WHERE github_repo_id = $1", repo.id))
    repo.installation = inst
    return repo


def repository_payload(gh, repo, action, **extra) -> dict:
    return {"action": action, "repository": gh.repo_json(repo), "installation": {"id": repo.installation.id},
            "sender": {"login": repo.owner.login, "id": repo.owner.id}, **extra}


def push_payload(gh, repo, *, ref="refs/heads/main", added=(), modified=(), removed=()) -> dict:
    return {"ref": ref, "before": "a" * 40, "after": "b" * 40, "repository": gh.repo_json(repo),
            "installation": {"id": repo.installation.id},
            "commits": [{"id": "b" * 40, "added": list(added), "modified": list(modified), "removed": list(removed)}]}


async def mod(db, repo):
    return await db.fetchrow("SELECT * FROM mods WHERE github_repo_id = $1", repo.id)


def rename(gh, repo, owner_login=None, name=None):
    del gh.state.repos[repo.full_name.lower()]
    if owner_login:
        repo.owner = gh.state.user(owner_login)
    if name:
        repo.name = name
    gh.state.repos[repo.full_name.lower()] = repo


async def test_renamed_transferred_edited_keep_the_mod_in_step(gh, stack, db, eventually, lumen):
    rename(gh, lumen, name="lumen-lights")
    await stack.send("repository", repository_payload(gh, lumen, "renamed",
                                                      changes={"repository": {"name": {"from": "lumen"}}}))
    row = await eventually(lambda: _where(db, lumen, "links->>'sources' LIKE '%/alice/lumen-lights'"))
    assert row["slug"] == "lumen" and row["listed"] and row["repo_full_name"] == "alice/lumen-lights"
    assert await db.fetchval("SELECT full_name FROM github_repositories WHERE github_repo_id = $1",
                             lumen.id) == "alice/lumen-lights"

    rename(gh, lumen, owner_login="lightworks")
    await stack.send("repository", repository_payload(gh, lumen, "transferred"))
    row = await eventually(lambda: _where(db, lumen, "links->>'sources' LIKE '%/lightworks/lumen-lights'"))
    assert row["slug"] == "lumen" and row["repo_full_name"] == "lightworks/lumen-lights"
    assert await db.fetchval("SELECT login FROM authors WHERE github_id = $1", row["author_github_id"]) == "lightworks"

    lumen.topics = ["lighting", "performance"]
    lumen.homepage = "https://lumen.example/new"
    await stack.send("repository", repository_payload(gh, lumen, "edited"))
    # topics: "performance" means the category optimization, "lighting" stays a plain tag
    row = await eventually(lambda: _where(db, lumen, "categories = ARRAY['optimization'] AND tags = ARRAY['lighting']"))
    assert row["links"]["homepage"] == "https://lumen.example/new"
    assert row["summary"] == "Dynamic lights."  # the manifest's description wins over the repository's
    assert row["slug"] == "lumen" and row["listed"]


async def test_privatized_and_deleted_hide_publicized_shows(gh, stack, db, eventually, lumen):
    lumen.private = True
    await stack.send("repository", repository_payload(gh, lumen, "privatized"))
    row = await eventually(lambda: _where(db, lumen, "hidden"))
    assert not row["listed"] and row["hidden_reason"] == "github: repository is private"
    lumen.private = False
    await stack.send("repository", repository_payload(gh, lumen, "publicized"))
    assert await eventually(lambda: _where(db, lumen, "listed AND NOT hidden"))
    await stack.send("repository", repository_payload(gh, lumen, "deleted"))
    row = await eventually(lambda: _where(db, lumen, "hidden"))
    assert row["hidden_reason"] == "github: repository deleted"
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2  # kept, not deleted


async def test_push_refreshes_the_card_only_when_a_manifest_or_the_metadata_changed(gh, stack, db, eventually,
                                                                                    lumen):
    before = await stack.release_messages()
    # elsewhere than the default branch, or touching no manifest: ignored
    gh.set_file(lumen, MANIFEST, fabric_json(name="Renamed On A Branch"), ref="dev")
    await stack.send("push", push_payload(gh, lumen, ref="refs/heads/dev", modified=[MANIFEST]),
                     delivery_id="push-dev")
    await stack.send("push", push_payload(gh, lumen, modified=["README.md"]), delivery_id="push-readme")
    assert await eventually(lambda: db.fetchval(
        "SELECT count(*) = 2 FROM webhook_deliveries WHERE delivery_id LIKE 'push-%' AND outcome = 'ignored'"))
    assert (await mod(db, lumen))["name"] == "Lumen"

    # the manifest on the default branch: name, summary, links
    gh.set_file(lumen, MANIFEST, fabric_json(name="Lumen Lights", description="Dynamic lights, faster.\n\nMore.",
                                             homepage="https://lumen.example/docs"))
    await stack.send("push", push_payload(gh, lumen, modified=[MANIFEST]))
    row = await eventually(lambda: _where(db, lumen, "name = 'Lumen Lights'"))
    assert row["summary"] == "Dynamic lights, faster."
    assert row["links"]["homepage"] == "https://lumen.example"  # the repository's homepage field wins
    assert row["latest_version"] == "v1.1.0"

    # new topics arrive with any push: categories of the vocabulary, the rest tags
    lumen.topics = ["lighting", "shaders", "decoration"]
    await stack.send("push", push_payload(gh, lumen, modified=["README.md"]))
    assert await eventually(lambda: _where(db, lumen, "categories = ARRAY['decoration'] "
                                                      "AND tags = ARRAY['lighting', 'shaders']"))

    # versions untouched: nothing sent to the indexer
    assert len(await stack.release_messages()) == len(before)
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2


@pytest.mark.parametrize("path, content, also_added", [
    ("fabric/src/main/resources/fabric.mod.json", fabric_json(), []),
    # The registry's pack source paths count as manifests for a push as for onboarding: a resource
    # pack's pack.mcmeta pushed to the root of a skipped repository makes it a pack repository.
    ("pack.mcmeta", '{"pack": {"pack_format": 15, "description": "x"}}', ["assets/minecraft/textures/a.png"]),
], ids=["mod manifest", "pack at the root"])
async def test_created_repository_is_evaluated_and_a_push_adding_a_manifest_registers_it(gh, stack, db, eventually,
                                                                                         path, content, also_added):
    inst = gh.add_installation([], account="alice", repository_selection="all")
    await stack.send("installation", gh.installation_payload(inst, "created"))
    repo = gh.add_repo("alice/newproject", installation=inst)
    repo.installation = inst
    await stack.send("repository", repository_payload(gh, repo, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT skip_reason FROM github_repositories WHERE github_repo_id = $1", repo.id)) == \
        "no mod manifest on branch main and no published release"
    gh.set_file(repo, path, content)
    await stack.send("push", push_payload(gh, repo, added=[path, *also_added]))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    assert await db.fetchval("SELECT manifest_source FROM github_repositories WHERE github_repo_id = $1",
                             repo.id) == f"branch:{path}"


async def _where(db, repo, condition):
    return await db.fetchrow(f"SELECT * FROM mods WHERE github_repo_id = $1 AND {condition}", repo.id)


async def test_a_release_webhook_delivered_after_a_rename_does_not_undo_it(gh, stack, db, eventually, lumen):
    old_repository = gh.repo_json(lumen)
    rename(gh, lumen, name="lumen-lights")
    late = gh.release_payload(lumen.release("v1.1.0"), "edited")
    late["repository"] = old_repository  # queued before the rename: the repository as it was (asset URLs redirect)
    await stack.send("repository", repository_payload(gh, lumen, "renamed",
                                                      changes={"repository": {"name": {"from": "lumen"}}}))
    assert await eventually(lambda: _where(db, lumen, "repo_full_name = 'alice/lumen-lights'"))
    assert await stack.send("release", late, delivery_id="late-release") == 202
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'indexed' FROM webhook_deliveries WHERE delivery_id = 'late-release'"))
    row = await mod(db, lumen)
    assert row["repo_full_name"] == "alice/lumen-lights" and row["links"]["sources"].endswith("/alice/lumen-lights")
    assert row["slug"] == "lumen"


async def test_a_mod_first_indexed_after_its_repository_was_removed_is_hidden(gh, stack, db, eventually):
    repo = gh.add_repo("alice/nova")
    gh.set_file(repo, MANIFEST, fabric_json(name="Nova"))  # a mod, no release yet
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'registered' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    inst.repos.remove(repo)
    await stack.send("installation_repositories", gh.installation_repositories_payload(inst, removed=[repo]))
    assert await eventually(lambda: db.fetchval(
        "SELECT removed FROM github_repositories WHERE github_repo_id = $1", repo.id))
    release = gh.add_release(repo, "v1.0.0", [("nova-1.0.0.jar", jars.fabric_jar("lumen", "1.0.0", "Nova"))])
    await stack.send("release", gh.release_payload(release, installation_id=None))  # sent before the removal
    row = await eventually(lambda: _where(db, repo, "true"))
    assert row["hidden"] and not row["listed"]
    assert row["hidden_reason"] == "github: repository removed from the installation"


async def test_a_skipped_repository_whose_release_brings_a_mod_jar_becomes_registered(gh, stack, db, eventually):
    repo = gh.add_repo("alice/late")  # no manifest on the branch, no release: skipped
    inst = gh.add_installation([repo])
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT state = 'skipped' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    release = gh.add_release(repo, "v1.0.0", [("late-1.0.0.jar", jars.fabric_jar("late", "1.0.0", "Late"))])
    await stack.send("release", gh.release_payload(release))
    row = await eventually(lambda: db.fetchrow(
        "SELECT * FROM github_repositories WHERE github_repo_id = $1 AND state = 'registered'", repo.id))
    assert row["manifest_source"] == "release:v1.0.0/late-1.0.0.jar" and row["skip_reason"] is None
    assert await eventually(lambda: _where(db, repo, "listed"))


async def mod_changed_causes(nats_url: str) -> list[str]:
    """The cause of every ModChanged on the VERSIONS stream, read by sequence."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        info = await js.stream_info(versions.STREAM.name)
        causes = []
        for seq in range(info.state.first_seq, info.state.last_seq + 1) if info.state.messages else ():
            msg = await js.get_msg(versions.STREAM.name, seq)
            if msg.subject == versions.MOD_CHANGED:
                causes.append(versions.decoder.decode(msg.data).cause)
        return causes
    finally:
        await nc.close()


async def test_publicizing_a_mod_skipped_as_private_announces_it_once(gh, stack, db, eventually, nats_url):
    repo = gh.add_repo("alice/shade")
    gh.set_file(repo, MANIFEST, fabric_json(name="Shade"))
    release = gh.add_release(repo, "v1.0.0", [("shade-1.0.0.jar", jars.fabric_jar("shade", "1.0.0", "Shade"))])
    await stack.send("release", gh.release_payload(release, installation_id=None))  # a mod before the App
    assert await eventually(lambda: _where(db, repo, "listed"))
    repo.private = True
    inst = gh.add_installation([repo])
    repo.installation = inst
    await stack.send("installation", gh.installation_payload(inst, "created"))
    assert await eventually(lambda: db.fetchval(
        "SELECT skip_reason = 'private repository' FROM github_repositories WHERE github_repo_id = $1", repo.id))
    assert await eventually(lambda: _where(db, repo, "hidden"))

    repo.private = False
    await stack.send("repository", repository_payload(gh, repo, "publicized"), delivery_id="d-publicized")
    assert await eventually(lambda: db.fetchval(
        "SELECT outcome = 'applied' FROM webhook_deliveries WHERE delivery_id = 'd-publicized'"))
    assert await db.fetchval("SELECT state FROM github_repositories WHERE github_repo_id = $1",
                             repo.id) == "registered"
    assert await eventually(lambda: _where(db, repo, "listed AND NOT hidden"))
    # The delivery is recorded after the handler's last publish (each awaited its PubAck).
    assert (await mod_changed_causes(nats_url)).count("repository.publicized") == 1
