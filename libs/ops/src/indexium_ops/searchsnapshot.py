"""The search snapshot's writer (``python -m indexium_ops search-snapshot``): one process loads
the search index from PostgreSQL as a replica used to, learns the lexicon a replica prewarms,
writes the snapshot file (``indexium_search.snapshot``) and puts it into JetStream's object store
(``indexium_contracts.searchsnapshot``), where every API replica fetches it at start.

One writer, on a schedule: a Kubernetes CronJob (``deploy/``, every 10 minutes, never two at once)
or ``--every SECONDS`` as a long-running process (``schedule``: compose, ``make run``), which can
also write after a batch of catalogue changes (``--after-changes N``). Not a replica: its load
(~20-50 s and ~500 MB at 100,000 mods) stays off every request path, and a replica's memory stays
the snapshot's. The long-running scheduler only counts events and waits: each write is a process
of its own (``python -m indexium_ops search-snapshot``), so the ~500 MB a write takes go back to
the system when it ends instead of staying in a scheduler that is idle most of the time.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from indexium_contracts import searchsnapshot, versions
from indexium_platform import logs, natsutil
from indexium_search import indexed, snapshot
from indexium_search.searchindex import Lexicon

log = logs.get(__name__)


async def write_once(conn, js, directory: Path | None = None) -> dict:
    """Load, write, put; what was put (mods, bytes, digest, position, seconds)."""
    started = time.monotonic()
    try:
        stream_seq = (await js.stream_info(versions.STREAM.name)).state.last_seq
    except Exception:  # (the position's stream sequence is for operators: never a reason not to write)
        stream_seq = 0
    index = await indexed.load(conn)
    lexicon = Lexicon()
    await indexed.prewarm(conn, lexicon, index)
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        path = Path(tmp) / "search-index.snap"
        digest = await asyncio.to_thread(snapshot.write, index, lexicon, path, updated_at=index.position,
                                         stream_seq=stream_seq)
        store = await js.object_store(searchsnapshot.BUCKET.name)
        with open(path, "rb") as f:
            info = await store.put(searchsnapshot.OBJECT, f)
    return {"mods": len(index), "bytes": info.size, "digest": digest, "updated_at": index.position,
            "stream_seq": stream_seq, "seconds": round(time.monotonic() - started, 2)}


async def schedule(nats_url: str, *, every_s: float, after_changes: int = 0, min_interval_s: float = 60.0,
                   write_first: bool = True) -> None:
    """Write now (``write_first``; else wait first, as after a write just made), then again every ``every_s``, or sooner once ``after_changes`` catalogue events
    (the VERSIONS stream's subjects, as the API's invalidation hears them) came since the last write
    began and ``min_interval_s`` passed since then. Each write a child process. Runs until cancelled."""
    changes = 0
    nc = None
    if after_changes:
        nc = await natsutil.connect(nats_url, name="indexium-search-snapshot-schedule")

        async def heard(_msg) -> None:
            nonlocal changes
            changes += 1

        await nc.subscribe(f"{versions.SUBJECT_PREFIX}.>", cb=heard)
    # SIGTERM (a stop) ends the scheduler and the write under way with it.
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    child = None
    try:
        write = write_first
        while True:
            began = time.monotonic()
            changes = 0
            if write:
                child = await asyncio.create_subprocess_exec(sys.executable, "-m", "indexium_ops", "search-snapshot",
                                                             env=os.environ.copy())
                code = await child.wait()
                if code != 0:
                    log.warning("search_snapshot_write_failed", exit_code=code)
            write = True
            while True:
                waited = time.monotonic() - began
                if waited >= every_s:
                    break
                if after_changes and changes >= after_changes and waited >= min_interval_s:
                    log.info("search_snapshot_after_changes", events=changes)
                    break
                await asyncio.sleep(1.0)
    except asyncio.CancelledError:
        pass
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if child is not None and child.returncode is None:
            child.kill()
            await child.wait()
        if nc is not None:
            await nc.drain()
