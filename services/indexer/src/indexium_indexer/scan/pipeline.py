"""Scan one file: stream it once, hash and parse it at the same time, check it against GitHub.

The event loop only moves bytes. Hashing (sha1+sha256+sha512) runs in one worker
thread and the archive walk in another, each fed by its own :class:`ChunkPipe`: the
loop hands every chunk to both and never waits for a chunk's hash, so the hashing
thread goes from one chunk to the next without a round trip through the loop. Both
spend much of their time in C code that releases the GIL (hashlib, ISA-L inflate), so they
overlap. At most :data:`PIPE_CHUNKS` chunks are queued for each: memory is bounded
whatever the file's size.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass

import aiohttp

from indexium_jar.zip import entrysizes
from indexium_jar.errors import JarReadError
from indexium_jar.http.policy import DownloadPolicy

from . import download
from .archive import ArchiveReport, ScanLimits, scan_archive
from .verdict import SIDECAR_MISSING, FileVerdict, Hashes, MultiHasher, decide, failed, integrity_findings

PIPE_CHUNKS = 4


class StreamAborted(Exception):
    """The producer stopped (download failed or cancelled) before the end."""


class ChunkPipe:
    """An async producer hands chunks to one consumer thread, ``capacity`` at most in flight."""

    _END = object()

    def __init__(self, loop: asyncio.AbstractEventLoop, capacity: int = PIPE_CHUNKS):
        self._loop = loop
        self._q: queue.SimpleQueue = queue.SimpleQueue()
        self._space = asyncio.Semaphore(capacity)
        self._capacity = capacity
        self.consumer_gone = False

    async def put(self, chunk: bytes) -> None:
        if self.consumer_gone:
            return  # the parser stopped early (corrupt archive): keep hashing, drop the bytes
        await self._space.acquire()
        if not self.consumer_gone:
            self._q.put(chunk)

    def close(self) -> None:
        self._q.put(self._END)

    def abort(self) -> None:
        self._q.put(StreamAborted())

    # consumer thread
    def __iter__(self):
        try:
            while True:
                item = self._q.get()
                if item is self._END:
                    return
                if isinstance(item, StreamAborted):
                    raise item
                self._loop.call_soon_threadsafe(self._space.release)
                yield item
        finally:
            self._loop.call_soon_threadsafe(self._gone)

    def _gone(self) -> None:
        self.consumer_gone = True
        for _ in range(self._capacity + 1):
            self._space.release()


def _hash_all(pipe: ChunkPipe, hasher: MultiHasher) -> None:
    for chunk in pipe:
        hasher.update(chunk)


def _consume(pipe: ChunkPipe, limits: ScanLimits, sizes: Mapping[int, int] | bytes | None) -> ArchiveReport:
    chunks = iter(pipe)
    try:
        if isinstance(sizes, bytes):  # unpacked here, off the event loop
            sizes = entrysizes.unpack(sizes)
        return scan_archive(chunks, limits, sizes)
    finally:
        chunks.close()  # tells the producer at once when the walk stopped early


async def scan_stream(chunks: AsyncIterator[bytes], *, limits: ScanLimits, parse_executor: Executor,
                      hash_executor: Executor, sizes: Mapping[int, int] | bytes | None = None,
                      ) -> tuple[Hashes, ArchiveReport]:
    """Hash and scan a stream of chunks; exceptions of ``chunks`` propagate.

    Two executors on purpose: each thread blocks waiting for chunks for the whole file,
    so one must never queue behind the other (one thread of each per file scanned at once).
    """
    loop = asyncio.get_running_loop()
    hash_pipe, pipe = ChunkPipe(loop), ChunkPipe(loop)
    hasher = MultiHasher()
    hashing = loop.run_in_executor(hash_executor, _hash_all, hash_pipe, hasher)
    scan = loop.run_in_executor(parse_executor, _consume, pipe, limits, sizes)
    try:
        async for chunk in chunks:
            await hash_pipe.put(chunk)
            await pipe.put(chunk)
        hash_pipe.close()
        pipe.close()
        await hashing
    except BaseException:
        hash_pipe.abort()
        pipe.abort()
        with contextlib.suppress(BaseException):
            await hashing
        with contextlib.suppress(BaseException):
            await scan
        raise
    return hasher.result(), await scan


@dataclass(frozen=True)
class FileToScan:
    url: str
    size: int  # as GitHub reported it
    digest: str | None  # GitHub's "sha256:<hex>"
    sidecar_url: str | None
    # The indexer's compressed sizes of the data-descriptor entries (indexium_jar.zip.entrysizes):
    # with them such entries are stepped over without inflating. Only an optimisation: the
    # stream's own central directory is still checked against what was walked.
    entry_sizes: bytes = b""


@dataclass(frozen=True)
class ScanContext:
    session: aiohttp.ClientSession
    policy: DownloadPolicy
    parse_executor: Executor  # one thread per file scanned at once
    hash_executor: Executor  # the same: each file's hashing holds a thread for the whole download
    limits: ScanLimits
    max_bytes: int


async def scan_file(ctx: ScanContext, f: FileToScan) -> FileVerdict:
    """The verdict on one file. Raises JarReadError only when retrying may help."""
    try:
        # One request for the file: its streaming download (the sizes came with the event).
        async with download.open_body(ctx.session, f.url, ctx.policy, max_bytes=ctx.max_bytes) as body:
            hashes, report = await scan_stream(body, limits=ctx.limits, parse_executor=ctx.parse_executor,
                                               hash_executor=ctx.hash_executor, sizes=f.entry_sizes)
        sidecar: bytes | None | object = None
        if f.sidecar_url:
            sidecar = await download.fetch_small(ctx.session, f.sidecar_url, ctx.policy)
            if sidecar is None:
                sidecar = SIDECAR_MISSING
    except JarReadError as exc:
        if exc.retryable:
            raise
        return failed(exc.code, exc.message)
    integrity, notes = integrity_findings(hashes, expected_size=f.size, digest=f.digest, sidecar=sidecar)
    return decide(report, hashes, integrity, notes, ctx.limits.threshold)
