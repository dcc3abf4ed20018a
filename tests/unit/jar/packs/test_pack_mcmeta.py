"""pack.mcmeta: every generation of format declaration, mapped through a pack-format table.

The synthetic table below has minor versions (as 25w31a introduced) so the new
``min_format``/``max_format`` forms are checked against known answers; the shipped table is
checked in test_resourcepack.py and test_pack_formats_table.py."""

from __future__ import annotations

import pytest

from indexium_jar.gameversions import table_from as versions_from
from indexium_jar.packformats import ANY_MINOR, PackFormatTable, PackVersion
from indexium_jar.packs._common import Archive, description_of
from indexium_jar.packs._mcmeta import Meta, declared_range, parse

ROWS = [  # id, time, resource, data
    ("r1", "2020-01-01", (10, 0), (20, 0)),
    ("r2", "2021-01-01", (11, 0), (22, 0)),
    ("s3", "2021-06-01", (12, 0), (23, 0)),
    ("r3", "2022-01-01", (12, 0), (24, 0)),
    ("r4", "2023-01-01", (13, 0), (25, 0)),
    ("r5", "2023-06-01", (13, 1), (25, 1)),
    ("r6", "2024-01-01", (14, 0), (26, 0)),
]
PACKS = PackFormatTable([PackVersion(i, "snapshot" if i[0] == "s" else "release", t, r, d) for i, t, r, d in ROWS])
VERSIONS = versions_from([{"id": i, "type": "snapshot" if i[0] == "s" else "release", "releaseTime": t}
                          for i, t, _, _ in reversed(ROWS)])  # newest first, as Mojang lists them
ARCHIVE = Archive(names=["pack.mcmeta", "assets/x"], pack_table=PACKS, table=VERSIONS)


def versions(pack: dict, kind: str = "resource") -> tuple[str, ...]:
    meta = parse(__import__("json").dumps({"pack": pack}).encode(), ARCHIVE, kind)
    assert isinstance(meta, Meta)
    return meta.game_versions.versions


@pytest.mark.parametrize(("pack", "expected"), [
    ({"pack_format": 12}, ("r3", "s3")),
    ({"pack_format": 13}, ("r5", "r4")),  # a major admits its minors
    ({"pack_format": 12, "supported_formats": 13}, ("r5", "r4", "r3", "s3")),
    ({"pack_format": 11, "supported_formats": [11, 12]}, ("r3", "s3", "r2")),
    ({"pack_format": 11, "supported_formats": {"min_inclusive": 12, "max_inclusive": 14}},
     ("r6", "r5", "r4", "r3", "s3", "r2")),
    ({"min_format": 13, "max_format": 13}, ("r5", "r4")),
    ({"min_format": [13, 1], "max_format": [14]}, ("r6", "r5")),
    ({"min_format": [13], "max_format": [13, 0]}, ("r4",)),
    ({"pack_format": 10, "min_format": [13, 1], "max_format": 14}, ("r6", "r5", "r4", "r3", "s3", "r2", "r1")),
    ({"min_format": 13.0, "max_format": 13.9}, ("r5", "r4")),  # Gson's getAsInt truncates (a real Canvas pack)
])
def test_declared_formats_map_to_versions(pack, expected):
    assert versions(pack) == expected


def test_the_data_column_is_used_for_data_packs():
    assert versions({"pack_format": 24}, "data") == ("r3",)
    assert versions({"pack_format": 24}, "resource") == ()


def test_bad_declarations_are_notes_not_failures():
    meta = parse(b'{"pack": {"pack_format": "15", "supported_formats": [3], "min_format": [14], "max_format": 12}}',
                 ARCHIVE, "resource")
    assert isinstance(meta, Meta) and meta.game_versions.versions == ()
    assert len([w for w in meta.warnings if "ignored" in w]) == 3
    assert any("declares no usable pack format" in w for w in meta.warnings)
    assert declared_range({"pack_format": True})[0] is None  # JSON true is not format 1
    assert declared_range({"pack_format": 1e300})[0] is None
    assert declared_range({"pack_format": float("nan")})[0] is None


def test_formats_outside_the_table_are_said_not_guessed():
    meta = parse(b'{"pack": {"pack_format": 3}}', ARCHIVE, "resource")
    assert meta.game_versions.versions == () and any("older than Mojang's version metadata" in w for w in meta.warnings)
    meta = parse(b'{"pack": {"min_format": 14, "max_format": 99}}', ARCHIVE, "resource")
    assert meta.game_versions.versions == ("r6",) and any("regenerate" in w for w in meta.warnings)
    assert declared_range({"max_format": 14, "min_format": 14})[0] == ((14, 0), (14, ANY_MINOR))


@pytest.mark.parametrize("body", [b"{", b"[1]", b'{"pack": 5}', b"\xff\xfe{}", b"{" * 100_000])
def test_unusable_pack_mcmeta_is_a_problem(body):
    out = parse(body, ARCHIVE, "resource")
    assert not isinstance(out, Meta) and out.code in ("invalid_json", "invalid_manifest")


def test_oversized_pack_mcmeta_is_a_problem():
    assert parse(b" " * (2 << 20), ARCHIVE, "resource").code == "too_large"


@pytest.mark.parametrize(("component", "text"), [
    ("A pack", "A pack"),
    ({"text": "Hi ", "extra": [{"text": "there", "bold": True}, " all"]}, "Hi there all"),
    (["", {"text": "x"}, {"translate": "pack.desc", "fallback": "Fallback"}, 3], "xFallback3"),
    ({"translate": "only.key"}, "only.key"),
    ("\u00a7aGreen \u00a7lbold", "Green bold"),
    (None, None), ({}, None), (True, None),
])
def test_descriptions_flatten_text_components(component, text):
    assert description_of(component) == text


def test_deep_or_huge_components_are_bounded():
    deep: object = "x"
    for _ in range(5000):
        deep = {"text": "", "extra": [deep]}
    assert description_of(deep) is None  # cut at depth 16, no RecursionError
    assert len(description_of("y" * 100_000)) == 2000
