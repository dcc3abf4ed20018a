"""The search snapshot on this node: the latest revision in JetStream's object store
(``indexium_contracts.searchsnapshot``) as a node-local file, fetched only when this node has no
copy of that revision (named by the object's digest: every replica on the node maps the same
file, whose pages the kernel shares). The object store checks the object's SHA-256 as it is
read; the file is written beside its final name and renamed, so no replica maps half a file.
Older revisions' files are removed (a replica still mapping one keeps its pages until it lets go).
"""

from __future__ import annotations

import asyncio
import base64
import os
from pathlib import Path

import nats
from nats.js.errors import BucketNotFoundError, NotFoundError, ObjectNotFoundError

from indexium_contracts import searchsnapshot

SUFFIX = ".snap"


class NoSnapshot(Exception):
    """Nothing to start from (no bucket, no object): the reason, for the log line."""


async def _quiet(_exc: Exception) -> None:
    pass


async def fetch(nats_url: str, directory: Path, *, connect_timeout_s: float = 2.0) -> tuple[Path, bool]:
    """The latest snapshot as a file on this node, and whether it was fetched now (False: reused)."""
    # One try per server, no wait between: with max_reconnect_attempts=0 nats-py retries a refused
    # server in a busy loop until the bound below (every API start without NATS took 4 s of CPU).
    # Its errors are this function's to raise, not nats-py's to log. Still bounded as a whole.
    nc = await asyncio.wait_for(nats.connect(nats_url, connect_timeout=connect_timeout_s, allow_reconnect=False,
                                             max_reconnect_attempts=1, reconnect_time_wait=0,
                                             error_cb=_quiet, name="indexium-api-snapshot"),
                                2 * connect_timeout_s)
    try:
        try:
            store = await nc.jetstream().object_store(searchsnapshot.BUCKET.name)
            info = await store.get_info(searchsnapshot.OBJECT)
        except (BucketNotFoundError, ObjectNotFoundError, NotFoundError) as exc:
            raise NoSnapshot(type(exc).__name__) from None
        digest = base64.urlsafe_b64decode(info.digest.split("=", 1)[1] + "==").hex()
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{digest}{SUFFIX}"
        if path.exists() and path.stat().st_size == info.size:
            return path, False
        part = directory / f".{digest}.{os.getpid()}.part"
        try:
            with open(part, "wb") as f:
                # writeinto: chunk by chunk to the file (without it nats-py appends every chunk to
                # one bytes object: quadratic, 47 s for 109 MiB) and the digest checked at the end.
                await store.get(searchsnapshot.OBJECT, writeinto=f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(part, path)
        finally:
            part.unlink(missing_ok=True)
        for old in directory.glob(f"*{SUFFIX}"):
            if old != path:
                old.unlink(missing_ok=True)
        return path, True
    finally:
        await nc.close()
