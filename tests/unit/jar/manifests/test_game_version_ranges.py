"""Minecraft version table, McVersionLookup normalization, Fabric/Quilt predicates, Maven ranges."""

import json

import pytest
from indexium_jar import gameversions as gv
from indexium_jar.manifests import version_syntax as vs


@pytest.fixture(scope="module")
def table():
    return gv.default_table()


def normalized(table, version_id):
    return table.by_id[version_id].normalized


def test_shipped_table_is_newest_first_and_has_every_release(table):
    times = [v.release_time for v in table.versions]
    assert times == sorted(times, reverse=True)
    releases = {v.id for v in table.releases}
    assert {"1.0", "1.1", "1.2.5", "1.5", "1.6.4", "1.7.2", "1.7.10", "1.8.9", "1.12.2", "1.16.5"} <= releases
    assert {"1.17", "1.18.2", "1.19.4", "1.20", "1.20.6"} <= releases
    assert {f"1.21.{p}" for p in range(1, 11)} <= releases
    assert {"26.1", "1.21"} <= releases
    assert {"23w13a", "1.20-pre1", "1.20-rc1", "24w14a", "1.21-pre1", "26.1-snapshot-1", "26w14a"} <= set(table.by_id)


@pytest.mark.parametrize(
    ("version_id", "expected"),
    [
        ("23w13a", "1.20-alpha.23.13.a"),
        ("1.20-pre1", "1.20-beta.1"),
        ("1.16-pre1", "1.16-rc.1"),  # pre-releases up to 1.16 are "rc"
        ("1.16-rc1", "1.16-rc.9"),  # 1.16's RCs follow its 8 pre-releases
        ("1.20-rc1", "1.20-rc.1"),
        ("26.1-snapshot-1", "26.1-alpha.1"),
        ("26.1-pre-1", "26.1-beta.1"),
        ("26.1-rc-1", "26.1-rc.1"),
        ("26w14a", "26.1.1-alpha.26.14.a"),  # after 26.1 with no later release: next patch
        ("20w45a", "1.17-alpha.20.45.a"),  # overlaps 1.16.5 yet belongs to 1.17
        ("1.14 Pre-Release 1", "1.14-rc.1"),
        ("b1.8.1", "1.0.0-beta.8.1"),
        ("1.21.10", "1.21.10"),
    ],
)
def test_normalization_matches_mc_version_lookup(table, version_id, expected):
    assert normalized(table, version_id) == expected


@pytest.mark.parametrize(
    ("raw", "included", "excluded"),
    [
        (">=1.20 <1.21", ["1.20", "1.20.6", "1.21-pre1"], ["1.21", "23w13a", "1.19.4"]),  # <1.21 admits 1.21 pre-releases
        ("1.20.x", ["1.20", "1.20.6", "23w13a", "1.20-pre1"], ["1.21", "1.19.4"]),  # x-range = ~1.20- in the loader
        ("~1.20", ["1.20", "1.20.6"], ["23w13a", "1.20-rc1", "1.21"]),
        (">=1.20-", ["23w12a", "1.20-pre1", "1.20", "26.1", "26w14a"], ["1.19.4"]),  # trailing '-' admits pre-releases
        (["1.20", "1.20.1"], ["1.20", "1.20.1"], ["1.20.2", "1.19.4"]),  # array = OR
        ("*", ["1.0", "26.1", "23w13a"], []),
        ("", ["1.0", "26.1"], []),
        ("^1.20", ["1.20", "1.21.10"], ["26.1", "1.19.4"]),
        ("=1.20.1", ["1.20.1"], ["1.20"]),
        (">1.21.9", ["1.21.10", "1.21.10-rc1", "26.1"], ["1.21.9", "1.21.9-rc1"]),
        ("<=1.16.5", ["1.16.5", "1.0"], ["1.17"]),
        (">=26.1", ["26.1", "26w14a"], ["26.1-rc-1", "1.21.11"]),
        (">=26.1-", ["26.1-snapshot-1", "26.1"], ["1.21.11"]),
    ],
)
def test_fabric_predicates(table, raw, included, excluded):
    versions = gv.expand("fabric", raw, table)
    assert set(included) <= set(versions)
    assert not set(excluded) & set(versions)


def test_expansion_is_newest_first(table):
    assert gv.expand("fabric", ["1.20", "1.20.1"], table) == ("1.20.1", "1.20")
    assert gv.expand("maven", "[1.20.4,1.20.6]", table) == ("1.20.6", "1.20.5", "1.20.4")


@pytest.mark.parametrize("raw", [">=1.20.x", "<1.x.2", ">", "<foo"])
def test_predicates_the_loader_rejects_give_no_versions_and_a_warning(table, raw):
    result = gv.evaluate("fabric", raw, table)
    assert result.versions == ()
    assert result.warnings


def test_quilt_forms(table):
    both = gv.expand("quilt", {"all": [">=1.20-", "<1.20.2-"]}, table)
    assert both == ("1.20.1", "1.20", "1.20-rc1", "1.20-pre2", "1.20-pre1", "23w18a", "23w13a", "23w12a")
    anyof = gv.expand("quilt", {"any": ["=1.19.2", "=1.20.1"]}, table)
    assert anyof == ("1.20.1", "1.19.2")
    assert gv.expand("quilt", ["=1.19.2", {"all": [">=1.20", "<=1.20.1"]}], table) == ("1.20.1", "1.20", "1.19.2")
    # quilt-loader: a bare version means ^version
    assert "1.21.10" in gv.expand("quilt", "1.20", table) and "1.19.4" not in gv.expand("quilt", "1.20", table)
    assert gv.evaluate("quilt", {"one": []}, table).warnings


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("[1.20.1,1.21)", ("1.20.6", "1.20.5", "1.20.4", "1.20.3", "1.20.2", "1.20.1")),
        ("[1.21.1]", ("1.21.1",)),
        ("[1.20.6,1.21.1]", ("1.21.1", "1.21", "1.20.6")),
        ("(1.21.8,1.21.10]", ("1.21.10", "1.21.9")),
    ],
)
def test_maven_ranges(table, raw, expected):
    assert gv.expand("maven", raw, table) == expected


def test_maven_open_ranges_and_unions(table):
    assert gv.expand("maven", "[1.19,)", table)[-1] == "1.19"
    assert "26.1" in gv.expand("maven", "[1.19,)", table)
    assert gv.expand("maven", "(,1.20]", table)[0] == "1.20"
    union = gv.expand("maven", "[1.18,1.19),[1.20,)", table)
    assert "1.18.2" in union and "1.20" in union and "1.19.2" not in union
    # Maven ranges cover releases only: (Neo)Forge builds target releases
    assert "23w13a" not in gv.expand("maven", "[1.19,)", table)


def test_maven_bare_version_is_a_soft_requirement(table):
    result = gv.evaluate("maven", "1.19.2", table)
    assert result.versions == ("1.19.2",)
    assert "soft requirement" in result.warnings[0]


@pytest.mark.parametrize("raw", ["41,)", ">=1.20 <=1.20.1", "[1.20", "[1.20,1.19]", "(1.20)", "[1.18,1.19),1.20"])
def test_malformed_maven_gives_no_constraint_and_a_warning(table, raw):
    result = gv.evaluate("maven", raw, table)
    assert result.versions == ()
    assert "no constraint" in result.warnings[0]


def test_minimum_and_exact(table):
    assert gv.expand("minimum", "1.20.5", table)[-3:] == ("1.21", "1.20.6", "1.20.5")
    assert gv.expand("exact", "1.12.2", table) == ("1.12.2",)
    assert gv.evaluate("exact", "extension 'minecraft' property 'mcVersion'", table).warnings


def test_load_versions_accepts_mojangs_manifest_shape(tmp_path):
    manifest = {
        "latest": {"release": "1.21.12", "snapshot": "25w50a"},
        "versions": [
            {"id": "25w50a", "type": "snapshot", "url": "x", "releaseTime": "2025-12-10T10:00:00+00:00"},
            {"id": "1.21.12", "type": "release", "url": "x", "releaseTime": "2025-12-01T10:00:00+00:00"},
            {"id": "25w45a", "type": "snapshot", "url": "x", "releaseTime": "2025-11-04T10:00:00+00:00"},
            {"id": "1.21.10", "type": "release", "url": "x", "releaseTime": "2025-10-07T10:00:00+00:00"},
        ],
    }
    path = tmp_path / "version_manifest_v2.json"
    path.write_text(json.dumps(manifest))
    table = gv.load_versions(path)
    assert [v.id for v in table.versions] == ["25w50a", "1.21.12", "25w45a", "1.21.10"]
    assert table.by_id["25w50a"].normalized == "1.21.13-alpha.25.50.a"  # no later release: next patch
    assert gv.expand("fabric", ">=1.21.12", table) == ("25w50a", "1.21.12")


def test_semver_comparison_orders_pre_releases():
    order = ["1.20-", "1.20-alpha.23.13.a", "1.20-beta.1", "1.20-rc.1", "1.20", "1.20.1-alpha.1", "1.20.1"]
    parsed = [vs.parse_semver(v) for v in order]
    for a, b in zip(parsed, parsed[1:], strict=False):
        assert vs.compare_semver(a, b) < 0
    assert vs.compare_semver(vs.parse_semver("1.20.0+build"), vs.parse_semver("1.20")) == 0


@pytest.mark.parametrize(
    "first", ["indexium_jar.gameversions", "indexium_jar.manifests", "indexium_jar.manifests.version_syntax"]
)
def test_modules_import_in_any_order(first):
    # gameversions imports manifests.version_syntax lazily, because manifests imports gameversions.
    import subprocess
    import sys

    code = f"import {first}; from indexium_jar.gameversions import expand; print(expand('fabric', '1.20.x')[-1])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "23w12a"
