"""Read entries of a remote jar with a few HTTP Range requests.

Request plan (spec: manifest-formats.md section 2; docs/indexer.md "Request budget"):

1. one SUFFIX range of ``tail_size`` bytes: the size comes from ``Content-Range``, the
   end-of-central-directory record is always inside, and for most mod jars the whole
   central directory and often the manifests are too;
2. only if the central directory starts before the tail: one request for the rest of
   it. The tail already holds the directory's LAST records, i.e. the entries written
   last, where builds put resources: when the caller's ``plan`` wants one of those
   (a manifest), its bytes are fetched in the same round, in the same request when it
   sits just before the directory. When the tail holds no whole record, a bounded blind
   look-behind (``cd_prefetch``) is fetched with the directory instead;
3. ``read()``: the wanted entries, grouped into as few requests as the byte allowance
   permits, skipping every byte already held; ``also=`` entries are added only where they
   widen a planned request cheaply (never a request of their own).

The byte allowance keeps the reader near the ideal: everything fetched stays within
``(1 + extra_ratio)`` times the bytes that were needed anyway (tail, directory, wanted
entries), so gap bridging and speculative reads never cost more than that.

Duplicate names: java.util.zip.ZipFile resolves a name to the LAST central-directory
record with that name (``Source.getEntryPos`` walks a hash chain whose head is the
record added last; JDK 8's native zip_util.c did the same, and jdk.nio.zipfs's
``HashMap.put`` keeps the last too), and CPython's ``zipfile`` agrees. Loaders read
manifests through those APIs, so a name here means its last record. Pass a
:class:`ZipEntry` from ``entries`` to read a specific one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

import aiohttp

from ..errors import CorruptZip, FetchLimitExceeded, NeedMoreBytes
from .source import FetchStats, HttpRangeSource
from .policy import DownloadPolicy
from ..errors import JarReadError
from ..zip.spans import Range, SpanStore, plan_requests
from ..zip.zipfmt import (
    LOCAL_HEADER_SIZE,
    MAX_EOCD_DISTANCE,
    CentralDirectory,
    CentralDirectoryInfo,
    ZipEntry,
    check_entry,
    extract,
    extract_prefix,
    local_data_span,
    locate_eocd,
    prefix_span,
    scan_directory_suffix,
)

#: Entries read only as far as their useful start when they are larger: a signed jar's
#: MANIFEST.MF carries one digest section per entry after its main section.
PREFIX_READS = {"META-INF/MANIFEST.MF": 64 * 1024}

#: ``plan(directory, complete)`` → ``(required, optional)`` entry names: what the caller will
#: read. Called with the directory's last records while opening (``complete=False``) and
#: lets the reader fetch those entries together with the directory.
ReadPlan = Callable[[CentralDirectory, bool], tuple[Sequence[str], Sequence[str]]]

__all__ = ["DownloadPolicy", "FetchStats", "MemorySource", "RangeSource", "ReadPlan", "RemoteJar"]


class RangeSource(Protocol):
    """Where the bytes come from. Implementations may return more than asked."""

    stats: FetchStats

    async def fetch_tail(self, length: int) -> tuple[int, int, bytes]:
        """``(file_size, offset, data)`` with data covering the last ``length`` bytes."""
        ...

    async def fetch(self, start: int, end: int) -> tuple[int, bytes | list[bytes]]:
        """``(offset, data)`` with data covering ``[start, end)``: bytes, or the consecutive
        chunks they arrived in (joined once, by the span store)."""
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
        self.directory = CentralDirectory(b"")
        # Bytes an ideal reader needs for what was asked so far (tail, directory, entries):
        # the base of the byte allowance.
        self._needed = 0
        self._counted: set[int] = set()  # local header offsets already in _needed

    @classmethod
    async def open(
        cls,
        session: aiohttp.ClientSession,
        url: str,
        policy: DownloadPolicy,
        *,
        headers: dict[str, str] | None = None,
        plan: ReadPlan | None = None,
    ) -> RemoteJar:
        return await cls.from_source(HttpRangeSource(session, url, policy, headers), policy, plan=plan)

    @classmethod
    async def from_source(cls, source: RangeSource, policy: DownloadPolicy, *, plan: ReadPlan | None = None) -> RemoteJar:
        if policy.tail_size > policy.max_fetch_bytes:
            raise FetchLimitExceeded("tail_size exceeds max_fetch_bytes")
        size, offset, data = await source.fetch_tail(policy.tail_size)
        store = SpanStore()
        store.add(offset, data)
        jar = cls(source, policy, size, store)
        jar._needed = len(data)
        jar.info = await jar._locate()
        jar.directory = await jar._read_central_directory(jar.info, plan)
        return jar

    @property
    def stats(self) -> FetchStats:
        return self._source.stats

    @property
    def entries(self) -> list[ZipEntry]:
        """Every central-directory record, in order (built on first use: the indexer
        looks entries up by name through ``directory`` instead)."""
        return self.directory.entries()

    @property
    def comment(self) -> bytes:
        return self.info.comment if self.info else b""

    @property
    def needed_bytes(self) -> int:
        """What an ideal reader would have fetched for the same reads (for measurements)."""
        return self._needed

    def entry(self, name: str) -> ZipEntry | None:
        """The last record with that name (later duplicates win, as in Java)."""
        return self.directory.entry(name)

    def is_held(self, name_or_entry: str | ZipEntry) -> bool:
        """Whether reading the entry costs no request (its bytes were fetched already)."""
        entry = self._resolve(name_or_entry)
        if entry is None:
            return True
        start, end = self._exact_span(entry)
        return not self._store.missing(start, end)

    def requests_for(self, names: Iterable[str | ZipEntry]) -> int:
        """How many requests ``read(names)`` would send now."""
        entries = [e for e in (self._resolve(n) for n in names) if e is not None]
        requests, _, _ = self._plan_round(self._missing(self._span(e) for e in entries), [], entries)
        return len(requests)

    def reach(self, names: Iterable[str | ZipEntry]) -> tuple[int, int] | None:
        """The part of the file an ``also=`` entry must lie in to join ``read(names)``'s
        round now, or None when that round sends no request: whatever widens a planned
        request is paid from the byte allowance, so it ends within that many bytes of the
        bytes still missing."""
        entries = [e for e in (self._resolve(n) for n in names) if e is not None]
        missing = self._missing(self._span(e) for e in entries)
        if not missing:
            return None
        fresh = [e for e in entries if e.local_header_offset not in self._counted]
        left = max(0, self._allowance(sum(self._exact_size(e) for e in fresh), sum(b - a for a, b in missing)))
        return max(0, missing[0][0] - left), min(self.size, max(b for _, b in missing) + left)

    async def read(
        self,
        entries_or_names: Iterable[str | ZipEntry] | str | ZipEntry,
        *,
        max_size: int | None = None,
        also: Iterable[str | ZipEntry] = (),
    ) -> dict[str, bytes]:
        """Inflated bytes of each wanted entry, keyed by name. Names not in the jar are skipped.

        Every entry is checked (encryption, method, size limits) before anything is
        fetched; the first failure raises and nothing is returned. ``also`` names entries
        likely to be read next: their bytes are fetched only where that widens a planned
        request within the byte allowance (never as a request of their own); they are not
        returned. An entry in :data:`PREFIX_READS` larger than its limit is returned as its
        first bytes only.
        """
        limit = self._policy.max_entry_size if max_size is None else max_size
        items = [entries_or_names] if isinstance(entries_or_names, (str, ZipEntry)) else entries_or_names
        wanted: dict[str, ZipEntry] = {}
        for item in items:
            found = self._resolve(item)
            if found is not None:
                wanted[found.name] = found
        for entry in wanted.values():
            if not self._is_prefix_read(entry):
                check_entry(entry, limit)
            if entry.local_header_offset + LOCAL_HEADER_SIZE + entry.compressed_size > self.size:
                raise CorruptZip(f"entry {entry.name!r} lies outside the file")
        optional = []
        for item in also:
            entry = self._resolve(item)
            if entry is None or entry.name in wanted:
                continue
            try:
                check_entry(entry, self._policy.max_entry_size)
            except JarReadError:
                continue  # it would fail when read for real; do not fetch it now
            optional.append(entry)
        await self._load(list(wanted.values()), optional)

        result: dict[str, bytes] = {}
        pending = list(wanted.items())
        # Second pass only for local extra fields longer than the margin.
        for attempt in range(2):
            needed: list[Range] = []
            retry = []
            for name, entry in pending:
                offset, buf = self._store.window(entry.local_header_offset)
                try:
                    if self._is_prefix_read(entry):
                        result[name] = extract_prefix(entry, buf, offset, PREFIX_READS[entry.name])
                    else:
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

    # --- planning -----------------------------------------------------------------------

    def _resolve(self, item: str | ZipEntry) -> ZipEntry | None:
        return item if isinstance(item, ZipEntry) else self.directory.entry(item)

    def _is_prefix_read(self, entry: ZipEntry) -> bool:
        limit = PREFIX_READS.get(entry.name)
        return limit is not None and entry.uncompressed_size > limit

    def _span(self, entry: ZipEntry) -> Range:
        """Bytes to fetch for an entry: local header, name, data, and a margin for the local extra."""
        if self._is_prefix_read(entry):
            start = entry.local_header_offset
            end = start + LOCAL_HEADER_SIZE + entry.name_size + prefix_span(entry, PREFIX_READS[entry.name])
            return start, min(self.size, end + self._policy.entry_margin)
        return local_data_span(entry, self._policy.entry_margin, self.size)

    def _exact_size(self, entry: ZipEntry) -> int:
        start, end = self._span(entry)
        return max(0, end - start - self._policy.entry_margin)

    def _exact_span(self, entry: ZipEntry) -> Range:
        """The entry's bytes, exact when its local header is held (its extra length known)."""
        start = entry.local_header_offset
        offset, buf = self._store.window(start)
        lo = start - offset
        if len(buf) >= lo + LOCAL_HEADER_SIZE:
            nlen = int.from_bytes(buf[lo + 26 : lo + 28], "little")
            elen = int.from_bytes(buf[lo + 28 : lo + 30], "little")
            length = prefix_span(entry, PREFIX_READS[entry.name]) if self._is_prefix_read(entry) else entry.compressed_size
            return start, min(self.size, start + LOCAL_HEADER_SIZE + nlen + elen + length)
        return start, start + LOCAL_HEADER_SIZE

    def _missing(self, ranges: Iterable[Range]) -> list[Range]:
        return [gap for start, end in ranges for gap in self._store.missing(start, end)]

    def _allowance(self, extra_needed: int = 0, required_bytes: int = 0) -> int:
        """Bytes that may still be spent beyond what is needed, keeping the whole read within
        ``(1 + extra_ratio)`` times the needed bytes."""
        budget = (1 + self._policy.extra_ratio) * (self._needed + extra_needed)
        return int(budget) - self.stats.bytes_fetched - required_bytes

    async def _load(self, required: Sequence[ZipEntry], optional: Sequence[ZipEntry]) -> None:
        """Fetch the required entries' bytes (and optional ones where cheap) in one round."""
        ranges = self._missing(self._span(e) for e in required)
        if not ranges:
            return
        await self._fetch_round(ranges, self._missing(self._span(e) for e in optional), required)

    def _plan_round(self, ranges: list[Range], optional: list[Range],
                    entries: Sequence[ZipEntry]) -> tuple[list[Range], list[ZipEntry], int]:
        """(requests, entries not yet counted as needed, their exact bytes) for one round."""
        fresh = [e for e in entries if e.local_header_offset not in self._counted]
        extra = sum(self._exact_size(e) for e in fresh)
        requests, _ = plan_requests(ranges, optional, max_gap=self._policy.coalesce_gap,
                                    allowance=self._allowance(extra, sum(b - a for a, b in ranges)))
        return requests, fresh, extra

    async def _fetch_round(self, ranges: list[Range], optional: list[Range], entries: Sequence[ZipEntry]) -> None:
        """One round of requests for ``ranges`` (widened toward ``optional`` where the byte
        allowance permits); ``entries``' exact sizes join the bytes an ideal reader needs."""
        requests, fresh, extra = self._plan_round(ranges, optional, entries)
        await self._fetch(requests)
        self._needed += extra
        self._counted.update(e.local_header_offset for e in fresh)

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
                self._needed += offset - need.start
                await self._fetch([(max(0, need.start - self._policy.cd_prefetch), offset)])
            except CorruptZip:
                if offset <= floor:
                    raise
                # A tail_size below the longest possible comment can miss the end record.
                self._needed += offset - floor
                await self._fetch([(floor, offset)])
        raise CorruptZip("end of central directory not found")

    async def _read_central_directory(self, info: CentralDirectoryInfo, plan: ReadPlan | None) -> CentralDirectory:
        if info.cd_size > self._policy.max_cd_size:
            raise FetchLimitExceeded(f"central directory of {info.cd_size} bytes exceeds the limit")
        start, end = info.cd_offset, info.cd_offset + info.cd_size
        missing = self._store.missing(start, end)
        suffix, suffix_offset = None, 0
        if missing:
            suffix, suffix_offset = await self._fetch_directory(info, (missing[0][0], missing[-1][1]), plan)
        offset, buf = self._store.window(start)
        # The records the tail held were walked to plan this round: not walked again.
        return CentralDirectory(buf, base_offset=info.base_offset, start=start - offset, end=end - offset,
                                suffix=suffix, shift=suffix_offset - offset)

    async def _fetch_directory(self, info: CentralDirectoryInfo, gap: Range,
                               plan: ReadPlan | None) -> tuple[CentralDirectory | None, int]:
        """One round for the rest of the directory, plus the wanted entries it already names.
        Returns the directory's last records read from the tail (and that window's offset)."""
        self._needed += gap[1] - gap[0]
        end = info.cd_offset + info.cd_size
        known, offset = None, 0
        if end > 0:
            offset, buf = self._store.window(end - 1)
            known = scan_directory_suffix(buf, offset, info.cd_offset, end, base_offset=info.base_offset)
        required: list[ZipEntry] = []
        optional: list[Range] = []
        if known is None or plan is None:
            # Nothing known about the entries before the directory, or about what the caller
            # will read: a blind look-behind, bounded by the allowance.
            look = min(self._policy.cd_prefetch, max(0, self._allowance(0, gap[1] - gap[0])))
            optional.append((max(0, gap[0] - look), gap[0]))
        else:
            want, maybe = plan(known, False)
            for names, out in ((want, required), (maybe, None)):
                for name in names:
                    entry = known.entry(name)
                    if entry is None or not self._plausible(entry):
                        continue
                    if out is not None:
                        out.append(entry)
                    else:
                        optional.extend(self._missing([self._span(entry)]))
        await self._fetch_round([gap, *self._missing(self._span(e) for e in required)], optional, required)
        return known, offset

    def _plausible(self, entry: ZipEntry) -> bool:
        """A record from the directory's tail worth fetching ahead (checks as read() will)."""
        try:
            if not self._is_prefix_read(entry):
                check_entry(entry, self._policy.max_entry_size)
        except JarReadError:
            return False
        return entry.local_header_offset + LOCAL_HEADER_SIZE + entry.compressed_size <= self.size

    # --- fetching -----------------------------------------------------------------------

    async def _ensure(self, ranges: Iterable[Range]) -> None:
        missing = self._missing(ranges)
        if missing:
            requests, _ = plan_requests(missing, max_gap=self._policy.coalesce_gap,
                                        allowance=self._policy.coalesce_gap)
            await self._fetch(requests)

    async def _fetch(self, ranges: list[Range]) -> None:
        if not ranges:
            return
        total = sum(end - start for start, end in ranges)
        if self.stats.bytes_fetched + total > self._policy.max_fetch_bytes:
            raise FetchLimitExceeded(f"reading would exceed {self._policy.max_fetch_bytes} bytes")
        if len(ranges) == 1:
            # Most rounds are one request: awaited in place, not as a task of its own (a
            # task and a gather per round cost more than the planning of the round).
            results = [await self._source.fetch(*ranges[0])]
        else:
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
