"""Ping protocol v1: the exact JSON a server sends, as a strict allow-list (docs/telemetry.md).

Unknown fields, wrong types, out-of-range numbers, unknown enum values and
over-long strings are all refused; the error names the field. Pure functions only.
"""

from __future__ import annotations

import re
import uuid
from typing import Annotated, Literal

import msgspec

MAX_MODS = 1000  # the largest public modpacks run ~600 mods; 64 KiB of JSON fits ~1000 entries

Slug = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9_-]{1,63}\Z")]
ModVersion = Annotated[str, msgspec.Meta(min_length=1, max_length=64, pattern=r"^[\x20-\x7e]+\Z")]
GameVersion = Annotated[str, msgspec.Meta(pattern=r"^[0-9A-Za-z][0-9A-Za-z.+_-]{0,31}\Z")]
JavaVersion = Annotated[str, msgspec.Meta(pattern=r"^[0-9][0-9A-Za-z.+_-]{0,31}\Z")]
Loader = Literal["fabric", "quilt", "forge", "neoforge"]
Os = Literal["linux", "windows", "macos", "freebsd", "other"]
Arch = Literal["x86_64", "aarch64", "x86", "arm", "riscv64", "other"]


class ModEntry(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    slug: Slug | None = None
    mod_id: uuid.UUID | None = None
    version: ModVersion | None = None


class PingV1(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    protocol: Literal[1]
    server_uuid: uuid.UUID
    mods: Annotated[list[ModEntry], msgspec.Meta(min_length=1, max_length=MAX_MODS)]
    game_version: GameVersion
    loader: Loader
    java_version: JavaVersion
    os: Os
    arch: Arch
    core_count: Annotated[int, msgspec.Meta(ge=1, le=1024)]
    player_count: Annotated[int, msgspec.Meta(ge=0, le=100_000)] | None = None
    online_mode: bool | None = None


class InvalidPing(Exception):
    """A ping we refuse; the message is safe to show the client and names the problem."""


_decoder = msgspec.json.Decoder(PingV1)
_JAVA_LEGACY = re.compile(r"^1\.(\d+)")
_JAVA_MAJOR = re.compile(r"^(\d+)")


def decode_ping(body: bytes) -> PingV1:
    if not body.strip():
        raise InvalidPing("The body is empty; send a JSON ping.")
    try:
        ping = _decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise InvalidPing(f"Invalid ping: {exc}") from None
    except msgspec.DecodeError as exc:
        raise InvalidPing(f"The body is not valid JSON: {exc}") from None
    if ping.server_uuid.int == 0:
        raise InvalidPing("Invalid ping: server_uuid must not be the nil UUID - at `$.server_uuid`")
    for i, entry in enumerate(ping.mods):
        if (entry.slug is None) == (entry.mod_id is None):
            raise InvalidPing(f"Invalid ping: give exactly one of slug or mod_id - at `$.mods[{i}]`")
    return ping


def java_major(java_version: str) -> str:
    """'1.8.0_372' -> '8', '17.0.2' -> '17', '21' -> '21': fewer distinct values, less fingerprint."""
    m = _JAVA_LEGACY.match(java_version) or _JAVA_MAJOR.match(java_version)
    return m.group(1) if m else "other"
