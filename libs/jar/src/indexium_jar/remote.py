"""Read entries of a remote jar with a few HTTP Range requests.

Request plan (spec: manifest-formats.md section 2):

1. one SUFFIX range of ``tail_size`` bytes: the size comes from ``Content-Range``, the
   end-of-central-directory record is always inside, and for most mod jars the whole
   central directory and often the manifests are too;
2. only if the central directory starts before the tail: one request for it (plus
   ``cd_prefetch`` bytes before it, where manifests written last tend to sit);
3. ``read()``: one request per group of wanted entries closer than ``coalesce_gap``,
   skipping every byte already held.

Duplicate names: java.util.zip.ZipFile resolves a name to the LAST central-directory
record with that name (``Source.getEntryPos`` walks a hash chain whose head is the
record added last; JDK 8's native zip_util.c did the same, and jdk.nio.zipfs's
``HashMap.put`` keeps the last too), and CPython's ``zipfile`` agrees. Loaders read
manifests through those APIs, so a name here means its last record. Pass a
:class:`ZipEntry` from ``entries`` to read a specific one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Protocol

import aiohttp

from .errors import CorruptZip, FetchLimitExceeded, NeedMoreBytes
from .http_source import FetchStats, HttpRangeSource
from .policy import DownloadPolicy
from .spans import Range, SpanStore, coalesce
from .zipfmt import (
    LOCAL_HEADER_SIZE,
    MAX_EOCD_DISTANCE,
    CentralDirectoryInfo,
    ZipEntry,
    check_entry,
    extract,
    local_data_span,
    locate_eocd,
    parse_central_directory,
)

__all__ = ["DownloadPolicy", "FetchStats", "MemorySource", "RangeSource", "RemoteJar"]


class RangeSource(Protocol):
    """Where the bytes come from. Implementations may return more than asked."""

    stats: FetchStats

    async def fetch_tail(self, length: int) -> tuple[int, int, bytes]:
        """``(file_size, offset, data)`` with data covering the last ``length`` bytes."""
        ...

    async def fetch(self, start: int, end: int) -> tuple[int, bytes]:
        """``(offset, data)`` with data covering ``[start, end)``."""
        ...


class MemorySource:
    """A ``RangeSource`` over bytes in memory, counting requests like HTTP would."""

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)
        self.stats = FetchStats()

    async def fetch_tail(self, length: int) -> tuple[int, int, bytes]:
        start = max(0, len(self._data) - length)
        _offset, data = await self.fetch(start, len(self._data))
        return len(self._data), start, data

    async def fetch(self, start: int, end: int) -> tuple[int, bytes]:
        self.stats.requests += 1
        data = self._data[start:end]
        self.stats.bytes_fetched += len(data)
        return start, data


class RemoteJar:
    """An opened remote jar: its size, central directory and the bytes fetched so far."""

    def __init__(self, source: RangeSource, policy: DownloadPolicy, size: int, store: SpanStore) -> None:
        self._source = source
        self._policy = policy
        self._store = store
        self.size = size
        self.info: CentralDirectoryInfo | None = None
        self.entries: list[ZipEntry] = []
        self._by_name: dict[str, ZipEntry] = {}

    @classmethod
    async def open(
        cls,
        session: aiohttp.ClientSession,
        url: str,
        policy: DownloadPolicy,
        *,
        headers: dict[str, str] | None = None,
    ) -> RemoteJar:
        return await cls.from_source(HttpRangeSource(session, url, policy, headers), policy)

    @classmethod
    async def from_source(cls, source: RangeSource, policy: DownloadPolicy) -> RemoteJar:
        if policy.tail_size > policy.max_fetch_bytes:
            raise FetchLimitExceeded("tail_size exceeds max_fetch_bytes")
        size, offset, data = await source.fetch_tail(policy.tail_size)
        store = SpanStore()
        store.add(offset, data)
        jar = cls(source, policy, size, store)
        jar.info = await jar._locate()
        jar.entries = await jar._read_central_directory(jar.info)
        jar._by_name = {e.name: e for e in jar.entries}  # later duplicates win, as in Java
        return jar

    @property
    def stats(self) -> FetchStats:
        return self._source.stats

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    @property
    def comment(self) -> bytes:
        return self.info.comment if self.info else b""

    def entry(self, name: str) -> ZipEntry | None:
        return self._by_name.get(name)

    async def read(
        self, entries_or_names: Iterable[str | ZipEntry] | str | ZipEntry, *, max_size: int | None = None
    ) -> dict[str, bytes]:
        """Inflated bytes of each wanted entry, keyed by name. Names not in the jar are skipped.

        Every entry is checked (encryption, method, size limits) before anything is
        fetched; the first failure raises and nothing is returned.
        """
        limit = self._policy.max_entry_size if max_size is None else max_size
        items = [entries_or_names] if isinstance(entries_or_names, (str, ZipEntry)) else entries_or_names
        wanted: dict[str, ZipEntry] = {}
        for item in items:
            found = item if isinstance(item, ZipEntry) else self._by_name.get(item)
            if found is not None:
                wanted[found.name] = found
        for entry in wanted.values():
            check_entry(entry, limit)
            if entry.local_header_offset + LOCAL_HEADER_SIZE + entry.compressed_size > self.size:
                raise CorruptZip(f"entry {entry.name!r} lies outside the file")
        await self._ensure(local_data_span(e, self._policy.entry_margin, self.size) for e in wanted.values())

        result: dict[str, bytes] = {}
        pending = list(wanted.items())
        # Second pass only for local extra fields longer than the margin.
        for attempt in range(2):
            needed: list[Range] = []
            retry = []
            for name, entry in pending:
                offset, buf = self._store.window(entry.local_header_offset)
                try:
                    result[name] = extract(entry, buf, offset, limit)
                except NeedMoreBytes as need:
                    if attempt or need.end > self.size:
                        raise CorruptZip(f"entry {entry.name!r} lies outside the file") from None
                    needed.append((need.start, need.end))
                    retry.append((name, entry))
            if not retry:
                break
            await self._ensure(needed)
            pending = retry
        return {name: result[name] for name in wanted}

    # --- opening ------------------------------------------------------------------------

    async def _locate(self) -> CentralDirectoryInfo:
        if self.size == 0:
            raise CorruptZip("empty file")
        floor = max(0, self.size - MAX_EOCD_DISTANCE)
        for _ in range(3):
            offset, tail = self._store.window(self.size - 1)
            try:
                return locate_eocd(tail, offset, self.size)
            except NeedMoreBytes as need:
                # A zip64 end record sits just before the tail; anything farther is bogus.
                if need.start >= offset or offset - need.start > self._policy.max_cd_size:
                    raise CorruptZip("zip64 end record not found") from None
                # The central directory ends where that record starts: fetch some of it too.
                await self._fetch([(max(0, need.start - self._policy.cd_prefetch), offset)])
            except CorruptZip:
                if offset <= floor:
                    raise
                # A tail_size below the longest possible comment can miss the end record.
                await self._fetch([(floor, offset)])
        raise CorruptZip("end of central directory not found")

    async def _read_central_directory(self, info: CentralDirectoryInfo) -> list[ZipEntry]:
        if info.cd_size > self._policy.max_cd_size:
            raise FetchLimitExceeded(f"central directory of {info.cd_size} bytes exceeds the limit")
        start, end = info.cd_offset, info.cd_offset + info.cd_size
        missing = self._store.missing(start, end)
        if missing:
            lo = max(0, missing[0][0] - self._policy.cd_prefetch)
            await self._fetch([(lo, missing[-1][1])])
        offset, buf = self._store.window(start)
        directory = buf[start - offset : end - offset]
        return parse_central_directory(directory, info.entry_count, base_offset=info.base_offset)

    # --- fetching -----------------------------------------------------------------------

    async def _ensure(self, ranges: Iterable[Range]) -> None:
        missing = [gap for start, end in ranges for gap in self._store.missing(start, end)]
        if missing:
            await self._fetch(coalesce(missing, self._policy.coalesce_gap))

    async def _fetch(self, ranges: list[Range]) -> None:
        total = sum(end - start for start, end in ranges)
        if self.stats.bytes_fetched + total > self._policy.max_fetch_bytes:
            raise FetchLimitExceeded(f"reading would exceed {self._policy.max_fetch_bytes} bytes")
        tasks = [asyncio.ensure_future(self._source.fetch(start, end)) for start, end in ranges]
        try:
            results = await asyncio.gather(*tasks)
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        for offset, data in results:
            self._store.add(offset, data)
