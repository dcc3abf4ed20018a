"""The pack resolver over an in-memory source: every case the issue names, in both syntaxes."""

from __future__ import annotations

import pytest

from indexium_jar.deps import (
    CandidateFile,
    CandidateVersion,
    MemorySource,
    Provided,
    Requested,
    parse_dependency,
    resolve,
)
from indexium_jar.model import Dependency

pytestmark = pytest.mark.unit
GAME = "1.21.4"


def dep(mod_id, raw=None, kind="required", loader="fabric", warn_only=False):
    return parse_dependency(Dependency(mod_id=mod_id, kind=kind, version_range=raw, warn_only=warn_only), loader)


def ver(mod_id, version, *deps, games=(GAME,), loaders=("fabric",), provides=(), name=None, published=""):
    file = CandidateFile(f"{mod_id}-{version}.jar", tuple(loaders), tuple(games), tuple(deps), tuple(provides))
    return CandidateVersion(f"p-{mod_id}", name or mod_id.capitalize(), f"{mod_id}@{version}", version,
                            files=(file,), published=published)


def source(*versions):
    projects: dict[str, list] = {}
    for v in versions:
        projects.setdefault(v.version_id.split("@")[0], []).append(v)
    return MemorySource(projects)


def picked(result):
    return {p.mod_id: p.version for p in result.picks}


def test_diamond_takes_the_newest_version_both_sides_accept():
    src = source(
        ver("app", "1.0", dep("left", ">=1"), dep("right")),
        ver("left", "1.2", dep("base", ">=1.0 <2")), ver("right", "3.0", dep("base", ">=1.5")),
        ver("base", "2.0"), ver("base", "1.6"), ver("base", "1.4"),
    )
    result = resolve(src, "fabric", GAME, [Requested("app")])
    assert result.ok and picked(result) == {"app": "1.0", "left": "1.2", "right": "3.0", "base": "1.6"}
    (base,) = [p for p in result.picks if p.mod_id == "base"]
    assert base.reasons == ("needed by Left 1.2: base >=1.0 <2", "needed by Right 3.0: base >=1.5")
    assert not base.requested and [p.requested for p in result.picks if p.mod_id == "app"] == [True]


def test_fabric_predicates_and_maven_ranges_both_constrain():
    fabric = source(ver("create", "0.6.0"), ver("create", "0.5.1"), ver("addon", "1", dep("create", "~0.5")))
    assert picked(resolve(fabric, "fabric", GAME, [Requested("addon")]))["create"] == "0.5.1"
    neo = source(
        ver("create", "6.0.1", loaders=("neoforge",)), ver("create", "0.5.1", loaders=("neoforge",)),
        ver("create", "0.5.1-SNAPSHOT", loaders=("neoforge",)),
        ver("addon", "1", dep("create", "[0.5,0.6)", loader="neoforge"), loaders=("neoforge",)),
    )
    result = resolve(neo, "neoforge", GAME, [Requested("addon")])
    assert picked(result)["create"] == "0.5.1"  # ComparableVersion: 0.5.1-SNAPSHOT < 0.5.1
    assert "needed by Addon 1: create [0.5,0.6)" in result.picks[1].reasons


def test_a_breaks_forces_an_older_version():
    src = source(
        ver("sodium", "0.6.0", dep("iris", "<1.8", kind="incompatible")), ver("sodium", "0.5.11"),
        ver("iris", "1.7.2"),
    )
    result = resolve(src, "fabric", GAME, [Requested("sodium"), Requested("iris")])
    assert result.ok and picked(result) == {"sodium": "0.5.11", "iris": "1.7.2"}


def test_a_breaks_never_adds_the_mod_it_breaks():
    src = source(ver("sodium", "0.6.0", dep("iris", "<1.8", kind="incompatible")), ver("iris", "1.7.2"))
    assert picked(resolve(src, "fabric", GAME, [Requested("sodium")])) == {"sodium": "0.6.0"}


def test_no_solution_says_why_in_words():
    src = source(
        ver("sodium", "0.6.0", dep("iris", "<1.8", kind="incompatible")),
        ver("iris", "1.8.0", games=("1.21.1",)), ver("iris", "1.7.2"),
    )
    result = resolve(src, "fabric", GAME, [Requested("sodium"), Requested("iris")])
    assert not result.ok and not result.picks
    assert result.problem == ("Sodium 0.6.0 breaks Iris older than 1.8, and no Iris 1.8 or newer supports 1.21.4 "
                              "on Fabric yet (newest for 1.21.4: 1.7.2)")


def test_no_version_for_the_game_names_the_newest():
    src = source(ver("lithium", "0.15", games=("1.21.1", "1.21")), ver("lithium", "0.14", games=("1.20.1",)))
    result = resolve(src, "fabric", GAME, [Requested("lithium")])
    assert result.problem == "no version of Lithium supports 1.21.4 on Fabric; its newest is 0.15 for 1.21.1, 1.21"


def test_optional_dependency_only_when_asked_and_only_if_it_resolves():
    src = source(
        ver("app", "1", dep("modmenu", ">=9", kind="optional", warn_only=True), dep("emi", kind="optional")),
        ver("modmenu", "13.0"), ver("emi", "1.1", games=("1.20.1",)),
    )
    plain = resolve(src, "fabric", GAME, [Requested("app")])
    assert picked(plain) == {"app": "1"}
    asked = resolve(src, "fabric", GAME, [Requested("app")], include_optional=True)
    assert picked(asked) == {"app": "1", "modmenu": "13.0"}
    (menu,) = [p for p in asked.picks if p.mod_id == "modmenu"]
    assert menu.optional and menu.reasons == ("optional for App 1: modmenu >=9",)
    assert asked.skipped_optional == (
        "Emi (optional for App 1) left out: no version of Emi supports 1.21.4 on Fabric; its newest is 1.1 for 1.20.1",)


def test_an_optional_dependency_with_a_range_is_added_in_range_when_asked_or_named_as_left_out():
    # A ranged optional dependency is also a limit (present, it must be in range), so the search
    # pins it "absent" first: asked for optional ones, it is still added, in range.
    src = source(
        ver("app", "1", dep("capped", "<2", kind="optional"), dep("gone", ">=5", kind="optional")),
        ver("capped", "2.0"), ver("capped", "1.5"), ver("gone", "4.0"),
    )
    assert picked(resolve(src, "fabric", GAME, [Requested("app")])) == {"app": "1"}
    asked = resolve(src, "fabric", GAME, [Requested("app")], include_optional=True)
    assert picked(asked) == {"app": "1", "capped": "1.5"}
    (capped,) = [p for p in asked.picks if p.mod_id == "capped"]
    assert capped.optional and capped.reasons == ("optional for App 1: capped <2",)
    assert len(asked.skipped_optional) == 1 and asked.skipped_optional[0].startswith("Gone (optional for App 1) left out: ")


def test_an_optional_neoforge_dependency_present_must_be_in_range():
    # FML refuses a present OPTIONAL mod outside its versionRange: the resolver avoids it.
    src = source(
        ver("jei", "11.0", loaders=("neoforge",)), ver("jei", "10.2", loaders=("neoforge",)),
        ver("app", "1", dep("jei", "[10,11)", kind="optional", loader="neoforge"), loaders=("neoforge",)),
        ver("recipes", "1", dep("jei", loader="neoforge"), loaders=("neoforge",)),
    )
    assert picked(resolve(src, "neoforge", GAME, [Requested("app"), Requested("recipes")]))["jei"] == "10.2"


def test_jar_in_jar_satisfies_the_dependency():
    src = source(
        ver("create", "6.0", dep("flywheel", "[1.0,2.0)", loader="neoforge"),
            dep("flywheel", "[1.0,2.0)", kind="embedded", loader="neoforge"), loaders=("neoforge",)),
        ver("flywheel", "1.0", loaders=("neoforge",)),
        ver("addon", "1", dep("flywheel", loader="neoforge"), loaders=("neoforge",)),
    )
    result = resolve(src, "neoforge", GAME, [Requested("create"), Requested("addon")])
    assert picked(result) == {"create": "6.0", "addon": "1"}  # no second flywheel jar
    assert result.provided == ("flywheel is included in Create 6.0",)


def test_fabric_provides_satisfies_another_mods_need():
    src = source(
        ver("fabric-api", "0.110", provides=(Provided("fabric-rendering-v1"),), name="Fabric API"),
        ver("shaders", "2", dep("fabric-rendering-v1", ">=1")),
    )
    result = resolve(src, "fabric", GAME, [Requested("fabric-api"), Requested("shaders")])
    assert picked(result) == {"fabric-api": "0.110", "shaders": "2"} and not result.not_indexed
    assert result.provided == ("fabric-rendering-v1 is included in Fabric API 0.110",)


def test_a_dependency_not_on_indexium_is_listed_not_dropped():
    src = source(ver("create", "0.5.1", dep("create-fabric", ">=0.5"), dep("minecraft", "1.21.4")))
    result = resolve(src, "fabric", GAME, [Requested("create")])
    assert result.ok and picked(result) == {"create": "0.5.1"}
    (missing,) = result.not_indexed
    assert (missing.mod_id, missing.range, missing.needed_by) == ("create-fabric", ">=0.5", ("Create 0.5.1",))
    assert missing.text == "not on Indexium: create-fabric >=0.5, needed by Create 0.5.1"


def test_loader_requirements_are_combined_for_the_exporter():
    src = source(ver("a", "1", dep("fabricloader", ">=0.15"), dep("java", ">=21")),
                 ver("b", "1", dep("fabricloader", ">=0.16 <0.17")))
    result = resolve(src, "fabric", GAME, [Requested("a"), Requested("b")])
    by_id = {r.mod_id: r for r in result.platform}
    assert by_id["fabricloader"].text == "Fabric Loader 0.16 up to but not including 0.17"
    assert by_id["fabricloader"].versions.contains("0.16.9") and not by_id["fabricloader"].versions.contains("0.15.11")
    assert by_id["java"].text == "Java 21 or newer"
    clash = source(ver("a", "1", dep("fabricloader", ">=0.16")), ver("b", "1", dep("fabricloader", "<0.15")))
    bad = resolve(clash, "fabric", GAME, [Requested("a"), Requested("b")])
    assert not bad.ok and bad.problem == "no Fabric Loader version satisfies every mod: A 1: >=0.16; B 1: <0.15"


def test_a_soft_conflict_is_a_warning_not_a_failure():
    src = source(ver("a", "1", dep("b", "*", kind="incompatible", warn_only=True)), ver("b", "2"))
    result = resolve(src, "fabric", GAME, [Requested("a"), Requested("b")])
    assert result.ok and picked(result) == {"a": "1", "b": "2"}
    assert result.warnings == ("A 1 conflicts with B (the loader warns; the game still starts); B 2 is in the pack",)


def test_quilt_runs_fabric_files_and_prefers_its_own():
    both = ver("lib", "2", loaders=("fabric",))
    quilt_file = CandidateFile("lib-2-quilt.jar", ("quilt",), (GAME,))
    mixed = CandidateVersion("p-lib", "Lib", "lib@2", "2", files=(both.files[0], quilt_file))
    result = resolve(MemorySource({"lib": [mixed]}), "quilt", GAME, [Requested("lib")])
    assert result.picks[0].file_id == "lib-2-quilt.jar"


def test_a_version_asked_by_hash_is_kept():
    src = source(ver("a", "2"), ver("a", "1"))
    assert picked(resolve(src, "fabric", GAME, [Requested("a", "a@1")])) == {"a": "1"}


def test_unknown_request_and_answers_are_deterministic():
    assert resolve(source(), "fabric", GAME, [Requested("nope")]).problem == "not on Indexium: nope"
    src = source(*(ver(f"m{i}", "1", dep(f"m{(i + 1) % 7}")) for i in range(7)))
    first = resolve(src, "fabric", GAME, [Requested(f"m{i}") for i in range(7)])
    again = resolve(src, "fabric", GAME, [Requested(f"m{i}") for i in reversed(range(7))])
    assert first == again and len(first.picks) == 7
