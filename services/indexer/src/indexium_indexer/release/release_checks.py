"""What of a signed release the index cannot store or fetch, said in words its author can read.

GitHub signs whatever a release carries: a tag longer than ``mod_versions.version_number``
holds, NUL characters (PostgreSQL text cannot hold U+0000), an asset URL no URL parser
takes. Found before the job touches the database or the network, each is a permanent,
named failure on the first attempt instead of a crash spending every retry; NUL in text
that is only shown (release name and notes, the mod card) is simply dropped.
"""

from __future__ import annotations

import msgspec
from yarl import URL

from indexium_contracts.github import ReleaseAsset
from indexium_jar.errors import JarReadError

from ..modcard import shown

# mod_versions.version_number is varchar(128): a tag is the version launchers compare.
MAX_TAG_CHARS = 128


class BadAssetUrl(JarReadError):
    code = "bad_asset_url"


def _strip_nul(value):
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, (list, tuple)):
        return [_strip_nul(v) for v in value]
    if isinstance(value, dict):
        return {_strip_nul(k): _strip_nul(v) for k, v in value.items()}
    return value


def records_without_nul(records: list[msgspec.Struct]) -> list[msgspec.Struct]:
    """Manifest records with NUL dropped from every string (a manifest is stored as jsonb,
    which refuses U+0000, and its text is only shown). Records without NUL are kept as they are."""
    out = []
    for record in records:
        if b"\\u0000" in msgspec.json.encode(record):
            record = msgspec.convert(_strip_nul(msgspec.to_builtins(record)), type(record))
        out.append(record)
    return out


def tag_problem(tag: str) -> str | None:
    """Why ``tag`` cannot be a version number, or None."""
    stripped = tag.strip()
    if not stripped:
        return "The release tag is empty."
    if len(stripped) > MAX_TAG_CHARS:
        return (f"The release tag is {len(stripped)} characters long; a version number is at most "
                f"{MAX_TAG_CHARS}. Publish the release under a shorter tag.")
    if not stripped.isprintable():
        return "The release tag contains control characters (NUL, newline, ...); use a plain tag such as 1.2.0."
    return None


def url_problem(asset: ReleaseAsset) -> BadAssetUrl | None:
    """The failure for an asset whose download URL cannot be parsed, or None."""
    try:
        URL(asset.browser_download_url)
    except ValueError as exc:
        return BadAssetUrl(f"the download URL cannot be read ({exc})")
    return None
