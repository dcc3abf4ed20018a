"""Dependencies in words, from the parsed form, for pages and APIs."""

from __future__ import annotations

import pytest

from indexium_jar.deps import describe, parse_dependency, range_words
from indexium_jar.deps.parsed import parse_range
from indexium_jar.model import Dependency

pytestmark = pytest.mark.unit


def words(mod_id, raw, kind="required", loader="fabric", name=None, warn_only=False):
    dep = parse_dependency(Dependency(mod_id=mod_id, kind=kind, version_range=raw, warn_only=warn_only), loader)
    return describe(dep, name)


@pytest.mark.parametrize(("args", "expected"), [
    (("fabric-api", ">=0.92", "required", "fabric", "Fabric API"), "needs Fabric API 0.92 or newer"),
    (("optifabric", "*", "incompatible", "fabric", "Optifabric"), "breaks Optifabric"),
    (("modmenu", "*", "optional", "fabric", "Mod Menu"), "works with Mod Menu (optional)"),
    (("create", "[0.5,0.6)", "required", "neoforge", "Create"), "needs Create 0.5 up to but not including 0.6"),
    (("create", "~0.5", "required", "fabric", "Create"), "needs Create 0.5 up to but not including 0.6"),
    (("create", "0.5.x", "required", "fabric", "Create"), "needs Create 0.5 up to but not including 0.6"),
    (("iris", "<1.8", "incompatible", "fabric", "Iris"), "breaks Iris older than 1.8"),
    (("jei", "[19.0.0]", "required", "neoforge", "JEI"), "needs JEI 19.0.0"),
    (("jei", "(,19]", "required", "neoforge", "JEI"), "needs JEI 19 or older"),
    (("jei", "(,1.0],[1.2,)", "required", "neoforge", "JEI"), "needs JEI 1.0 or older or 1.2 or newer"),
    (("jei", "1.19.2", "required", "neoforge", "JEI"), "needs JEI (1.19.2 recommended)"),
    (("minecraft", '["1.20","1.20.1"]', "required", "fabric", None), "needs Minecraft 1.20 or 1.20.1"),
    (("fabricloader", ">=0.15", "required", "fabric", None), "needs Fabric Loader 0.15 or newer"),
    (("flywheel", "[1.0,2.0)", "embedded", "neoforge", "Flywheel"), "includes Flywheel 1.0 up to but not including 2.0"),
    (("qsl", {"all": [">=6.0", "<7.0"]}, "required", "quilt", "QSL"), "needs QSL 6.0 up to but not including 7.0"),
    (("emi", None, "optional", "quilt", "EMI"), "works with EMI (optional)"),
])
def test_describe(args, expected):
    mod_id, raw, kind, loader, name = args
    if isinstance(raw, dict):
        import json
        raw = json.dumps(raw)
    assert words(mod_id, raw, kind, loader, name) == expected


def test_soft_conflict_and_unreadable_range():
    assert words("sodium", "<0.5", "incompatible", warn_only=True, name="Sodium") == \
        "conflicts with Sodium older than 0.5 (the loader warns; the game still starts)"
    assert words("x", ">1.x", name="X") == "needs X (its range '>1.x' could not be read, so any version is taken)"


def test_range_words_of_sets():
    assert range_words(parse_range(">=1.0 <=2.0", "fabric")[0]) == "1.0 to 2.0"
    assert range_words(parse_range(">1.0 <2.0", "fabric")[0]) == "newer than 1.0 and older than 2.0"
    assert range_words(parse_range("(1.0,2.0]", "maven")[0]) == "newer than 1.0 up to 2.0"
    assert range_words(parse_range(">=2 <1", "fabric")[0]) == "(no version satisfies this range)"
    assert range_words(parse_range(None, "maven")[0]) == ""
