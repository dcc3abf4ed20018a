"""A long search for a pack holding a mod that fits no pack is cut short (``resolver._Rounds``,
``resolver._doomed``): the answer is then why that mod fits no pack, as the search says it for the
doomed mods alone. Such a pack has no solution whatever the search would have tried (checked
against the whole search on random catalogues); a search that ends within ``EARLY_ROUNDS`` rounds
answers exactly as before."""

from __future__ import annotations

import random

import pytest

from indexium_jar.deps import MemorySource, Provided, Requested, resolver
from tests.unit.jar.deps.test_resolver import GAME, dep, source, ver
from tests.unit.jar.deps.test_straight import pack

pytestmark = pytest.mark.unit


def whole(src, loader, asked, include_optional=False):
    """The answer of the whole search, never cut short."""
    resolver._EARLY = False
    try:
        return resolver.resolve(src, loader, GAME, asked, include_optional)
    finally:
        resolver._EARLY = True


def exploding_pack():
    # Twelve mods of three versions each need Lib (any version); Late, asked for too, needs Lib 0.0.1
    # or newer in each of its four versions, and Lib's only version for the game is 0.0.0. The search
    # pins Late last (it has the most versions), fails, and backtracks through the twelve others'
    # 3^12 combinations, each of which fails the same way.
    versions = [ver("lib", "0.0.0"), ver("lib", "0.1.0", games=("1.21.1",), name="Lib")]
    for i in range(12):
        versions += [ver(f"a{i:02}", f"1.{n}", dep("lib")) for n in range(3)]
    versions += [ver("late", f"{n}", dep("lib", ">=0.0.1")) for n in range(1, 5)]
    return source(*versions), [Requested(f"a{i:02}") for i in range(12)] + [Requested("late")]


def test_a_mod_that_fits_no_pack_ends_a_long_search_with_its_reason():
    src, asked = exploding_pack()
    result = resolver.resolve(src, "fabric", GAME, asked)
    assert not result.ok and not result.picks
    assert result.problem == (
        "Late 4 needs Lib 0.0.1 or newer, and Late 3 needs Lib 0.0.1 or newer, and Late 2 needs Lib 0.0.1 or "
        "newer, and Late 1 needs Lib 0.0.1 or newer, and no Lib 0.0.1 or newer supports 1.21.4 on Fabric yet "
        "(newest for 1.21.4: 0.0.0)")
    # (the same words as the search for Late alone; the whole search of the pack gives up instead)
    assert resolver.resolve(src, "fabric", GAME, [Requested("late")]).problem == result.problem
    assert whole(src, "fabric", asked).problem == resolver.TOO_DEEP


def test_a_search_that_ends_before_the_check_answers_as_the_whole_search():
    # Late is pinned first (fewest versions): the search fails at once, naming only Late's needs.
    src = source(ver("lib", "0.0.0"), ver("late", "1", dep("lib", ">=0.0.1")),
                 *(ver("other", f"1.{n}", dep("lib")) for n in range(3)))
    asked = [Requested("late"), Requested("other")]
    assert resolver.resolve(src, "fabric", GAME, asked) == whole(src, "fabric", asked)
    assert resolver.resolve(src, "fabric", GAME, asked).problem == (
        "Late 1 needs Lib 0.0.1 or newer, and no Lib 0.0.1 or newer supports 1.21.4 on Fabric yet "
        "(newest for 1.21.4: 0.0.0)")


def test_a_mod_another_mod_provides_is_never_counted_missing(monkeypatch):
    # App needs Lib 2 or newer; Lib's own jar is 1.0, but Bundle, asked for too, provides Lib 2.0.
    monkeypatch.setattr(resolver, "EARLY_ROUNDS", 0)
    src = source(ver("lib", "1.0"), ver("app", "1", dep("lib", ">=2")),
                 ver("bundle", "1", provides=(Provided("lib", "2.0"),)), ver("late", "1", dep("nope", ">=1")),
                 ver("nope", "0.5"))
    index = resolver._Index(src, "fabric", GAME)
    roots = [resolver._Req(m, resolver.VersionSet("fabric"), True) for m in ("app", "bundle", "late")]
    assert [r.mod_id for r in resolver._doomed(index, roots)] == ["late"]
    assert resolver.resolve(src, "fabric", GAME, [Requested("app"), Requested("bundle")]).ok


def test_a_needed_mod_that_fits_no_pack_dooms_what_needs_it_through_a_chain(monkeypatch):
    # Top needs Mid (any version); every Mid for the game needs Lib 2 or newer; Lib has only 1.0.
    src = source(ver("lib", "1.0"), ver("mid", "1", dep("lib", ">=2")), ver("mid", "2", dep("lib", ">=2")),
                 ver("top", "1", dep("mid")), ver("fine", "1"))
    index = resolver._Index(src, "fabric", GAME)
    roots = [resolver._Req(m, resolver.VersionSet("fabric"), True) for m in ("fine", "top")]
    assert [r.mod_id for r in resolver._doomed(index, roots)] == ["top"]
    monkeypatch.setattr(resolver, "EARLY_ROUNDS", 0)
    result = resolver.resolve(src, "fabric", GAME, [Requested("fine"), Requested("top")])
    assert not result.ok and result.problem == resolver.resolve(src, "fabric", GAME, [Requested("top")]).problem


@pytest.mark.parametrize("loader", ["fabric", "quilt", "neoforge"])
def test_a_cut_search_never_misses_a_solution(loader, monkeypatch):
    # With the check at the search's first round, on random catalogues (diamonds, breaks, optional
    # limits, jar-in-jar, provides, versions asked for by hash): where the search was cut short, the
    # whole search finds no solution either, and the answer is the search's for the doomed mods
    # alone; everywhere else the answers are the whole search's. With optional dependencies asked
    # for, a cut only words why one is left out differently: the pack is the same.
    monkeypatch.setattr(resolver, "EARLY_ROUNDS", 0)
    cuts = []
    original = resolver._doomed

    def spied(index, roots):
        found = original(index, roots)
        if found and len(found) < len(roots):
            cuts.append([Requested(r.mod_id, r.version_id) for r in found])
        return found

    monkeypatch.setattr(resolver, "_doomed", spied)
    rng = random.Random(f"early-{loader}")
    cut = 0
    for n in range(200):
        projects, asked = pack(rng, loader, 2, 12)
        include_optional = n % 4 == 0
        cuts.clear()
        answer = resolver.resolve(MemorySource(projects), loader, GAME, asked, include_optional)
        slow = whole(MemorySource(projects), loader, asked, include_optional)
        if not cuts:
            assert answer == slow
        elif include_optional:
            assert (answer.ok, answer.picks, answer.not_indexed, answer.platform) == \
                (slow.ok, slow.picks, slow.not_indexed, slow.platform)
        else:
            cut += 1
            assert not slow.ok and not answer.ok
            assert answer.problem == whole(MemorySource(projects), loader, cuts[0]).problem
    assert cut > 10
