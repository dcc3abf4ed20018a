"""A dependency in words, for pages and APIs: "needs Fabric API 0.92 or newer"."""

from __future__ import annotations

from indexium_jar.deps.parsed import ParsedDependency
from indexium_jar.manifests.version_syntax import Interval, VersionSet

PLATFORM_NAMES = {
    "minecraft": "Minecraft", "java": "Java", "fabricloader": "Fabric Loader", "fabric-loader": "Fabric Loader",
    "quilt_loader": "Quilt Loader", "forge": "Forge", "neoforge": "NeoForge", "fml": "FML", "javafml": "FML",
}


def _show(version: str) -> str:
    # Fabric's "1.3-" (the lowest 1.3 pre-release, what ~1.2 and 1.x stop before) reads as 1.3.
    return version[:-1] if version.endswith("-") and len(version) > 1 else version


def interval_words(i: Interval) -> str:
    if (exact := i.exact) is not None:
        return _show(exact)
    low, high = i.lower, i.upper
    if low is None and high is None:
        return "any version"
    if high is None:
        return f"{_show(low)} or newer" if i.lower_inclusive else f"newer than {_show(low)}"
    if low is None:
        return f"{_show(high)} or older" if i.upper_inclusive else f"older than {_show(high)}"
    if i.lower_inclusive:
        return f"{_show(low)} to {_show(high)}" if i.upper_inclusive else \
            f"{_show(low)} up to but not including {_show(high)}"
    return f"newer than {_show(low)} up to {_show(high)}" if i.upper_inclusive else \
        f"newer than {_show(low)} and older than {_show(high)}"


def range_words(versions: VersionSet) -> str:
    """"" for any version (nothing to say), else e.g. "0.5 up to but not including 0.6"."""
    if versions.is_any:
        return f"({versions.recommended} recommended)" if versions.recommended else ""
    if versions.is_empty:
        return "(no version satisfies this range)"
    return " or ".join(interval_words(i) for i in versions.intervals)


def name_with_range(name: str, versions: VersionSet) -> str:
    words = range_words(versions)
    return f"{name} {words}" if words else name


def describe(dep: ParsedDependency, name: str | None = None) -> str:
    """One dependency in words; ``name`` is the display name when the mod is known."""
    target = name_with_range(name or PLATFORM_NAMES.get(dep.mod_id, dep.mod_id), dep.versions)
    if dep.kind == "required":
        text = f"needs {target}"
    elif dep.kind == "optional":
        text = f"works with {target} (optional)"
    elif dep.kind == "embedded":
        text = f"includes {target}"
    elif dep.warn_only:
        text = f"conflicts with {target} (the loader warns; the game still starts)"
    else:
        text = f"breaks {target}"
    if dep.problem:
        text += f" (its range {dep.raw!r} could not be read, so any version is taken)"
    return text
