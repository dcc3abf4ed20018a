"""One pack asset (a resource, data or shader pack zip, a ``.mrpack``) -> its record, read with Range requests.

The same budget as a jar (docs/indexer.md "Request budget"): the tail brings the central
directory, which alone tells the kind (``indexium_jar.packs.classify``); the one small entry
the kind's parser needs (``pack.mcmeta``, ``modrinth.index.json``, ``shaders.properties``)
rides on the tail read when it lies there, else costs one more request, with ``pack.png``
alongside when it is near. A zip that carries a loader manifest is a mod by another name:
it is read as a jar.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp

from indexium_jar import formats, packs
from indexium_jar.gameversions import VersionTable, default_table
from indexium_jar.http.remote import DownloadPolicy, RangeSource, RemoteJar
from indexium_jar.metadata import ICON_MAX_BYTES, MAX_REQUESTS, JarMetadata, icon_type, read_jar
from indexium_jar.packs.resourcepack import ICON
from indexium_jar.zip import entrysizes
from indexium_jar.zip.zipfmt import CentralDirectory
from indexium_jar.errors import JarReadError

# The entries a pack parser may need, known before the whole directory is (the tail's records):
# the pack formats' identifying files, from the format registry.
_MANIFESTS = tuple(dict.fromkeys(e for f in formats.PACK_FORMATS for e in f.identified_by
                                 if not e.endswith("/") and "*" not in e))


def pack_plan(directory: CentralDirectory, complete: bool) -> tuple[Sequence[str], Sequence[str]]:
    """(required, optional) entries to fetch with the directory (``RemoteJar``'s ReadPlan)."""
    required = [n for n in _MANIFESTS if n in directory]
    optional = [ICON] if ICON in directory else []
    return required, optional


async def read_pack_metadata(session: aiohttp.ClientSession, url: str, policy: DownloadPolicy,
                             table: VersionTable | None = None, *, file_name: str, release_text: str = "",
                             max_requests: int = MAX_REQUESTS, with_entry_sizes: bool = False) -> JarMetadata:
    jar = await RemoteJar.open(session, url, policy, plan=pack_plan)
    return await read_pack(jar, table, file_name=file_name, release_text=release_text, max_requests=max_requests,
                           with_entry_sizes=with_entry_sizes)


async def read_pack_source(source: RangeSource, policy: DownloadPolicy, table: VersionTable | None = None, *,
                           file_name: str, release_text: str = "", max_requests: int = MAX_REQUESTS,
                           with_entry_sizes: bool = False) -> JarMetadata:
    """The same over any range source (tests and benchmarks read local bytes)."""
    jar = await RemoteJar.from_source(source, policy, plan=pack_plan)
    return await read_pack(jar, table, file_name=file_name, release_text=release_text, max_requests=max_requests,
                           with_entry_sizes=with_entry_sizes)


async def read_pack(jar: RemoteJar, table: VersionTable | None, *, file_name: str, release_text: str = "",
                    max_requests: int = MAX_REQUESTS, with_entry_sizes: bool = False) -> JarMetadata:
    names = jar.directory
    listed = set(names.names())
    kind = packs.classify(listed, file_name)
    if kind.mod:  # a loader manifest in a zip: a mod jar by another name
        return await read_jar(jar, table, max_requests=max_requests, with_entry_sizes=with_entry_sizes)
    archive = packs.Archive(names=listed, file_name=file_name, release_text=release_text,
                            table=table or default_table())
    wanted = packs.entries_to_read(listed, file_name)
    icon_near = [ICON] if kind.format is not None and ICON in listed else []
    files = await jar.read(wanted, also=icon_near) if wanted else {}
    result = packs.parse_pack(files, archive)
    warnings: list[str] = []
    icon = None
    record = result.record
    if record is not None and record.icon:
        entry = jar.entry(record.icon)
        fits = entry is not None and (jar.is_held(entry) or jar.stats.requests - jar.stats.redirects
                                      + jar.requests_for([entry]) <= max_requests)
        if entry is not None and fits and entry.uncompressed_size <= ICON_MAX_BYTES:
            try:
                data = (await jar.read([entry], max_size=ICON_MAX_BYTES))[entry.name]
                if (ctype := icon_type(data)) is not None:
                    icon = (ctype, data)
                else:
                    warnings.append(f"icon {entry.name!r} is neither PNG nor JPEG")
            except JarReadError as exc:
                if exc.retryable:
                    raise
                warnings.append(f"icon {entry.name!r} skipped: {exc.code}")
        elif entry is not None:
            warnings.append(f"icon {entry.name!r} not read: too large or over {max_requests} requests")
    return JarMetadata(
        records=[], problems=list(result.problems), icon=icon,
        requests=jar.stats.requests - jar.stats.redirects, redirects=jar.stats.redirects,
        bytes_fetched=jar.stats.bytes_fetched, warnings=warnings,
        nested_jars=list(record.nested_jars) if record is not None else [],
        needed_bytes=jar.needed_bytes,
        entry_sizes=entrysizes.pack(names.descriptor_sizes()) if with_entry_sizes else b"",
        pack=record, skip=result.skip,
    )
