"""The search snapshot's writer (``python -m indexium_ops search-snapshot``): one process loads
the search index from PostgreSQL as a replica used to, learns the lexicon a replica prewarms,
writes the snapshot file (``indexium_db.snapshot``) and puts it into JetStream's object store
(``indexium_contracts.searchsnapshot``), where every API replica fetches it at start.

One writer, on a schedule: a Kubernetes CronJob (``deploy/``, every 10 minutes, never two at once)
or ``--every SECONDS`` as a long-running process. Not a replica: its load (~20 s and ~500 MB at
100,000 mods) stays off every request path, and a replica's memory stays the snapshot's.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from indexium_contracts import searchsnapshot, versions
from indexium_db import snapshot
from indexium_db.queries import indexed
from indexium_db.searchindex import Lexicon


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
