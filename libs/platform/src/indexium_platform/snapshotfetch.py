"""The search snapshot on this node: the latest revision in JetStream's object store
(``indexium_contracts.searchsnapshot``) as a node-local file, for an API replica
(``indexium_api.core.search_index``, its start's ``prefetch``) and the snapshot's writer, which starts
from the previous revision (``indexium_ops.searchsnapshot``): the file fetched only when this node has no
copy of that revision (named by the object's digest: every replica on the node maps the same
file, whose pages the kernel shares). The object store checks the object's SHA-256 as it is
read; the file is written beside its final name and renamed, so no replica maps half a file.
Older revisions' files are removed (a replica still mapping one keeps its pages until it lets go).
One fetch at a time on a node (a lock file in the directory): a replica that finds another
fetching, its own start's prefetch (prefetch.py) or a replica beside it, waits for that file
instead of fetching the same bytes again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import fcntl
import hashlib
import os
from pathlib import Path

import nats
from nats.js import api as js_api
from nats.js.errors import BucketNotFoundError, NotFoundError, ObjectNotFoundError

from indexium_contracts import searchsnapshot

SUFFIX = ".snap"
# Chunks asked for at once by the fetch's pull consumer (128 KiB each: 8 MiB in flight).
BATCH = 64


class NoSnapshot(Exception):
    """Nothing to start from (no bucket, no object): the reason, for the log line."""


async def _quiet(_exc: Exception) -> None:
    pass


async def fetch(nats_url: str, directory: Path, *, connect_timeout_s: float = 2.0,
                name: str = "indexium-api-snapshot") -> tuple[Path, bool]:
    """The latest snapshot as a file on this node, and whether it was fetched now, by this process or
    by the fetch it waited for (False: reused). ``name``: the NATS connection's."""
    # One try per server, no wait between: with max_reconnect_attempts=0 nats-py retries a refused
    # server in a busy loop until the bound below (every API start without NATS took 4 s of CPU).
    # Its errors are this function's to raise, not nats-py's to log. Still bounded as a whole.
    nc = await asyncio.wait_for(nats.connect(nats_url, connect_timeout=connect_timeout_s, allow_reconnect=False,
                                             max_reconnect_attempts=1, reconnect_time_wait=0,
                                             error_cb=_quiet, name=name),
                                2 * connect_timeout_s)
    try:
        return await fetch_with(nc.jetstream(), directory)
    finally:
        await nc.close()


async def fetch_with(js, directory: Path) -> tuple[Path, bool]:
    """``fetch`` over a JetStream context the caller has (the writer's)."""
    try:
        store = await js.object_store(searchsnapshot.BUCKET.name)
        info = await store.get_info(searchsnapshot.OBJECT)
    except (BucketNotFoundError, ObjectNotFoundError, NotFoundError) as exc:
        raise NoSnapshot(type(exc).__name__) from None
    digest = object_digest(info.digest)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{digest}{SUFFIX}"
    if _have(path, info.size):
        return path, False
    async with _node_lock(directory) as waited:
        if _have(path, info.size):
            return path, waited  # (fetched meanwhile by the one we waited for)
        part = directory / f".{digest}.{os.getpid()}.part"
        try:
            with open(part, "wb") as f:
                await _get_into(js, info, f)
                # (off the event loop: a serving replica's refresh fetches too, and the fsync of
                # ~150 MB took 57-59 ms on an idle disk, longer beside a write)
                await asyncio.to_thread(_sync, f)
            os.replace(part, path)
        finally:
            part.unlink(missing_ok=True)
        await asyncio.to_thread(remove_others, directory, path)
    return path, True


def _sync(f) -> None:
    f.flush()
    os.fsync(f.fileno())


def remove_others(directory: Path, path: Path) -> None:
    """Every revision's file in ``directory`` but ``path`` (a process still mapping one keeps its pages)."""
    for old in directory.glob(f"*{SUFFIX}"):
        if old != path:
            old.unlink(missing_ok=True)


def object_digest(digest: str) -> str:
    """The object store's digest of an object (``SHA-256=<base64>``) as hex: the file's name here."""
    return base64.urlsafe_b64decode(digest.split("=", 1)[1] + "==").hex()


def _have(path: Path, size: int) -> bool:
    return path.exists() and path.stat().st_size == size


@contextlib.asynccontextmanager
async def _node_lock(directory: Path):
    """This node's fetch lock (flock: let go when its holder exits, however it exits); whether
    another held it first."""
    fd = os.open(directory / ".fetch.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = True
                await asyncio.sleep(0.02)
        yield waited
    finally:
        os.close(fd)


def _write_hashed(f, h, chunks: list[bytes]) -> None:
    for data in chunks:
        f.write(data)
        h.update(data)


async def _get_into(js, info, f) -> None:
    """The object's chunks written to ``f`` in order, its SHA-256 checked against the object's.

    Not nats-py's ``ObjectStore.get``: its ordered push consumer delivers at ~55 MB/s on loopback
    whatever the chunk size (the server's flow control: 145 MiB in 2.6-3.0 s, 2026-12-05), where a
    pull consumer fetching BATCH chunks a request takes 1.4 s for the same bytes (and
    ``get`` without ``writeinto`` appends every chunk to one bytes object: quadratic)."""
    bucket = searchsnapshot.BUCKET.name
    sub = await js.pull_subscribe(
        f"$O.{bucket}.C.{info.nuid}", durable=None, stream=f"OBJ_{bucket}",
        config=js_api.ConsumerConfig(ack_policy=js_api.AckPolicy.NONE, deliver_policy=js_api.DeliverPolicy.ALL,
                                     mem_storage=True, inactive_threshold=30.0))
    try:
        h, got, size = hashlib.sha256(), 0, 0
        while got < info.chunks:
            chunks = [msg.data for msg in await sub.fetch(min(BATCH, info.chunks - got), timeout=5)]
            # (hashed and written in a thread, both letting the GIL go: ~8 MiB a batch kept the
            # event loop of a serving replica's refresh from its requests for ~8 ms each)
            await asyncio.to_thread(_write_hashed, f, h, chunks)
            got += len(chunks)
            size += sum(map(len, chunks))
    finally:
        try:
            await sub.unsubscribe()
        except Exception:  # (the ephemeral consumer goes by itself after inactive_threshold)
            pass
    want = base64.urlsafe_b64decode(info.digest.split("=", 1)[1] + "==")
    if size != info.size or h.digest() != want:
        raise OSError("snapshot object: size or SHA-256 differs from its metadata")
