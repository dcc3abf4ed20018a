"""Game versions as players read them: compact ranges, snapshots left out unless asked."""

import pytest

from indexium_jar import gameversions as gv

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def releases():
    return [v.id for v in gv.default_table().releases]


def test_compact_ranges_follow_the_release_order_not_the_names(releases):
    assert gv.compact_versions(["1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.19.4"], releases) == [
        "1.19.4", "1.20.1–1.20.4"]  # 1.20 is missing: 1.19.4 and 1.20.1 are not consecutive
    assert gv.compact_versions(["1.21", "1.20.6", "1.20.1", "24w10a", "odd"], releases) == [
        "1.20.1", "1.20.6–1.21", "24w10a", "odd"]
    assert gv.compact_versions([], releases) == []


def test_a_whole_minor_line_reads_as_one_range(releases):
    line = ["1.20.6", "1.20.5", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20"]
    assert gv.compact_versions(line, releases) == ["1.20–1.20.6"]


def test_snapshots_and_pre_releases_are_hidden_unless_asked_or_all_there_is():
    mixed = ["1.20.6", "1.20.5", "1.20.5-rc1", "1.20.5-pre1", "24w14a", "1.20.4", "1.20.3", "1.20.2", "1.20.1", "1.20"]
    assert gv.shown_versions(mixed) == (["1.20–1.20.6"], 3)
    shown, hidden = gv.shown_versions(mixed, snapshots=True)
    assert hidden == 0 and shown[0] == "1.20–1.20.6" and set(shown[1:]) == {"1.20.5-rc1", "1.20.5-pre1", "24w14a"}
    assert gv.shown_versions(["24w14a", "1.20.5-pre1"]) == (["24w14a", "1.20.5-pre1"], 0)  # a snapshot-only mod
    assert gv.shown_versions([]) == ([], 0)


def test_is_release_asks_the_table_then_the_name():
    assert gv.is_release("1.20.1") and not gv.is_release("23w13a") and not gv.is_release("1.20.5-pre1")
    assert gv.is_release("1.99.3")  # newer than the table: a release by its name
    assert not gv.is_release("1.99-rc1")
