"""Ping protocol v1: the JSON a server sends, decoded strictly in shape and leniently in spelling.

Structure is strict: unknown fields, wrong types, out-of-range numbers and over-long
strings are refused and the error names the field. Informational values are taken
as real JVMs and loaders report them and normalized: ``System.getProperty("os.name")``
says ``Linux`` or ``Windows 11``, ``os.arch`` says ``amd64``; an unknown value
becomes ``other`` instead of costing the whole ping. Pure functions only.
"""

from __future__ import annotations

import functools
import re
import uuid
from typing import Annotated, Literal

import msgspec
from indexium_contracts.slugs import SLUG_RE

MAX_MODS = 1000  # the largest public modpacks run ~600 mods; 64 KiB of JSON fits ~1000 entries
OTHER = "other"

SLUG_PATTERN = SLUG_RE.pattern
Slug = Annotated[str, msgspec.Meta(pattern=SLUG_PATTERN)]
# A loader's own mod id (fabric.mod.json "id", mods.toml modId, mcmod.info modid): Fabric allows
# [a-z][a-z0-9-_]{1,63}, Forge [a-z][a-z0-9_]{1,63}; legacy mcmod.info ids have capitals and dots.
ManifestId = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")]
# Free text as reported; bounded (a longer value is abuse, not a spelling), cleaned after decoding.
Reported = Annotated[str, msgspec.Meta(max_length=64)]
ReportedVersion = Annotated[str, msgspec.Meta(max_length=256)]

LOADERS = ("fabric", "quilt", "forge", "neoforge")
OSES = ("linux", "windows", "macos", "freebsd", OTHER)
ARCHES = ("x86_64", "aarch64", "x86", "arm", "riscv64", OTHER)


class ModEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    slug: Slug | None = None
    mod_id: uuid.UUID | None = None
    # The id the mod's loader reports for it; resolved through the manifests we indexed.
    manifest_id: ManifestId | None = None
    version: ReportedVersion | None = None


class PingV1(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    server_uuid: uuid.UUID
    mods: Annotated[list[ModEntry], msgspec.Meta(min_length=1, max_length=MAX_MODS)]
    game_version: Reported
    loader: Reported
    java_version: Reported
    os: Reported
    arch: Reported
    core_count: Annotated[int, msgspec.Meta(ge=1, le=1024)]
    # A client that predates the field speaks v1.
    protocol: Literal[1] = 1
    player_count: Annotated[int, msgspec.Meta(ge=0, le=100_000)] | None = None
    online_mode: bool | None = None


class InvalidPing(Exception):
    """A ping we refuse; the message is safe to show the client and names the problem."""


# The same shapes with slugs unchecked. msgspec checks a pattern by calling Python's ``re`` for
# every string: for a ping naming 20 mods by slug that was most of its decode. decode_ping
# checks slugs itself, against the slugs it already found valid first (the same few thousand
# mods recur in every ping), and decodes anything refused again with PingV1 itself, so every
# error names the same field in the same words as a strict decode would.
class _LooseModEntry(ModEntry, frozen=True, forbid_unknown_fields=True):
    slug: str | None = None


class _LoosePingV1(PingV1, frozen=True, forbid_unknown_fields=True):
    mods: Annotated[list[_LooseModEntry], msgspec.Meta(min_length=1, max_length=MAX_MODS)]


_strict_decoder = msgspec.json.Decoder(PingV1)
_decoder = msgspec.json.Decoder(_LoosePingV1)
# The same few thousand mods and their versions recur in every ping: whether a slug is valid
# and how a version is shown are remembered (functools.lru_cache), bounded so that made-up
# values cannot grow the caches; a made-up value only evicts the least recently seen one.
_SEEN_VALUES_MAX = 100_000
_JAVA_LEGACY = re.compile(r"^1\.(\d+)")
_JAVA_MAJOR = re.compile(r"^(\d+)")
_GAME_VERSION = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}\Z")
_NOT_PRINTABLE = re.compile(r"[^\x20-\x7e]+")
_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "x64": "x86_64", "x86-64": "x86_64",
         "aarch64": "aarch64", "arm64": "aarch64",
         "x86": "x86", "i386": "x86", "i486": "x86", "i586": "x86", "i686": "x86",
         "arm": "arm", "arm32": "arm", "armv7l": "arm", "armv7": "arm", "armhf": "arm",
         "riscv64": "riscv64", "riscv": "riscv64"}
_LOADER = {"fabric": "fabric", "quilt": "quilt", "forge": "forge", "minecraftforge": "forge",
           "neoforge": "neoforge", "neoforged": "neoforge", "neo forge": "neoforge"}


def normalize_os(value: str) -> str:
    """os.name as the JVM reports it: 'Linux', 'Windows 11', 'Mac OS X', 'FreeBSD' ..."""
    v = value.strip().lower()
    if v.startswith("linux"):
        return "linux"
    if v.startswith("windows"):
        return "windows"
    if v.startswith(("mac", "darwin", "os x")):
        return "macos"
    if v.startswith("freebsd"):
        return "freebsd"
    return OTHER


def normalize_arch(value: str) -> str:
    return _ARCH.get(value.strip().lower(), OTHER)


def normalize_loader(value: str) -> str:
    return _LOADER.get(value.strip().lower(), OTHER)


def normalize_game_version(value: str) -> str:
    v = value.strip()
    return v if _GAME_VERSION.match(v) else OTHER


def clean_version(value: str | None) -> str | None:
    """A mod version as shown: printable ASCII, at most 64 characters; nothing left is None."""
    if value is None:
        return None
    if len(value) <= 64 and value.isascii() and value.isprintable() and value.strip() == value and value:
        return value  # what nearly every ping carries: no regex, no copy
    v = _NOT_PRINTABLE.sub("", value).strip()[:64]
    return v or None


@functools.lru_cache(maxsize=_SEEN_VALUES_MAX)
def _slug_valid(slug: str) -> bool:
    return SLUG_RE.match(slug) is not None


_shown_version = functools.lru_cache(maxsize=_SEEN_VALUES_MAX)(clean_version)


def _decode_strictly(body: bytes) -> PingV1:
    try:
        return _strict_decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise InvalidPing(f"Invalid ping: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidPing(f"The body is not valid JSON: {exc}") from None


def decode_ping(body: bytes) -> PingV1:
    if not body.strip():
        raise InvalidPing("The body is empty; send a JSON ping.")
    try:
        ping = _decoder.decode(body)
    except msgspec.DecodeError:  # ValidationError too: the strict decoder's error names it
        ping = _decode_strictly(body)
    # One pass over the mods: each slug as PingV1 checks it (remembered per slug), each entry
    # naming exactly one id, each version as shown (clean_version, remembered per version).
    # Refusals keep a strict decode's order: a slug anywhere first, then the nil uuid, then
    # the first entry not naming exactly one id.
    mods = ping.mods
    not_one = cleaned = None
    slug_valid, shown_version = _slug_valid, _shown_version
    for i, entry in enumerate(mods):
        slug = entry.slug
        if slug is not None:
            if not slug_valid(slug):
                _decode_strictly(body)  # raises, naming the first field refused
                raise InvalidPing(f"Invalid ping: Expected `str` matching regex {SLUG_PATTERN!r}")
            if not_one is None and (entry.mod_id is not None or entry.manifest_id is not None):
                not_one = i
        elif not_one is None and (entry.mod_id is None) is (entry.manifest_id is None):
            not_one = i
        version = entry.version
        if version is not None:
            shown = shown_version(version)
            if shown is not version and shown != version:
                if cleaned is None:
                    cleaned = list(mods)
                cleaned[i] = msgspec.structs.replace(entry, version=shown)
    if ping.server_uuid.int == 0:
        raise InvalidPing("Invalid ping: server_uuid must not be the nil UUID - at `$.server_uuid`")
    if not_one is not None:
        raise InvalidPing(
            f"Invalid ping: give exactly one of slug, mod_id or manifest_id - at `$.mods[{not_one}]`")
    return msgspec.structs.replace(
        ping, mods=mods if cleaned is None else cleaned, game_version=_game_version_spelling(ping.game_version),
        loader=_loader_spelling(ping.loader), java_version=ping.java_version.strip(),
        os=_os_spelling(ping.os), arch=_arch_spelling(ping.arch))


# Values as reported -> normalized: a few dozen spellings exist in the wild; remembered, bounded
# so that made-up values cannot grow the caches.
_SEEN_MAX = 256
_os_spelling = functools.lru_cache(maxsize=_SEEN_MAX)(normalize_os)
_arch_spelling = functools.lru_cache(maxsize=_SEEN_MAX)(normalize_arch)
_loader_spelling = functools.lru_cache(maxsize=_SEEN_MAX)(normalize_loader)
_game_version_spelling = functools.lru_cache(maxsize=_SEEN_MAX)(normalize_game_version)


def java_major(java_version: str) -> str:
    """'1.8.0_372' -> '8', '17.0.2' -> '17', '21' -> '21': fewer distinct values, less fingerprint."""
    m = _JAVA_LEGACY.match(java_version) or _JAVA_MAJOR.match(java_version)
    return m.group(1) if m else OTHER
