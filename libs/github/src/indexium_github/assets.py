"""Which release assets are mod files, which one is a checksum sidecar for another, and why
every other asset is left out (each left-out asset gets a reason the author can read); and
the hosts GitHub serves release assets from."""

from __future__ import annotations

import re

from indexium_contracts.github import ReleaseAsset
from indexium_jar import formats

# Where a release asset's download URL leads: github.com redirects to one of the CDN hosts.
DOWNLOAD_HOSTS = (
    "github.com",
    "objects.githubusercontent.com",
    "release-assets.githubusercontent.com",
)
# What a mod is shipped as: the jar formats' suffixes in the format registry (a jar, or
# LiteLoader's .litemod, a jar by another name read for its litemod.json).
MOD_SUFFIXES = formats.JAR_SUFFIXES
# Every asset the release job reads: the jars and the packs (zips, .mrpack).
READ_SUFFIXES = formats.SUFFIXES
_SUFFIX_WORDS = "|".join(re.escape(s.lstrip(".")) for s in READ_SUFFIXES)
# Build by-products that are not the mod itself.
_SKIP = re.compile(r"-(sources|javadoc|dev|dev-shadow|api-sources)\.jar$", re.IGNORECASE)
_SIDECAR = re.compile(rf"\.({_SUFFIX_WORDS})\.sha256$", re.IGNORECASE)


def is_mod_file(name: str) -> bool:
    """A file the release job reads: a jar or a pack (the format registry's suffixes)."""
    return name.lower().endswith(READ_SUFFIXES)


def is_jar(name: str) -> bool:
    """Read by the jar reader (a pack suffix goes to indexium_jar.packread)."""
    return name.lower().endswith(MOD_SUFFIXES)


def mod_jars(assets: list[ReleaseAsset]) -> list[ReleaseAsset]:
    """The assets the release job reads: jars and packs, by-products and unfinished uploads left out."""
    return [
        a for a in assets
        if is_mod_file(a.name) and not _SKIP.search(a.name) and a.state in (None, "uploaded")
    ]


def left_out(assets: list[ReleaseAsset]) -> list[tuple[ReleaseAsset, str, str]]:
    """(asset, code, reason) for every asset :func:`mod_jars` does not pass on, except the
    checksum sidecars that are read along with their mod file."""
    out = []
    for a in assets:
        if _SIDECAR.search(a.name):
            continue
        if not is_mod_file(a.name):
            out.append((a, "not_a_mod_file", f"not a {', '.join(READ_SUFFIXES)} file"))
        elif _SKIP.search(a.name):
            out.append((a, "build_by_product", "a build by-product (sources, javadoc or dev jar), not the mod"))
        elif a.state not in (None, "uploaded"):
            out.append((a, "not_uploaded", f"the upload is not finished (state {a.state})"))
    return out


def sidecars(assets: list[ReleaseAsset]) -> dict[str, str]:
    """Map mod file name -> download URL of its ``<file>.sha256`` asset, when the release has one."""
    return {
        a.name[: -len(".sha256")]: a.browser_download_url
        for a in assets
        if _SIDECAR.search(a.name)
    }


def version_type(tag: str, prerelease: bool) -> str:
    if not prerelease:
        return "release"
    return "alpha" if re.search(r"alpha|(^|[^a-z])a\d", tag, re.IGNORECASE) else "beta"
