"""A manifest's dependency with its range parsed: the form resolvers, pages and APIs read.

``indexium_jar.model.Dependency`` keeps the range as the manifest wrote it; here it becomes
a :class:`~indexium_jar.manifests.version_syntax.VersionSet` in the order of the loader
whose manifest declared it (Fabric predicates, Quilt specifiers, Maven ranges). A range
the loader would refuse is kept as "any version" with the reason, never dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from indexium_jar.manifests.version_order import Scheme
from indexium_jar.manifests.version_syntax import PredicateError, VersionSet, fabric_set_any, maven_set, quilt_set
from indexium_jar.model import Dependency, DependencyKind, Environment, Loader

# Ids that name the game, the runtime or a loader, not a mod: constraints, never pack entries.
GAME_IDS = frozenset({"minecraft"})
JAVA_IDS = frozenset({"java"})
LOADER_IDS = frozenset({"fabricloader", "fabric-loader", "quilt_loader", "forge", "neoforge", "fml", "javafml"})
PLATFORM_IDS = GAME_IDS | JAVA_IDS | LOADER_IDS

_SCHEMES: dict[str, Scheme] = {"fabric": "fabric", "quilt": "quilt"}


def scheme_for(loader: Loader | str) -> Scheme:
    """The version order a loader's manifests use: Fabric's, Quilt's, else Maven's (Forge,
    NeoForge, and plugins, which have none of their own)."""
    return _SCHEMES.get(loader, "maven")


@dataclass(frozen=True, slots=True)
class ParsedDependency:
    mod_id: str
    kind: DependencyKind
    raw: str | None  # the range as written (a JSON array or object for Fabric/Quilt lists)
    versions: VersionSet  # what the range admits; any version when the manifest gave none
    warn_only: bool = False  # the loader only warns (Fabric conflicts/recommends/suggests, DISCOURAGED)
    side: Environment = "both"
    problem: str | None = None  # why the range could not be read (then: any version)

    @property
    def platform(self) -> bool:
        return self.mod_id in PLATFORM_IDS

    @property
    def scheme(self) -> Scheme:
        return self.versions.scheme


def parse_range(raw: str | None, scheme: Scheme) -> tuple[VersionSet, str | None]:
    """``raw`` as the loader of ``scheme`` reads it; (any version, reason) when it cannot."""
    if raw is None:
        return VersionSet(scheme), None
    try:
        if scheme == "maven":
            return maven_set(raw), None
        value = json.loads(raw) if raw.startswith(("[", "{")) else raw
        return (fabric_set_any(value) if scheme == "fabric" else quilt_set(value)), None
    except (PredicateError, ValueError) as exc:
        return VersionSet(scheme), f"unreadable version range {raw[:80]!r}: {exc}"


def parse_dependency(dep: Dependency, loader: Loader | str) -> ParsedDependency:
    versions, problem = parse_range(dep.version_range, scheme_for(loader))
    return ParsedDependency(mod_id=dep.mod_id, kind=dep.kind, raw=dep.version_range, versions=versions,
                            warn_only=dep.warn_only, side=dep.side, problem=problem)
