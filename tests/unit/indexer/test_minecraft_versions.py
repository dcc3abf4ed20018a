"""The Minecraft version table: the migration's seed, the refresh command's parsing, the order."""

from __future__ import annotations

import json
import re
from datetime import datetime
from importlib import resources

import pytest

from indexium_jar.gameversions import default_table, table_from
from indexium_ops.cli import parse_version_manifest

SNAPSHOT = resources.files("indexium_jar") / "data" / "minecraft_versions.json"
MIGRATION = resources.files("indexium_db") / "migrations" / "0006_indexer.sql"


def test_migration_seeds_exactly_the_shipped_snapshot_in_its_order():
    doc = json.loads(SNAPSHOT.read_text("utf-8"))
    rows = re.findall(r"\('([^']+)', '([^']+)', '([^']+)', (\d+)\)", MIGRATION.read_text("utf-8"))
    assert [(i, t, r) for i, t, r, _ in rows] == [(v["id"], v["type"], v["releaseTime"]) for v in doc["versions"]]
    assert [int(p) for *_, p in rows] == list(range(len(rows)))


def test_newest_first_follows_the_table_not_the_alphabet():
    table = default_table()
    assert table.newest_first(["1.21.2", "1.21.10", "1.9", "1.21.10", "26.1", "25w41a", "mystery"]) == [
        "26.1", "25w41a", "1.21.10", "1.21.2", "1.9", "mystery"]


def test_a_table_from_stored_rows_matches_the_snapshot():
    doc = json.loads(SNAPSHOT.read_text("utf-8"))
    rows = parse_version_manifest(doc)
    table = table_from([{"id": r.id, "type": r.type, "releaseTime": r.release_time.isoformat()} for r in rows])
    assert [(v.id, v.normalized) for v in table.versions] == [(v.id, v.normalized) for v in default_table().versions]


def test_parse_mojang_manifest_shape():
    doc = {"latest": {"release": "1.21.11"}, "versions": [
        {"id": "25w50a", "type": "snapshot", "url": "https://x", "time": "2025-12-10T10:00:00+00:00",
         "releaseTime": "2025-12-10T09:00:00+00:00", "sha1": "0" * 40, "complianceLevel": 1},
        {"id": "1.21.11", "type": "release", "releaseTime": "2025-12-09T12:00:00Z"},
    ]}
    rows = parse_version_manifest(doc)
    assert [(r.id, r.type) for r in rows] == [("25w50a", "snapshot"), ("1.21.11", "release")]
    assert rows[1].release_time == datetime.fromisoformat("2025-12-09T12:00:00+00:00")


@pytest.mark.parametrize("doc", [
    [], {}, {"versions": []}, {"versions": [{"type": "release"}]},
    {"versions": [{"id": "1.0", "type": "release", "releaseTime": "yesterday"}]},
    {"versions": [{"id": "1.0", "type": "release", "releaseTime": "2011-11-18T22:00:00"}]},  # no zone
    {"versions": [{"id": "1w01a", "type": "snapshot", "releaseTime": "2011-11-18T22:00:00+00:00"}]},  # no release
    {"versions": [{"id": "1.0", "type": "release", "releaseTime": "2011-11-18T22:00:00+00:00"}] * 2},
])
def test_unusable_manifests_are_refused(doc):
    with pytest.raises(ValueError):
        parse_version_manifest(doc)
