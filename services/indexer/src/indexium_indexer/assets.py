"""Which release assets are mod jars, and which one is a checksum sidecar for another."""

from __future__ import annotations

import re

from indexium_contracts.github import ReleaseAsset

# Build by-products that are not the mod itself.
_SKIP = re.compile(r"-(sources|javadoc|dev|dev-shadow|api-sources)\.jar$", re.IGNORECASE)


def mod_jars(assets: list[ReleaseAsset]) -> list[ReleaseAsset]:
    return [
        a for a in assets
        if a.name.lower().endswith(".jar") and not _SKIP.search(a.name) and a.state in (None, "uploaded")
    ]


def sidecars(assets: list[ReleaseAsset]) -> dict[str, str]:
    """Map jar name -> download URL of its ``<jar>.sha256`` asset, when the release has one."""
    return {
        a.name[: -len(".sha256")]: a.browser_download_url
        for a in assets
        if a.name.lower().endswith(".jar.sha256")
    }


def version_type(tag: str, prerelease: bool) -> str:
    if not prerelease:
        return "release"
    return "alpha" if re.search(r"alpha|(^|[^a-z])a\d", tag, re.IGNORECASE) else "beta"
