"""The slug rule is written once (indexium_contracts.slugs) and agrees with the mods table's CHECK."""

from __future__ import annotations

from pathlib import Path

from indexium_contracts.slugs import SLUG_PATTERN, SLUG_RE, is_slug

ROOT = Path(__file__).resolve().parents[3]


def test_what_is_a_slug():
    assert is_slug("sodium") and is_slug("create_fabric-2") and is_slug("0x")
    for bad in ("a", "Sodium", "-x", "x" * 65, "abc\n", "ab c", "ab/c", "äb", ""):
        assert not is_slug(bad), bad
    assert is_slug("x" * 64)


def test_the_patterns_agree_with_the_table_check():
    init = (ROOT / "libs/db/src/indexium_db/migrations/0001_init.sql").read_text()
    assert f"CHECK (slug ~ '{SLUG_PATTERN}')" in init
    assert SLUG_RE.pattern.removesuffix(r"\Z") == SLUG_PATTERN.removesuffix("$")


def test_no_other_copy_of_the_rule_in_the_source():
    body = SLUG_RE.pattern.removeprefix("^").removesuffix(r"\Z")
    copies = [str(p.relative_to(ROOT)) for base in ("services", "libs") for p in (ROOT / base).rglob("*.py")
              if body in p.read_text() and p.name != "slugs.py"]
    assert copies == []
