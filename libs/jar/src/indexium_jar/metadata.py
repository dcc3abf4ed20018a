"""One release asset -> its manifests' records and icon, read with as few Range requests as possible.

Rounds (docs/indexer.md "Request budget"):

1. the tail (and, for a large central directory, the rest of it together with any
   manifest its last records name);
2. the loader manifests, plus what is likely wanted next where it costs no request of
   its own: MANIFEST.MF, and files named like icons;
3. only if still needed: MANIFEST.MF when a parser consulted it (``ParseResult.wants``),
   and the declared icon unless reading it would exceed ``max_requests`` for the jar
   (then it is skipped with a warning; the mod keeps its previous icon).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp

from indexium_jar.zip import entrysizes
from indexium_jar.errors import JarReadError
from indexium_jar.gameversions import VersionTable
from indexium_jar.manifests import LOADER_MANIFESTS, entries_to_read, jarjar, parse_jar
from indexium_jar.model import ManifestProblem, ModRecord, PackRecord, PackSkip
from indexium_jar.http.remote import DownloadPolicy, RangeSource, RemoteJar
from indexium_jar.zip.zipfmt import CentralDirectory, ZipEntry, check_entry

ICON_MAX_BYTES = 256 * 1024
# Requests per jar the icon may bring the read to (the read's budget: at most 3 when the
# central directory is under 1 MB). Manifests are always read; only the icon is given up.
MAX_REQUESTS = 3
_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG = b"\xff\xd8\xff"
# Files that are probably the icon a manifest will name: icon.png, logo.png, pack.png,
# <mod>_logo.png, assets/<mod>/icon.png ... (fetched ahead only where free).
_ICONISH = re.compile(r"(?:^|/)(?:[^/]*[_-])?(?:icon|logo|pack)(?:[_-][^/]*)?\.(?:png|jpe?g)$", re.IGNORECASE)
_IMAGE_SUFFIXES = (".png", ".PNG", ".jpg", ".JPG", ".jpeg", ".JPEG")  # cheap filter before the regex
# Both searched in a central directory's bytes (CentralDirectory.search): an image suffix
# (what _IMAGE_SUFFIXES accepts), then _ICONISH over the raw name before any entry is built.
_IMAGE_SUFFIX_BYTES = re.compile(rb"\.(?:png|PNG|jpe?g|JPE?G)")
_ICONISH_BYTES = re.compile(_ICONISH.pattern.encode(), re.IGNORECASE)
_MAX_ICON_GUESSES = 4
_CERTAIN = LOADER_MANIFESTS | {jarjar.PATH}


@dataclass
class JarMetadata:
    records: list[ModRecord]
    problems: list[ManifestProblem]
    icon: tuple[str, bytes] | None  # (content type, bytes), checked by magic bytes
    requests: int  # requests for bytes of the file (redirect hops not counted)
    bytes_fetched: int
    warnings: list[str] = field(default_factory=list)
    nested_jars: list[str] = field(default_factory=list)
    # What an ideal reader would have fetched (tail, directory, entries read): bytes_fetched
    # over this is the reader's overhead.
    needed_bytes: int = 0
    redirects: int = 0  # hops followed to reach the file host (github.com -> CDN is one)
    # Compressed sizes of the entries with a data descriptor (indexium_jar.zip.entrysizes), for
    # the scan stage: it streams the file and would otherwise read the directory again.
    # Packed only when asked for (``with_entry_sizes``): the indexer publishes them, a probe
    # that only looks at the manifests does not.
    entry_sizes: bytes = b""
    # A pack asset (indexium_jar.packread): its record, or why it is not a pack Indexium lists.
    pack: PackRecord | None = None
    skip: PackSkip | None = None

    @property
    def readable(self) -> bool:
        """Something to index: a mod's records or a pack's record."""
        return bool(self.records) or self.pack is not None


def icon_type(data: bytes) -> str | None:
    if data.startswith(_PNG):
        return "image/png"
    if data.startswith(_JPEG):
        return "image/jpeg"
    return None


def icon_guesses(entries: Sequence[ZipEntry]) -> list[str]:
    """Entries named like an icon, small enough to be one, shallowest first."""
    found = [e for e in entries if e.name.endswith(_IMAGE_SUFFIXES) and _ICONISH.search(e.name)
             and 0 < e.uncompressed_size <= ICON_MAX_BYTES]
    found.sort(key=lambda e: (e.name.count("/"), e.name))
    return [e.name for e in found[:_MAX_ICON_GUESSES]]


def read_plan(directory: CentralDirectory, complete: bool) -> tuple[list[str], list[str]]:
    """(required, optional) entry names; see ``indexium_jar.http.remote.ReadPlan``.

    With only the directory's last records (``complete=False``) nothing but the loader
    manifests is certain: MANIFEST.MF may be needed only because no manifest was seen yet.
    """
    required, optional = wanted_entries(directory)
    if not complete:
        optional = [n for n in required if n not in _CERTAIN] + optional
        required = [n for n in required if n in _CERTAIN]
    return required, optional


def wanted_entries(directory: CentralDirectory) -> tuple[list[str], list[str]]:
    """(required, optional): what parse_jar needs, and what may be read along (icon-like files)."""
    required, optional = entries_to_read(directory)
    return required, optional + iconish_entries(directory)


def iconish_entries(directory: CentralDirectory, near: tuple[int, int] | None = None) -> list[str]:
    """:func:`icon_guesses` found in the directory's bytes (no entry built for the other names);
    ``near``: only among the entries in that part of the file (``CentralDirectory.search``)."""
    return icon_guesses(directory.search(_IMAGE_SUFFIX_BYTES, _ICONISH_BYTES, near=near))


async def read_metadata(session: aiohttp.ClientSession, url: str, policy: DownloadPolicy,
                        table: VersionTable | None = None, *, max_requests: int = MAX_REQUESTS,
                        with_entry_sizes: bool = False) -> JarMetadata:
    """``with_entry_sizes``: also pack :attr:`JarMetadata.entry_sizes` (for the scan stage)."""
    return await read_jar(await RemoteJar.open(session, url, policy, plan=read_plan), table,
                          max_requests=max_requests, with_entry_sizes=with_entry_sizes)


async def read_source(source: RangeSource, policy: DownloadPolicy, table: VersionTable | None = None,
                      *, max_requests: int = MAX_REQUESTS, with_entry_sizes: bool = False) -> JarMetadata:
    """The same over any range source (tests and benchmarks read local bytes)."""
    return await read_jar(await RemoteJar.from_source(source, policy, plan=read_plan), table,
                          max_requests=max_requests, with_entry_sizes=with_entry_sizes)


async def read_jar(jar: RemoteJar, table: VersionTable | None, *, max_requests: int,
                   with_entry_sizes: bool = False) -> JarMetadata:
    names = jar.directory  # looked up by name; a 20,000-entry jar is never listed whole
    required, optional = entries_to_read(names)
    reach = jar.reach(required) if required else None
    if reach is not None:
        # Icon-like files only ever ride along on a request sent for the manifests, so they
        # are looked for only when there is one, and only among the entries it can reach
        # (within the byte allowance of the manifests' bytes): in a 20,000-entry directory
        # searching every name cost 0.8 ms, more than the extra Range request it would save.
        optional += iconish_entries(names, reach)
    files = await jar.read(required, also=optional) if required else {}
    result = parse_jar(files, names, table)
    warnings: list[str] = []
    icon_entry = _declared_icon(jar, result.records, warnings)
    icon_fits = icon_entry is not None and jar.is_held(icon_entry)
    if result.wants or icon_entry is not None and not icon_fits:
        wanted: list[str | ZipEntry] = list(result.wants)
        extra: list[str | ZipEntry] = []
        if icon_entry is not None and not icon_fits:
            icon_fits = _range_requests(jar) + jar.requests_for([*wanted, icon_entry]) <= max_requests
            (wanted if icon_fits else extra).append(icon_entry)
        if wanted:
            files |= await jar.read(wanted, also=extra)
        if result.wants:
            result = parse_jar(files, names, table)
            icon_entry = _declared_icon(jar, result.records, [])
    icon = None
    if icon_entry is not None:
        if icon_fits or jar.is_held(icon_entry):
            icon = await _read_icon(jar, icon_entry, warnings)
        else:
            warnings.append(f"icon {icon_entry.name!r} not read: it would take more than {max_requests} requests")
    return JarMetadata(
        records=list(result.records),
        problems=list(result.problems),
        icon=icon,
        requests=_range_requests(jar),
        redirects=jar.stats.redirects,
        bytes_fetched=jar.stats.bytes_fetched,
        warnings=warnings,
        nested_jars=list(result.nested_jars),
        needed_bytes=jar.needed_bytes,
        entry_sizes=entrysizes.pack(names.descriptor_sizes()) if with_entry_sizes else b"",
    )


def _range_requests(jar: RemoteJar) -> int:
    """Requests for the file's bytes; the redirect from github.com to the CDN is not one."""
    return jar.stats.requests - jar.stats.redirects


def _declared_icon(jar: RemoteJar, records: Sequence[ModRecord], warnings: list[str]) -> ZipEntry | None:
    """The first record's icon, if the jar has it and it may be read."""
    path = next((r.icon.lstrip("/") for r in records if r.icon), None)
    entry = jar.entry(path) if path else None
    if entry is None:
        return None
    try:
        check_entry(entry, ICON_MAX_BYTES)
    except JarReadError as exc:
        warnings.append(f"icon {path!r} skipped: {exc.code}")
        return None
    return entry


async def _read_icon(jar: RemoteJar, entry: ZipEntry, warnings: list[str]) -> tuple[str, bytes] | None:
    try:
        data = (await jar.read([entry], max_size=ICON_MAX_BYTES))[entry.name]
    except JarReadError as exc:
        if exc.retryable:
            raise
        warnings.append(f"icon {entry.name!r} skipped: {exc.code}")
        return None
    kind = icon_type(data)
    if kind is None:
        warnings.append(f"icon {entry.name!r} is neither PNG nor JPEG")
        return None
    return kind, data
