"""What a resolver reads about the index: the interface a database adapter implements.

The source answers, for one mod id, the public versions of the project that *owns* that id
under the ownership rules (the first public project of that owner and loader; an impostor's
project never). The resolver never chooses between two projects claiming one id: that choice
is the source's, made before it answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from indexium_jar.deps.parsed import ParsedDependency

VersionType = Literal["release", "beta", "alpha"]


@dataclass(frozen=True, slots=True)
class Provided:
    """A mod id a file provides besides its own: jar-in-jar, or Fabric/Quilt ``provides``.
    ``version`` is None when the index does not know the nested jar's version."""

    mod_id: str
    version: str | None = None


@dataclass(frozen=True, slots=True)
class CandidateFile:
    file_id: str  # opaque to the resolver: what an exporter needs to find the download
    loaders: tuple[str, ...]
    game_versions: tuple[str, ...]
    dependencies: tuple[ParsedDependency, ...] = ()  # of the manifest for this file's loader
    provides: tuple[Provided, ...] = ()


@dataclass(frozen=True, slots=True)
class CandidateVersion:
    project_id: str
    name: str  # the project's display name
    version_id: str
    version: str  # as the manifest wrote it, compared in the pack loader's order
    version_type: VersionType = "release"
    files: tuple[CandidateFile, ...] = ()  # the primary file first
    published: str = ""  # ISO 8601; breaks ties between versions the order calls equal


class CandidateSource(Protocol):
    def versions_of(self, mod_id: str) -> Sequence[CandidateVersion] | None:
        """Public versions of the project owning ``mod_id``, or None when no indexed project
        owns it ("not on Indexium")."""
        ...


class MemorySource:
    """A source over a dict, for tests and benchmarks (and small callers)."""

    def __init__(self, projects: dict[str, Sequence[CandidateVersion]]) -> None:
        self._projects = projects
        self.reads = 0

    def versions_of(self, mod_id: str) -> Sequence[CandidateVersion] | None:
        self.reads += 1
        return self._projects.get(mod_id)
