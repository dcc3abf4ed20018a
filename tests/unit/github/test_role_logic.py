"""Pure logic of the GitHub role and of ingest's redeliverer: manifest paths, what to send
(the card: tests/unit/indexer/test_modcard.py)."""

from __future__ import annotations

import msgspec
import pytest

from indexium_contracts import github, ingest, onboarding, registry
from indexium_devstack.fakegithub import generate_rsa_pem
from indexium_indexer.github.onboarding import manifests_after
from indexium_indexer.github.probe import CANDIDATE_PATHS, is_manifest_path, jar_path, source_record
from indexium_indexer.github.settings import Settings as RoleSettings
from indexium_indexer.github.sync import Pacer, fingerprint, oldest_first, to_send
from indexium_ingest.redeliver import group
from indexium_ingest.settings import Settings as IngestSettings
from indexium_platform.settings import SettingsError, load

PEM = generate_rsa_pem()[0].decode()


def test_candidate_paths_cover_single_and_multi_module_layouts():
    assert CANDIDATE_PATHS[0] == "src/main/resources/fabric.mod.json"
    for path in ("src/main/resources/META-INF/mods.toml", "fabric/src/main/resources/fabric.mod.json",
                 "neoforge/src/main/resources/META-INF/neoforge.mods.toml", "forge/src/main/resources/META-INF/mods.toml",
                 "common/src/main/resources/fabric.mod.json", "quilt/src/main/resources/quilt.mod.json"):
        assert path in CANDIDATE_PATHS
    assert jar_path("fabric/src/main/resources/fabric.mod.json") == "fabric.mod.json"
    assert jar_path("src/main/resources/META-INF/mods.toml") == "META-INF/mods.toml"


@pytest.mark.parametrize("path, expected", [
    ("src/main/resources/fabric.mod.json", True),
    ("mod-fabric/src/main/resources/fabric.mod.json", True),
    ("neoforge/src/main/resources/META-INF/neoforge.mods.toml", True),
    ("src/main/resources/META-INF/mods.toml", True),
    ("src/main/resources/quilt.mod.json", True),
    ("README.md", False),
    ("src/main/resources/assets/lumen/lang/en_us.json", False),
    ("docs/fabric.mod.json", False),
])
def test_manifest_paths_in_pushes(path, expected):
    assert is_manifest_path(path) is expected


def test_manifests_after_a_push_follow_the_commits_in_order():
    commits = [github.PushCommit(id="1", added=["src/main/resources/fabric.mod.json", "README.md"]),
               github.PushCommit(id="2", removed=["src/main/resources/fabric.mod.json"],
                                 modified=["forge/src/main/resources/META-INF/mods.toml"])]
    assert manifests_after(commits) == ["forge/src/main/resources/META-INF/mods.toml"]


def _release(id_, tag, created, assets=(), draft=False, **kw) -> github.Release:
    return github.Release(id=id_, tag_name=tag, draft=draft, created_at=created, published_at=created,
                          assets=[github.ReleaseAsset(id=a, name=f"{tag}-{a}.jar", browser_download_url="u",
                                                      download_count=0) for a in assets], **kw)


def test_what_is_sent_oldest_first_once_and_again_only_when_changed():
    old = _release(1, "v1", "2024-01-01T00:00:00Z", [11])
    new = _release(2, "v2", "2024-02-01T00:00:00Z", [21])
    hooked = _release(3, "v3", "2024-03-01T00:00:00Z", [31])
    draft = _release(4, "v4", "2024-04-01T00:00:00Z", [41], draft=True)
    assert [r.id for r in oldest_first([hooked, new, old])] == [1, 2, 3]
    releases = [hooked, draft, new, old]
    assert [r.id for r in to_send(releases, {}, {})] == [1, 2, 3]
    sent = {1: fingerprint(old), 2: fingerprint(new)}
    indexed = {3: frozenset({31})}  # a webhook indexed v3 with its jar already
    assert to_send(releases, sent, indexed) == []
    edited = msgspec.structs.replace(new, body="now with changelog")
    assert [r.id for r in to_send([edited, old, hooked], sent, indexed)] == [2]
    more_jars = _release(3, "v3", "2024-03-01T00:00:00Z", [31, 32])
    assert [r.id for r in to_send([more_jars], sent, indexed)] == [3]
    counted = msgspec.structs.replace(old, assets=[msgspec.structs.replace(old.assets[0], download_count=99)])
    assert fingerprint(counted) == fingerprint(old)  # download counts are not a change


async def test_pacer_spaces_sends_per_installation():
    now = [0.0]
    slept = []

    async def sleep(s):
        slept.append(s)
        now[0] += s

    pacer = Pacer(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        await pacer.wait(1)
    await pacer.wait(2)  # another installation is not held back
    assert slept == [0.25] * 4


def test_redeliveries_grouped_by_guid():
    items = [
        {"id": 5, "guid": "a", "delivered_at": "2024-01-01T00:05:00Z", "status_code": 202, "event": "release"},
        {"id": 4, "guid": "b", "delivered_at": "2024-01-01T00:04:00Z", "status_code": 0, "event": "push"},
        {"id": 3, "guid": "a", "delivered_at": "2024-01-01T00:03:00Z", "status_code": 503, "event": "release"},
        {"id": 2, "guid": "c", "delivered_at": "2024-01-01T00:02:00Z", "status_code": 400, "event": "release"},
    ]
    groups = group(items)
    assert [g.guid for g in groups] == ["c", "a", "b"]  # oldest first
    a = next(g for g in groups if g.guid == "a")
    assert a.ok and a.latest_id == 5
    b = next(g for g in groups if g.guid == "b")
    assert not b.ok and b.retryable and b.latest_id == 4
    assert not next(g for g in groups if g.guid == "c").retryable


def test_role_settings_need_the_app_key(tmp_path):
    base = {"INDEXIUM_GITHUB_APP_ID": "42"}
    with pytest.raises(SettingsError, match="PRIVATE_KEY"):
        load(RoleSettings, base)
    with pytest.raises(SettingsError, match="INDEXIUM_GITHUB_APP_ID"):
        load(RoleSettings, {"INDEXIUM_GITHUB_APP_PRIVATE_KEY": PEM})
    key = tmp_path / "app.pem"
    key.write_text(PEM)
    settings = load(RoleSettings, {**base, "INDEXIUM_GITHUB_APP_PRIVATE_KEY_PATH": str(key)})
    assert settings.port == 8085 and settings.app_config().app_id == 42


def test_ingest_runs_without_the_app_or_with_all_of_it():
    base = {"INDEXIUM_WEBHOOK_SECRET": "s"}
    assert load(IngestSettings, base).github_app() is None
    config = load(IngestSettings, {**base, "INDEXIUM_GITHUB_APP_ID": "7", "INDEXIUM_GITHUB_APP_PRIVATE_KEY": PEM})
    assert config.github_app().app_id == 7
    with pytest.raises(SettingsError, match="go together"):
        load(IngestSettings, {**base, "INDEXIUM_GITHUB_APP_ID": "7"})


def test_the_github_consumer_is_registered_for_the_app_subjects():
    assert onboarding.GITHUB in registry.CONSUMERS
    assert set(onboarding.GITHUB.filter_subjects) == {ingest.INSTALLATION, ingest.INSTALLATION_REPOSITORIES,
                                                      ingest.PUSH, ingest.REPOSITORY, ingest.CATCH_UP}
    assert ingest.RELEASE not in onboarding.GITHUB.filter_subjects  # the release indexer keeps those
    assert {onboarding.REDELIVERY_LOCK, onboarding.REDELIVERED} <= set(registry.BUCKETS)


def _bare(*names: str, **fields) -> github.Release:
    return github.Release(id=1, tag_name="v1", assets=[
        github.ReleaseAsset(id=i, name=n, browser_download_url=f"https://github.com/a/b/releases/download/v1/{n}")
        for i, n in enumerate(names)], **fields)


def test_a_release_is_short_of_jars_with_none_or_fewer_than_each_recent_bare():
    from indexium_indexer.github.watch import jars_short

    assert jars_short(_bare(), [])  # published bare: the upload comes afterwards
    assert jars_short(_bare("mod-sources.jar", "notes.txt"), [])  # nothing a loader runs
    assert not jars_short(_bare("mod.jar"), [])  # a first release with its jar
    assert jars_short(_bare("mod-fabric.jar"), [2, 2, 3])  # the neoforge jar is still uploading
    assert not jars_short(_bare("mod-fabric.jar"), [2, 1, 2])  # one recent release had one jar too


def test_the_reread_schedule_is_increasing_bounded_and_may_be_off():
    base = {"INDEXIUM_GITHUB_APP_ID": "1", "INDEXIUM_GITHUB_APP_PRIVATE_KEY": PEM}
    assert load(RoleSettings, base).reread_schedule_s[:3] == (15.0, 30.0, 60.0)
    assert load(RoleSettings, {**base, "INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS": "0.5,1,2"}).reread_schedule_s == (0.5, 1.0, 2.0)
    assert load(RoleSettings, {**base, "INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS": ""}).reread_schedule_s == ()
    for bad in ("60,15", "0,15", "15,15", ",".join(str(i) for i in range(1, 22)), "90000"):
        with pytest.raises(SettingsError, match="REREAD_SCHEDULE"):
            load(RoleSettings, {**base, "INDEXIUM_GITHUB_REREAD_SCHEDULE_SECONDS": bad})


def test_the_release_job_says_who_reads_a_bare_release_again():
    from indexium_indexer.release.worker import _who_rereads

    repo = github.Repository(id=5, name="b", full_name="a/b", owner=github.Account(id=9, login="a"))

    def event(release, installation=True, delivery="d1", action="published"):
        return ingest.ReleaseReceived(delivery_id=delivery, received_at="2026-01-01T00:00:00Z",
                                      webhook=github.ReleaseWebhook(
                                          action=action, release=release, repository=repo,
                                          installation=github.Installation(id=3) if installation else None))

    assert _who_rereads(event(_bare())).startswith("the GitHub role")
    assert "while" not in _who_rereads(event(_bare()))  # says what happens without one
    assert "no GitHub role running" in _who_rereads(event(_bare()))
    assert _who_rereads(event(_bare(), installation=False)).startswith("none: not sent through the GitHub App")
    assert _who_rereads(event(_bare(immutable=True))).startswith("none: an immutable release")
    assert _who_rereads(event(_bare(), delivery="backfill:1:ab")).startswith("none")
    assert _who_rereads(event(_bare("mod.jar"))) is None  # not ignored for lack of jars
    assert _who_rereads(event(_bare(), action="deleted")) is None
