"""Dependencies with meaning: parsed ranges, their words, and the pack resolver (all pure)."""

from indexium_jar.deps.candidates import CandidateFile, CandidateSource, CandidateVersion, MemorySource, Provided
from indexium_jar.deps.parsed import PLATFORM_IDS, ParsedDependency, parse_dependency, parse_range, scheme_for
from indexium_jar.deps.resolver import (
    LOADER_NAMES, LOADS, NotIndexed, Pick, PlatformRequirement, Requested, Resolution, fitting, newest_for_loader, resolve,
)
from indexium_jar.deps.words import describe, range_words

__all__ = [
    "LOADER_NAMES", "LOADS", "PLATFORM_IDS", "CandidateFile", "CandidateSource", "CandidateVersion", "MemorySource", "NotIndexed",
    "ParsedDependency", "Pick", "PlatformRequirement", "Provided", "Requested", "Resolution", "describe", "fitting",
    "newest_for_loader",
    "parse_dependency", "parse_range", "range_words", "resolve", "scheme_for",
]
