"""Is it a mod? The prober against the GitHub-shaped server (no database, no NATS)."""

from __future__ import annotations

import json

import msgspec
import pytest

from indexium_contracts import github
from indexium_devstack import jars
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
    assert result.reason == "no mod manifest on branch main nor in the jars of latest release v1"
