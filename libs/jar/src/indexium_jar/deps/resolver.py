"""Which version of every mod to put in a pack, from what the jars themselves declare.

A pure function over a :class:`~indexium_jar.deps.candidates.CandidateSource`. The search
is resolvelib's (pip's backtracking resolver, kept rather than written by hand); this
module only says what a candidate, a requirement and a match are:

* a candidate is one public version of the project owning a mod id, with the file that
  matches the loader and the game version; the newest comes first, in the loader's order;
* a dependency becomes a *need* (the mod must be present, in range) or a *limit* (absent is
  fine, present must be in range): ``breaks``/INCOMPATIBLE is a limit to the complement of
  its range, an optional dependency of Quilt or (Neo)Forge a limit to its range (those
  loaders refuse a present optional mod in the wrong version). Limits are met by an "absent"
  candidate, which is how resolvelib, which only knows needs, learns incompatibilities;
* a mod a jar embeds (jar-in-jar) or provides meets the needs for it: the jar's own needs
  directly, another mod's through a candidate "provided by" the embedding version;
* ``minecraft`` is the chosen game version (matched through each file's game versions),
  ``java`` and the loaders are collected into one combined requirement per id, for an
  exporter to choose a loader version every mod accepts;
* what the loader only warns about (Fabric's conflicts/recommends/suggests, DISCOURAGED)
  becomes a warning on the answer, not a constraint;
* a search still running after ``EARLY_ROUNDS`` rounds ends when a mod asked for fits no pack
  at all (``_doomed``), with the search's answer for those mods alone.

Dependencies whose id no indexed project owns are listed as "not on Indexium", never
dropped. Sides (client/server) are not separated: a pack holds both. Answers are
deterministic: candidates, identifiers and every list in the answer are ordered.
"""

from __future__ import annotations

import collections
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cmp_to_key

import resolvelib
from resolvelib.resolvers import Resolution as _Resolution, ResolverException
from resolvelib.resolvers.resolution import DirectedGraph, Result
from resolvelib.structs import State

from indexium_jar import formats
from indexium_jar.deps.candidates import CandidateFile, CandidateSource, CandidateVersion
from indexium_jar.deps.parsed import GAME_IDS, PLATFORM_IDS, ParsedDependency, scheme_for
from indexium_jar.deps.words import PLATFORM_NAMES, describe, name_with_range, range_words
from indexium_jar.manifests.version_order import comparator
from indexium_jar.manifests.version_syntax import VersionSet

# Which files a loader runs (Quilt loads Fabric mods, Paper loads Bukkit plugins) and its
# display name: the format registry's.
LOADS: dict[str, tuple[str, ...]] = formats.LOADER_RUNS
LOADER_NAMES = formats.LOADER_TITLES
MAX_ROUNDS = 5000  # resolvelib rounds before giving up (ResolutionTooDeep)
MAX_OPTIONAL_TRIES = 32  # optional dependencies tried one by one when all at once fails
MAX_REQUESTED = 500
EARLY_ROUNDS = 200  # search rounds before asking whether a mod asked for fits no pack at all (_doomed)
TOO_DEEP = "these mods allow too many combinations to try; pin some versions and ask again"


@dataclass(frozen=True, slots=True)
class Requested:
    mod_id: str
    version_id: str | None = None  # a version asked for by hash: kept as it is


@dataclass(frozen=True, slots=True)
class Pick:
    mod_id: str
    project_id: str
    name: str
    version_id: str
    version: str
    version_type: str
    file_id: str
    requested: bool
    optional: bool = False  # added because include_optional asked for it
    reasons: tuple[str, ...] = ()  # "needed by Create 0.5.1: create-fabric >=0.5"


@dataclass(frozen=True, slots=True)
class NotIndexed:
    mod_id: str
    range: str | None
    needed_by: tuple[str, ...]  # "Create 0.5.1"
    text: str  # "not on Indexium: flywheel [1.0,2.0), needed by Create 0.5.1"


@dataclass(frozen=True, slots=True)
class PlatformRequirement:
    mod_id: str  # java, fabricloader, neoforge, ...
    versions: VersionSet  # every mod's range combined; empty when no version satisfies all
    declared: tuple[str, ...]  # "Sodium 0.6: >=0.15"
    text: str  # "Fabric Loader 0.16 or newer"


@dataclass(frozen=True, slots=True)
class Resolution:
    ok: bool
    picks: tuple[Pick, ...] = ()
    not_indexed: tuple[NotIndexed, ...] = ()
    provided: tuple[str, ...] = ()  # "mixinextras is included in Create 0.5.1"
    skipped_optional: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    platform: tuple[PlatformRequirement, ...] = ()
    problem: str | None = None  # what a player can act on, when there is no solution


# --- resolvelib's vocabulary -----------------------------------------------------------


@dataclass(eq=False)
class _Cand:
    """One version of a mod id; ``version`` None is "absent"; ``via`` a mod embedding it."""

    mod_id: str
    version: CandidateVersion | None = None
    file: CandidateFile | None = None
    via: _Cand | None = None
    provided_version: str | None = None

    @property
    def label(self) -> str:
        return f"{self.version.name} {self.version.version}" if self.version else self.mod_id


@dataclass(frozen=True, eq=False)
class _Req:
    mod_id: str
    allowed: VersionSet
    need: bool  # must be present; otherwise a limit that absence meets
    dep: ParsedDependency | None = None  # the manifest's, for words (None: asked by the player)
    version_id: str | None = None  # exactly this version (asked by hash, or an embedding version)
    optional_for: str | None = None  # a root added by include_optional: whose optional dependency
    # is_satisfied_by per candidate (by identity): resolvelib re-checks every pin each round.
    seen: dict[int, bool] = field(default_factory=dict, compare=False, repr=False)


@dataclass
class _Index:
    """Candidates per mod id, read once per resolve() and shared by its retries."""

    source: CandidateSource
    loader: str
    game_version: str
    versions: dict[str, Sequence[CandidateVersion] | None] = field(default_factory=dict)
    cands: dict[str, list[_Cand]] = field(default_factory=dict)
    absent: dict[str, _Cand] = field(default_factory=dict)
    provided: dict[tuple[str, int], _Cand] = field(default_factory=dict)
    hosts: dict[str, list[_Cand]] = field(default_factory=dict)  # provided id -> candidates carrying it

    def all_versions(self, mod_id: str) -> Sequence[CandidateVersion] | None:
        if mod_id not in self.versions:
            self.versions[mod_id] = self.source.versions_of(mod_id)
        return self.versions[mod_id]

    def known(self, mod_id: str) -> bool:
        return self.all_versions(mod_id) is not None

    def name(self, mod_id: str) -> str:
        found = self.all_versions(mod_id)
        return found[0].name if found else PLATFORM_NAMES.get(mod_id, mod_id)

    def candidates(self, mod_id: str) -> list[_Cand]:
        if mod_id not in self.cands:
            self.cands[mod_id] = built = self._build(mod_id)
            for host in built:
                for provided in _provides(host):
                    self.hosts.setdefault(provided, []).append(host)
        return self.cands[mod_id]

    def _build(self, mod_id: str) -> list[_Cand]:
        rank = {name: i for i, name in enumerate(LOADS.get(self.loader, (self.loader,)))}
        game, out = self.game_version, []
        for v in self.all_versions(mod_id) or ():
            best, best_rank = None, len(rank)
            for f in v.files:  # the loader's own file before a compatible one (quilt before fabric)
                r = min((rank[x] for x in f.loaders if x in rank), default=len(rank))
                if r < best_rank and game in f.game_versions:
                    best, best_rank = f, r
            if best is not None:
                out.append(_Cand(mod_id, v, best))
        cmp = comparator(scheme_for(self.loader))

        def newest_first(a: _Cand, b: _Cand) -> int:
            c = cmp(b.version.version, a.version.version)
            if c == 0:
                c = (b.version.published > a.version.published) - (b.version.published < a.version.published)
            return c or ((a.version.version_id > b.version.version_id) - (a.version.version_id < b.version.version_id))

        return sorted(out, key=cmp_to_key(newest_first))

    def absent_of(self, mod_id: str) -> _Cand:
        return self.absent.setdefault(mod_id, _Cand(mod_id))

    def provided_by(self, mod_id: str, host: _Cand) -> _Cand | None:
        ids = _provides(host)
        if mod_id not in ids:
            return None
        key = (mod_id, id(host))
        if key not in self.provided:
            self.provided[key] = _Cand(mod_id, host.version, host.file, via=host, provided_version=ids[mod_id])
        return self.provided[key]


def _provides(cand: _Cand) -> dict[str, str | None]:
    """Ids the candidate's jar carries besides its own, with their version when known."""
    if cand.file is None:
        return {}
    ids: dict[str, str | None] = {d.mod_id: None for d in cand.file.dependencies if d.kind == "embedded"}
    ids.update((p.mod_id, p.version) for p in cand.file.provides)
    return ids


class _Provider(resolvelib.AbstractProvider):
    def __init__(self, index: _Index, roots: Iterable[str]) -> None:
        self.index = index
        self.roots = frozenset(roots)
        self._preferences: dict[str, tuple] = {}

    def identify(self, requirement_or_candidate):
        return requirement_or_candidate.mod_id

    def get_preference(self, identifier, resolutions, candidates, information, backtrack_causes):
        # The mods asked for first, then the ones with the fewest versions for this game
        # (counted once, unfiltered), by name.
        return self._preference(identifier)

    def _preference(self, identifier):
        # (Fixed for an identifier: the roots are, and its candidates are built once per index.)
        try:
            return self._preferences[identifier]
        except KeyError:
            known = self._preferences[identifier] = (
                identifier not in self.roots, len(self.index.candidates(identifier)), identifier)
            return known

    def narrow_requirement_selection(self, identifiers, resolutions, candidates, information, backtrack_causes):
        # The one identifier get_preference would choose, found here: resolvelib would otherwise
        # build two mapping views per open identifier per round to call it (a fifth of a 50-mod
        # resolution's time). Same choice, same answer.
        return [min(identifiers, key=self._preference)]

    def find_matches(self, identifier, requirements, incompatibilities):
        reqs = list(requirements[identifier])
        bad = {id(c) for c in incompatibilities[identifier]}
        if not any(r.need for r in reqs):
            pool = [self.index.absent_of(identifier)]
        else:
            pool = []
            hosts = self.index.hosts.get(identifier, ())
            for other in sorted({h.mod_id for h in hosts if h.mod_id != identifier and h.mod_id in requirements}):
                if any(r.need for r in requirements[other]):
                    pool += [self.index.provided_by(identifier, h) for h in hosts if h.mod_id == other]
            pool += self.index.candidates(identifier)
        return [c for c in pool if id(c) not in bad and all(self.is_satisfied_by(r, c) for r in reqs)]

    def is_satisfied_by(self, requirement, candidate):
        # (Keyed by the candidate itself: _Cand hashes by identity, and resolvelib calls this
        # for every pin every round, so even an id() call shows.)
        seen = requirement.seen
        try:
            return seen[candidate]
        except KeyError:
            known = seen[candidate] = self._satisfies(requirement, candidate)
            return known

    @staticmethod
    def _satisfies(requirement, candidate):
        if candidate.version is None:
            return not requirement.need
        if requirement.version_id is not None:
            return candidate.via is None and candidate.version.version_id == requirement.version_id
        if candidate.via is not None:
            if candidate.provided_version is None:  # nested version unknown: only "any" is ruled out
                return requirement.need or not requirement.allowed.is_empty
            return requirement.allowed.contains(candidate.provided_version)
        return requirement.allowed.contains(candidate.version.version)

    def get_dependencies(self, candidate):
        if candidate.version is None:
            return []
        if candidate.via is not None:
            host = candidate.via
            return [_Req(host.mod_id, VersionSet(scheme_for(self.index.loader)), True,
                         version_id=host.version.version_id)]
        return list(_requirements(candidate, self.index))


def _requirements(cand: _Cand, index: _Index) -> Iterable[_Req]:
    own = _provides(cand)
    for dep in cand.file.dependencies:
        if dep.mod_id == cand.mod_id or dep.mod_id in own or not constrains(dep):
            continue  # (no requirement: what the loader only warns about is a warning later)
        if not index.known(dep.mod_id):
            continue  # listed as "not on Indexium" (or met by an embedding mod) once resolved
        if dep.kind == "required":
            yield _Req(dep.mod_id, dep.versions, True, dep)
        elif dep.kind == "optional":
            yield _Req(dep.mod_id, dep.versions, False, dep)
        else:
            yield _Req(dep.mod_id, dep.versions.complement(), False, dep)


def constrains(dep: ParsedDependency) -> bool:
    """Whether the dependency becomes a requirement of the pack (a need, or a limit a present mod
    must meet): so whether resolving reads the index for its id (with ``include_optional``, every
    optional dependency too). A read-ahead (``queries/packs.py``) follows only these."""
    if dep.platform or dep.kind == "embedded":
        return False
    if dep.kind == "required":
        return True
    if dep.warn_only or dep.problem:
        return False
    return dep.kind == "incompatible" or (dep.kind == "optional" and not dep.versions.is_any)


# --- the answer ------------------------------------------------------------------------


def resolve(source: CandidateSource, loader: str, game_version: str, mods: Sequence[Requested],
            include_optional: bool = False) -> Resolution:
    """One version per mod for ``loader`` on ``game_version``, or why there is none."""
    index = _Index(source, loader, game_version)
    mods = sorted(set(mods[:MAX_REQUESTED]), key=lambda r: (r.mod_id, r.version_id or ""))
    unknown = [r.mod_id for r in mods if not index.known(r.mod_id)]
    if unknown:
        return Resolution(False, problem=f"not on Indexium: {', '.join(unknown)}")
    roots = [_Req(r.mod_id, VersionSet(scheme_for(loader)), True, version_id=r.version_id) for r in mods]
    result, problem = _run(index, roots)
    if result is None:
        return Resolution(False, problem=problem)
    skipped: list[str] = []
    if include_optional:
        result, roots = _with_optional(index, roots, result, skipped)
    return _answer(index, {r.mod_id for r in mods}, roots, result, skipped)


def _run(index: _Index, roots: list[_Req], early: bool = True):
    straight = _Straight.run(index, roots)
    if straight is not None:
        return straight, None
    provider, reporter = _Provider(index, (r.mod_id for r in roots)), _Rounds(index, roots, early)
    try:
        if not _STRAIGHT:
            return resolvelib.Resolver(provider, reporter).resolve(roots, max_rounds=MAX_ROUNDS), None
        return _result(_Memo(provider, reporter).resolve(roots, max_rounds=MAX_ROUNDS)), None
    except resolvelib.ResolutionImpossible as exc:
        return None, _explain(index, exc.causes)
    except resolvelib.ResolutionTooDeep:
        return None, TOO_DEEP
    except _Doomed as exc:
        # Some mods asked for fit in no pack at all: why, as the search says it for them alone,
        # instead of searching every combination of the other mods' versions first.
        alone, problem = _run(index, exc.roots)
        if alone is None and problem != TOO_DEEP:
            return None, problem
        return _run(index, roots, early=False)  # (the search, to its end after all)


class _Doomed(Exception):
    def __init__(self, roots: list[_Req]) -> None:
        super().__init__()
        self.roots = roots


class _Rounds(resolvelib.BaseReporter):
    """A search still running after ``EARLY_ROUNDS`` rounds has been backtracking: then, once,
    whether a mod asked for fits no pack at all (``_doomed``), which ends it (``_Doomed``)."""

    def __init__(self, index: _Index, roots: list[_Req], early: bool) -> None:
        self.index, self.roots, self.early = index, roots, early

    def starting_round(self, index: int) -> None:
        if index == EARLY_ROUNDS and self.early and _EARLY:
            doomed = _doomed(self.index, self.roots)
            if doomed and len(doomed) < len(self.roots):
                raise _Doomed(doomed)


def _doomed(index: _Index, roots: list[_Req]) -> list[_Req]:
    """The roots that no pack can hold, whatever else it holds: every version of the mod that the
    root accepts needs (required, directly or through what it needs) a mod of which no version
    fits the game and the loader in the range asked. Sound by construction, so a pack holding one
    has no solution: only needs are followed (a limit is met by leaving a mod out), and a mod that
    any candidate of a mod the roots can need embeds or provides is never counted missing (a
    "provided by" candidate may meet it). A root that no candidate matches at all, or a mod asked
    for twice, is left to the search, which fails on it at once (its first step) as before."""
    if len({r.mod_id for r in roots}) != len(roots):
        return []
    needs: dict[int, tuple[_Cand, list[_Req]]] = {}
    seen = {r.mod_id for r in roots}
    todo = sorted(seen)
    while todo:  # every mod the roots can need, with its candidates (and so index.hosts) built
        for cand in index.candidates(todo.pop()):
            reqs = [r for r in _requirements(cand, index) if r.need]
            needs[id(cand)] = (cand, reqs)
            for r in reqs:
                if r.mod_id not in seen:
                    seen.add(r.mod_id)
                    todo.append(r.mod_id)
    dead: set[int] = set()
    satisfies = _Provider._satisfies
    changed = True
    while changed:  # a candidate is dead when one of its needs has no live candidate in range
        changed = False
        for key, (_cand, reqs) in needs.items():
            if key not in dead and any(
                    r.mod_id not in index.hosts and not any(
                        id(c) not in dead and satisfies(r, c) for c in index.candidates(r.mod_id))
                    for r in reqs):
                dead.add(key)
                changed = True
    out = []
    for r in roots:
        matching = [c for c in index.candidates(r.mod_id) if satisfies(r, c)]
        if not matching:
            return []  # (the search's first step fails on it, and says so)
        if r.mod_id not in index.hosts and all(id(c) in dead for c in matching):
            out.append(r)
    return out


def _result(state: State):
    """What ``Resolver.resolve`` makes of a finished resolution's state: the pins reachable from
    the root through their criteria's parents, and every criterion. Not resolvelib 1.2.1's own
    ``_build_result``: it asks each key for a route to the root recursively, and a cycle of
    criteria that never reaches the root (a pin left over from a backtrack: a needs b, b needs a)
    recursed without end, a RecursionError and a 500 for the player. Here one walk from the root
    down, each key once."""
    key_of = {id(pin): key for key, pin in state.mapping.items()}
    key_of[id(None)] = None  # the root's requirements have no parent
    children: dict = collections.defaultdict(list)
    for key, criterion in state.criteria.items():
        for parent in criterion.iter_parent():
            if id(parent) in key_of:
                children[key_of[id(parent)]].append(key)
    graph = DirectedGraph()
    graph.add(None)
    connected, todo = {None}, [None]
    while todo:
        parent = todo.pop()
        for key in children[parent]:
            if key not in graph:
                graph.add(key)
            graph.connect(parent, key)
            if key not in connected:
                connected.add(key)
                todo.append(key)
    return Result(mapping={k: v for k, v in state.mapping.items() if k in connected}, graph=graph,
                  criteria=state.criteria)


class _Bail(Exception):
    """The straight path met what only resolvelib's own loop handles (a backjump, a pin undone)."""


# _Memo and the straight path below lean on resolvelib 1.2's Resolution internals; another
# release runs resolvelib's Resolver alone.
_STRAIGHT = resolvelib.__version__.startswith("1.2.")
# A long search for a pack holding a mod that fits no pack is cut short (_Rounds); tests turn it off
# to compare with the whole search.
_EARLY = True


class _Memo(_Resolution):
    """resolvelib's resolution, remembering whether a pin meets a criterion: both are immutable
    (a changed criterion is a new object) and resolvelib asks again for every pin every round,
    thousands of times in a long backtracking search."""

    def __init__(self, provider, reporter) -> None:
        super().__init__(provider, reporter)
        self._meets: dict[tuple, bool] = {}

    def _is_current_pin_satisfying(self, name, criterion) -> bool:
        pin = self._states[-1].mapping.get(name)  # (self.state, without the property's call)
        if pin is None:
            return False
        key = (criterion, pin)
        known = self._meets.get(key)
        if known is None:
            satisfied = self._p.is_satisfied_by
            known = self._meets[key] = all(satisfied(r, pin) for r in criterion.iter_requirement())
        return known


class _Straight(_Memo):
    """resolvelib's own resolution, round by round, for the common case where no pin is ever
    undone: the same ``_add_to_criteria`` and ``_attempt_to_pin_criterion`` (the same
    candidates tried in the same order, the same criteria and information), without what
    each round of ``Resolution.resolve`` costs for backtracking it will not need: a copy of
    every criterion per round (``_push_new_state``), re-checking every pin against every
    requirement, and ranking every open identifier. Here the open identifiers are kept in a
    heap by the provider's preference (which depends on the identifier alone, so the choice
    is resolvelib's ``min``), and only criteria a pin changed are re-checked.

    A pin a later requirement no longer accepts is undone as resolvelib does (what it required is
    forgotten, and it is pinned again in its turn). Anything else (a pin whose every candidate
    conflicts, which resolvelib would backjump from; too many rounds) raises ``_Bail``
    and the caller runs resolvelib from the start, so every answer, with or without a
    solution, is exactly resolvelib's. What the abandoned attempt leaves in the index
    (candidates built, memoised checks) is what a resolvelib run may build too, and
    ``find_matches`` reads only hosts whose mod is needed, which are always built by then.
    ``tests/unit/jar/deps/test_straight.py`` compares both on random catalogues."""

    @classmethod
    def run(cls, index: _Index, roots: list[_Req]):
        if not _STRAIGHT:
            return None
        provider = _Provider(index, (r.mod_id for r in roots))
        try:
            return cls(provider, resolvelib.BaseReporter())._resolve(roots, provider)
        except (_Bail, ResolverException):
            return None

    def _resolve(self, roots: list[_Req], provider: _Provider):
        from resolvelib.resolvers.resolution import _build_result  # noqa: PLC0415 - see _STRAIGHT

        self._states = [State(mapping=collections.OrderedDict(), criteria={}, backtrack_causes=[])]
        criteria = self.state.criteria
        for r in roots:
            self._add_to_criteria(criteria, r, parent=None)  # (a conflict here: resolvelib says why)
        mapping = self.state.mapping
        self._touched: list[str] = []
        heap = [(provider._preference(k), k) for k in criteria]
        heapq.heapify(heap)
        waiting = set(criteria)  # the ids in the heap: not pinned, or pinned and no longer satisfied

        def wait(key: str) -> None:
            if key not in waiting:
                waiting.add(key)
                heapq.heappush(heap, (provider._preference(key), key))

        for _ in range(MAX_ROUNDS):
            if not heap:
                return _build_result(self.state)
            _, name = heapq.heappop(heap)
            waiting.discard(name)
            if name in mapping and self._is_current_pin_satisfying(name, criteria[name]):
                continue  # satisfied again since it was queued: not open (resolvelib's min skips it)
            known = criteria.keys() | ()  # (the ids open or pinned before this pin)
            if self._attempt_to_pin_criterion(name):
                raise _Bail  # every candidate conflicts: resolvelib backjumps
            criteria = self.state.criteria
            undone = []
            for key in dict.fromkeys(self._touched):
                if key in mapping:
                    if key not in waiting and not self._is_current_pin_satisfying(key, criteria[key]):
                        # A pin satisfied before this round that no longer is (resolvelib's "newly
                        # unsatisfied"; the id just pinned was open, so it is pinned again unchanged).
                        (undone.append(key) if key != name else wait(key))
                elif key not in known:
                    wait(key)
            if undone:
                # As resolvelib: what the undone pins required is forgotten, and they are pinned again.
                self._remove_information_from_criteria(criteria, set(undone))
                for key in undone:
                    wait(key)
        raise _Bail

    def _get_updated_criteria(self, candidate):
        # resolvelib's, recording which criteria the candidate's dependencies changed.
        criteria = self.state.criteria.copy()
        touched = []
        for requirement in self._p.get_dependencies(candidate=candidate):
            self._add_to_criteria(criteria, requirement, parent=candidate)
            touched.append(requirement.mod_id)
        self._touched = touched
        return criteria


def _pinned(result) -> list[_Cand]:
    return [c for _, c in sorted(result.mapping.items()) if c.version is not None and c.via is None]


def _with_optional(index: _Index, roots: list[_Req], result, skipped: list[str]):
    tried: set[str] = set()
    for _round in range(3):  # optional dependencies of optional dependencies, a few levels
        wanted: dict[str, _Req] = {}
        for cand in _pinned(result):
            for dep in cand.file.dependencies:
                held = result.mapping.get(dep.mod_id)
                # (a ranged optional dependency is a limit too: "absent" pinned is not "present")
                if dep.kind != "optional" or dep.platform or dep.mod_id in tried or (
                        held is not None and held.version is not None):
                    continue
                tried.add(dep.mod_id)
                if not index.known(dep.mod_id):
                    skipped.append(f"{dep.mod_id} (optional for {cand.label}) is not on Indexium")
                    continue
                wanted[dep.mod_id] = _Req(dep.mod_id, dep.versions, True, dep, optional_for=cand.label)
        if not wanted:
            break
        together, _ = _run(index, roots + list(wanted.values()))
        if together is not None:
            roots, result = roots + list(wanted.values()), together
            continue
        for i, (mod_id, req) in enumerate(sorted(wanted.items())):
            alone, why = _run(index, roots + [req]) if i < MAX_OPTIONAL_TRIES else (None, "too many to try")
            if alone is None:
                skipped.append(f"{index.name(mod_id)} (optional for {req.optional_for}) left out: {why}")
            else:
                roots, result = roots + [req], alone
    return result, roots


def _answer(index: _Index, requested: set[str], roots: list[_Req], result, skipped: list[str]) -> Resolution:
    pins = _pinned(result)
    pinned = {c.mod_id: c for c in pins}
    optional_roots = {r.mod_id: r for r in roots if r.optional_for}
    picks = []
    for cand in pins:
        reasons = []
        for info in result.criteria[cand.mod_id].information:
            parent, req = info.parent, info.requirement
            if parent is not None and req.need and req.dep and pinned.get(parent.mod_id) is parent:
                reasons.append(f"needed by {parent.label}: {req.dep.mod_id} {req.dep.raw or '*'}".rstrip())
        if (opt := optional_roots.get(cand.mod_id)) is not None:
            reasons.append(f"optional for {opt.optional_for}: {opt.dep.mod_id} {opt.dep.raw or '*'}".rstrip())
        v = cand.version
        picks.append(Pick(cand.mod_id, v.project_id, v.name, v.version_id, v.version, v.version_type,
                          cand.file.file_id, cand.mod_id in requested, cand.mod_id in optional_roots,
                          tuple(sorted(set(reasons)))))
    present = {c.mod_id: c for c in result.mapping.values() if c.version is not None}
    embedded = {m: c for c in pins for m in sorted(_provides(c))}
    provided = sorted({f"{m} is included in {c.via.label}" for m, c in present.items() if c.via is not None}
                      | {f"{m} is included in {c.label}" for m, c in embedded.items() if m not in present})
    missing: dict[str, tuple[str | None, list[str]]] = {}
    warnings: list[str] = []
    platform: dict[tuple[str, str], tuple[VersionSet, list[str]]] = {}
    for cand in pins:
        for dep in cand.file.dependencies:
            if dep.problem:
                warnings.append(f"{cand.label}: {dep.problem}")
            if dep.platform:
                if dep.mod_id not in GAME_IDS and dep.kind == "required":
                    key = (dep.mod_id, dep.scheme)
                    combined, who = platform.get(key, (VersionSet(dep.scheme), []))
                    platform[key] = (combined.intersect(dep.versions), who + [f"{cand.label}: {dep.raw or '*'}"])
                continue
            if dep.kind == "embedded" or dep.mod_id == cand.mod_id:
                continue
            target = present.get(dep.mod_id)
            if dep.kind == "required" and target is None and dep.mod_id not in embedded:
                entry = missing.setdefault(dep.mod_id, (dep.raw, []))
                entry[1].append(cand.label)
            elif target is not None and dep.warn_only:
                version = target.provided_version if target.via else target.version.version
                inside = version is None or dep.versions.contains(version)
                if dep.kind == "incompatible" and inside:
                    warnings.append(f"{cand.label} {describe(dep, index.name(dep.mod_id))}; {target.label} is in the pack")
                elif dep.kind == "optional" and not inside:
                    warnings.append(f"{cand.label} {describe(dep, index.name(dep.mod_id))}, but the pack has {target.label}")
    not_indexed = tuple(
        NotIndexed(m, raw, tuple(who), f"not on Indexium: {m}{' ' + raw if raw else ''}, needed by {', '.join(who)}")
        for m, (raw, who) in sorted(missing.items()))
    requirements, problem = [], None
    for (mod_id, _scheme), (combined, who) in sorted(platform.items()):
        name = PLATFORM_NAMES.get(mod_id, mod_id)
        requirements.append(PlatformRequirement(mod_id, combined, tuple(who), name_with_range(name, combined)))
        if combined.is_empty:
            problem = f"no {name} version satisfies every mod: " + "; ".join(who)
    return Resolution(problem is None, tuple(picks), not_indexed, tuple(provided), tuple(skipped),
                      tuple(sorted(set(warnings))), tuple(requirements), problem)


# --- why there is no answer --------------------------------------------------------------


def _explain(index: _Index, causes) -> str:
    loader = LOADER_NAMES.get(index.loader, index.loader)
    game = index.game_version
    grouped: dict[str, list] = {}
    for info in causes:
        grouped.setdefault(info.requirement.mod_id, []).append(info)
    sentences = []
    for mod_id, infos in grouped.items():
        name = index.name(mod_id)
        every = index.all_versions(mod_id) or ()
        fitting = index.candidates(mod_id)
        if not every:
            sentences.append(f"{name} has no public version on Indexium")
            continue
        if not fitting:
            sentences.append(_newest_elsewhere(index, name, every, loader, game))
            continue
        clauses, allowed = [], VersionSet(scheme_for(index.loader))
        for info in infos:
            req, parent = info.requirement, info.parent
            if req.allowed.scheme == allowed.scheme:
                allowed = allowed.intersect(req.allowed)
            if parent is None or req.dep is None:
                continue
            if req.dep.kind == "incompatible":
                clauses.append(f"{parent.label} breaks {name_with_range(name, req.dep.versions)}")
            elif req.need:
                clauses.append(f"{parent.label} needs {name_with_range(name, req.dep.versions)}")
            else:
                clauses.append(f"{parent.label} works only with {name_with_range(name, req.dep.versions)}")
        if not any(allowed.contains(c.version.version) for c in fitting):
            words = range_words(allowed)
            subject = f"{name} {words}" if words and not allowed.is_empty else f"version of {name} that fits"
            clauses.append(f"no {subject} supports {game} on {loader} yet (newest for {game}: {fitting[0].version.version})")
        elif not clauses:
            clauses.append(f"no version of {name} for {game} fits the other mods")
        sentences.append(", and ".join(dict.fromkeys(clauses)))
    return "; ".join(dict.fromkeys(sentences)) or "no combination of versions satisfies every dependency"


def _newest_elsewhere(index: _Index, name: str, every: Sequence[CandidateVersion], loader: str, game: str) -> str:
    cmp = comparator(scheme_for(index.loader))
    runs = LOADS.get(index.loader, (index.loader,))
    same_loader = [v for v in every if any(set(f.loaders) & set(runs) for f in v.files)]
    if not same_loader:
        return f"no version of {name} is for {loader}"
    newest = max(same_loader, key=cmp_to_key(lambda a, b: cmp(a.version, b.version)))
    games = sorted({g for f in newest.files for g in f.game_versions}, key=cmp_to_key(comparator("maven")), reverse=True)
    where = f" for {', '.join(games[:3])}" if games else ""
    return f"no version of {name} supports {game} on {loader}; its newest is {newest.version}{where}"


# --- one mod at a time (upgrade checks) ---------------------------------------------------


def fitting(source: CandidateSource, loader: str, game_version: str, mod_id: str) -> list[tuple[CandidateVersion, CandidateFile]]:
    """The versions of ``mod_id`` with a file for ``loader`` and ``game_version``, newest first,
    each with the file the resolver would take: its order and its choice of file, for callers
    that ask about one mod without resolving a pack."""
    return [(c.version, c.file) for c in _Index(source, loader, game_version).candidates(mod_id)]


def newest_for_loader(source: CandidateSource, loader: str, mod_id: str) -> tuple[CandidateVersion, tuple[str, ...]] | None:
    """The newest version of ``mod_id`` with a file for ``loader`` (any game version), and the
    game versions of its files, newest first; None when it has none."""
    cmp = comparator(scheme_for(loader))
    runs = set(LOADS.get(loader, (loader,)))
    mine = [v for v in source.versions_of(mod_id) or () if any(set(f.loaders) & runs for f in v.files)]
    if not mine:
        return None
    newest = max(mine, key=cmp_to_key(lambda a, b: cmp(a.version, b.version) or
                                      ((a.published > b.published) - (a.published < b.published))))
    games = sorted({g for f in newest.files if set(f.loaders) & runs for g in f.game_versions},
                   key=cmp_to_key(comparator("maven")), reverse=True)
    return newest, tuple(games)
