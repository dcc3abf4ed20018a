"""One release asset -> its manifests' records and icon, read with a few Range requests."""

from __future__ import annotations

from dataclasses import dataclass, field

import aiohttp

from indexium_jar.errors import JarReadError
from indexium_jar.manifests import WANTED_NAMES, parse_jar
from indexium_jar.model import ManifestProblem, ModRecord
from indexium_jar.remote import DownloadPolicy, RemoteJar

ICON_MAX_BYTES = 256 * 1024
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"


@dataclass
class JarMetadata:
    records: list[ModRecord]
    problems: list[ManifestProblem]
    icon: tuple[str, bytes] | None  # (content type, bytes), checked by magic bytes
    requests: int
    bytes_fetched: int
    warnings: list[str] = field(default_factory=list)


def icon_type(data: bytes) -> str | None:
    if data.startswith(_PNG):
        return "image/png"
    if data.startswith(_JPEG):
        return "image/jpeg"
    return None


async def read_metadata(session: aiohttp.ClientSession, url: str, policy: DownloadPolicy) -> JarMetadata:
    jar = await RemoteJar.open(session, url, policy)
    wanted = [name for name in jar.names if name in WANTED_NAMES]
    files = await jar.read(wanted) if wanted else {}
    result = parse_jar(files, [e.name for e in jar.entries])
    records = list(result.records)
    icon = None
    warnings: list[str] = []
    icon_path = next((r.icon.lstrip("/") for r in records if r.icon), None)
    if icon_path and icon_path in jar.names:
        try:
            data = (await jar.read([icon_path], max_size=ICON_MAX_BYTES))[icon_path]
        except JarReadError as exc:
            if exc.retryable:
                raise
            warnings.append(f"icon {icon_path!r} skipped: {exc.code}")
        else:
            kind = icon_type(data)
            if kind is None:
                warnings.append(f"icon {icon_path!r} is neither PNG nor JPEG")
            else:
                icon = (kind, data)
    return JarMetadata(
        records=records,
        problems=list(result.problems),
        icon=icon,
        requests=jar.stats.requests,
        bytes_fetched=jar.stats.bytes_fetched,
        warnings=warnings,
    )
