"""The resolver's straight path (``resolver._Straight``) answers exactly as resolvelib alone.

Random catalogues with diamonds, ranges in three syntaxes, ``breaks``, optional limits,
jar-in-jar, ``provides``, versions asked for by hash and dependencies that are not indexed;
each request is resolved twice, with the straight path and with resolvelib only, and the
whole ``Resolution`` (picks, reasons, problems, warnings, platform requirements) must be equal.
"""

from __future__ import annotations

import random

import pytest

from indexium_jar.deps import CandidateFile, CandidateVersion, MemorySource, Provided, Requested, parse_dependency
from indexium_jar.deps import resolver
from indexium_jar.model import Dependency

pytestmark = pytest.mark.unit
GAME = "1.21.4"
RANGES = {
    "fabric": lambda rng, v: rng.choice([None, "*", f">={v}", f"<{v}", f"~{v}", f">={v} <{v + 2}", f"{v}.x"]),
    "quilt": lambda rng, v: rng.choice([None, "*", f">={v}", f"<{v}", f"~{v}", f"{v}"]),
    "neoforge": lambda rng, v: rng.choice([None, f"[{v},)", f"[{v},{v + 2})", f"(,{v}]", f"[{v}]"]),
}


def catalogue(rng: random.Random, loader: str, mods: int = 40) -> dict[str, list[CandidateVersion]]:
    projects: dict[str, list[CandidateVersion]] = {}
    for m in range(mods):
        versions = []
        for n in range(rng.randint(1, 5)):
            version = f"{n + 1}.{rng.randint(0, 3)}"
            deps = []
            for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
                target = rng.randrange(mods + 3) if rng.random() < 0.1 else rng.randrange(mods)  # (m{mods}+: not indexed)
                if target == m:
                    continue
                kind = rng.choices(["required", "incompatible", "optional", "embedded"], [80, 6, 8, 6])[0]
                raw = RANGES[loader](rng, rng.randint(1, 4)) if rng.random() < 0.5 else None
                deps.append(Dependency(mod_id=f"m{target}", kind=kind, version_range=raw,
                                       warn_only=kind == "optional" and rng.random() < 0.3))
            if rng.random() < 0.3:
                deps.append(Dependency(mod_id={"fabric": "fabricloader", "quilt": "quilt_loader"}.get(loader, loader),
                                       kind="required", version_range=RANGES[loader](rng, rng.randint(1, 3))))
            provides = tuple(Provided(f"m{rng.randrange(mods)}", rng.choice([None, "2.0", "9.0"]))
                             for _ in range(rng.random() < 0.08))
            games = rng.choice([(GAME,), (GAME, "1.21.3"), (GAME,), ("1.21.1",)])
            loaders = (loader,) if loader != "quilt" or rng.random() < 0.5 else ("fabric",)
            files = (CandidateFile(f"f{m}-{n}", loaders, games, tuple(parse_dependency(d, loader) for d in deps), provides),)
            versions.append(CandidateVersion(f"p{m}", f"Mod {m}", f"m{m}@{n}", version, files=files,
                                             published=f"2024-01-{n + 1:02d}"))
        projects[f"m{m}"] = versions
    return projects


def pack(rng: random.Random, loader: str, least: int = 1,
         most: int = 8) -> tuple[dict[str, list[CandidateVersion]], list[Requested]]:
    """A random catalogue and ``least`` to ``most`` of its mods asked for, one in five times also a
    version asked for by hash."""
    projects = catalogue(rng, loader)
    ids = sorted(projects)
    asked = [Requested(m) for m in rng.sample(ids, rng.randint(least, most))]
    if rng.random() < 0.2:
        pick = rng.choice(ids)
        asked.append(Requested(pick, rng.choice(projects[pick]).version_id))
    return projects, asked


def both(projects, loader, asked, include_optional):
    out = []
    for straight in (True, False):
        resolver._STRAIGHT = straight
        try:
            out.append(resolver.resolve(MemorySource(projects), loader, GAME, asked, include_optional))
        finally:
            resolver._STRAIGHT = True
    return out


@pytest.mark.parametrize("loader", ["fabric", "quilt", "neoforge"])
def test_the_straight_path_answers_as_resolvelib_does(loader, monkeypatch):
    rng = random.Random(f"straight-{loader}")
    straight_runs = []
    original = resolver._Straight.run

    def counted(index, roots):
        answer = original(index, roots)
        straight_runs.append(answer is not None)
        return answer

    monkeypatch.setattr(resolver._Straight, "run", staticmethod(counted))
    solved = 0
    for _ in range(150):
        projects, asked = pack(rng, loader)
        fast, slow = both(projects, loader, asked, include_optional=rng.random() < 0.3)
        assert fast == slow
        solved += fast.ok
    # Both paths were taken, and the answers were not all failures.

    assert any(straight_runs) and not all(straight_runs) and solved > 20


def test_a_cycle_of_criteria_that_never_reaches_the_root_is_an_answer_not_a_crash():
    # The neoforge sequence above, run on to its 380th request: resolvelib 1.2.1's own result
    # builder recursed without end on it (a RecursionError, a 500 from /api/v1/resolve); the
    # resolver's own (resolver._result) walks from the root once and answers.
    loader = "neoforge"
    rng = random.Random(f"straight-{loader}")
    for _ in range(380):
        projects, asked = pack(rng, loader)
        include_optional = rng.random() < 0.3
    assert include_optional
    answer = resolver.resolve(MemorySource(projects), loader, GAME, asked, include_optional)
    assert not answer.ok and answer.problem.startswith("no NeoForge version satisfies every mod")
