"""Is it a mod? The prober against the GitHub-shaped server (no database, no NATS)."""

from __future__ import annotations

import json

import msgspec
import pytest

from indexium_contracts import github
from indexium_devstack import jars, packs
from indexium_indexer.github.probe import CANDIDATE_PATHS, Prober
from indexium_jar.http.remote import DownloadPolicy

FABRIC = json.dumps({"schemaVersion": 1, "id": "lumen", "version": "1", "name": "Lumen"})
MODS_TOML = 'modLoader="javafml"\nloaderVersion="[47,)"\nlicense="MIT"\n[[mods]]\nmodId="glow"\nversion="1"\n'


@pytest.fixture
def prober(gh, session, make_client):
    policy = DownloadPolicy(allowed_hosts=frozenset({gh.github_host, gh.cdn_host}))
    return Prober(make_client(), session, policy)


def as_repo(gh, repo) -> github.Repository:
    return msgspec.convert(gh.repo_json(repo), github.Repository)


@pytest.mark.parametrize("path, content", [
    ("src/main/resources/fabric.mod.json", FABRIC),
    ("src/main/resources/META-INF/mods.toml", MODS_TOML),
    ("forge/src/main/resources/META-INF/mods.toml", MODS_TOML),
    ("common/src/main/resources/fabric.mod.json", FABRIC),
    ("mod-fabric-1.21/src/main/resources/fabric.mod.json", FABRIC),  # any module name
])
async def test_branch_manifest_registers_in_two_requests(gh, prober, path, content):
    repo = gh.add_repo("alice/mod", default_branch="dev")
    gh.set_file(repo, path, content, ref="dev")
    gh.set_file(repo, "build.gradle", "plugins {}", ref="dev")
    gh.set_file(repo, "src/main/resources/quilt.mod.json", "{}", ref="elsewhere")  # another branch: unseen
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.registered and result.source == f"branch:{path}"
    assert result.record is not None
    assert (gh.api_calls["GET /repos/{owner}/{repo}/git/trees/{ref}"],
            gh.api_calls["GET /repos/{owner}/{repo}/contents/{path}"]) == (1, 1)


async def test_the_usual_layout_wins_and_a_truncated_list_falls_back_to_probing(gh, prober):
    repo = gh.add_repo("alice/multi")
    for path in ("zzz/src/main/resources/fabric.mod.json", "fabric/src/main/resources/fabric.mod.json",
                 "forge/src/main/resources/META-INF/mods.toml"):
        gh.set_file(repo, path, FABRIC if path.endswith(".json") else MODS_TOML)
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.source == "branch:fabric/src/main/resources/fabric.mod.json"  # CANDIDATE_PATHS order
    repo.tree_truncated = True  # GitHub could not list it all: probe the usual paths one by one
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.source == "branch:fabric/src/main/resources/fabric.mod.json"
    assert gh.api_calls["GET /repos/{owner}/{repo}/contents/{path}"] == 1 + CANDIDATE_PATHS.index(
        "fabric/src/main/resources/fabric.mod.json") + 1


async def test_latest_release_jar_registers_and_prerelease_only_falls_back(gh, prober):
    repo = gh.add_repo("alice/jaronly")
    gh.add_release(repo, "v1-beta", [("jaronly-1.jar", jars.forge_jar("jaronly"))], prerelease=True)
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.registered and result.source == "release:v1-beta/jaronly-1.jar"
    # the branch was looked at first: one request (a repository without commits: 409), no probing
    assert gh.api_calls["GET /repos/{owner}/{repo}/git/trees/{ref}"] == 1
    assert gh.api_calls.get("GET /repos/{owner}/{repo}/contents/{path}", 0) == 0


async def test_skip_reasons(gh, prober):
    plain = gh.add_repo("alice/plain")
    gh.add_release(plain, "v1", [("tool.jar", jars.build_jar([("com/x/A.class", b"\xca\xfe\xba\xbe")]))])
    inst = gh.add_installation([plain])
    result = await prober.evaluate(as_repo(gh, plain), inst.id)
    assert not result.registered
    assert result.reason == "no mod manifest on branch main nor in the jars or packs of latest release v1"


@pytest.mark.parametrize("name, archive", [
    ("Crisp-1.0.zip", packs.resource_pack(15)),
    ("Lumina-2.zip", packs.shader_pack()),
    ("Fast-1.0.mrpack", packs.mrpack([])),
])
async def test_a_pack_in_the_latest_release_registers(gh, prober, name, archive):
    """A pack repository whose branch shows no pack file at its root (the pack built from a folder):
    its latest release's pack, read by the release job's pack reader, makes it a pack."""
    repo = gh.add_repo("dana/pack")
    gh.set_file(repo, "src/pack/pack.mcmeta", "{}")
    gh.add_release(repo, "v1", [("notes.txt", b"x"), (name, archive)])
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.registered and result.source == f"release:v1/{name}" and result.record is None


async def test_a_zip_that_is_no_pack_is_still_skipped(gh, prober):
    repo = gh.add_repo("dana/stuff")
    gh.add_release(repo, "v1", [("stuff.zip", packs.zip_of({"readme.txt": "hello", "a.jpg": b"x"}))])
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert not result.registered
    assert result.reason == "no mod manifest on branch main nor in the jars or packs of latest release v1"


async def test_a_pack_file_on_the_branch_registers_without_reading_a_release(gh, prober):
    repo = gh.add_repo("dana/rp")
    gh.set_file(repo, "pack.mcmeta", json.dumps({"pack": {"pack_format": 15, "description": "x"}}))
    gh.set_file(repo, "src/main/resources/fabric.mod.json", FABRIC)  # a mod's manifest ranks first
    inst = gh.add_installation([repo])
    result = await prober.evaluate(as_repo(gh, repo), inst.id)
    assert result.source == "branch:src/main/resources/fabric.mod.json" and result.record is not None
    other = gh.add_repo("dana/rp2")
    gh.set_file(other, "pack.mcmeta", "{}")
    inst = gh.add_installation([other])
    result = await prober.evaluate(as_repo(gh, other), inst.id)
    assert result.registered and result.source == "branch:pack.mcmeta" and result.record is None
    assert gh.api_calls.get("GET /repos/{owner}/{repo}/releases/latest", 0) == 0
