"""The search snapshot fetched beside the API's own start (issue 38, docs/api.md "Replica start:
the snapshot").

A replica on a node without the snapshot's file spends ~1.4 s fetching it (145 MiB at 100,000
mods) and ~1 s of CPU importing its own code before it can even ask. ``start`` runs the fetch in
a child process (``python -m indexium_api.prefetch``) as the first thing the API process does,
so the two overlap; when the API's start-up load asks for the snapshot (``indexium_platform.snapshotfetch.fetch``) it
waits on the node's fetch lock for the child's fetch instead of starting another, then maps the
file. Best effort: a child that fails (NATS away, no snapshot) says nothing and the API's own
fetch does what it always did (and logs why). Nothing here imports more than the standard
library: it runs before the API's imports.

A replica that serves has a newer revision fetched by the same child (``in_child``, at a lower
CPU priority) rather than in its own event loop (app.py's fetcher).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

PREFETCH_BOUND_S = 60.0  # the child gives up after this (the API's own fetch is bounded by its start-up load)
_OFF = {"0", "false", "no", "off", ""}


def directory(configured: str = "") -> Path:
    """INDEXIUM_API_SEARCH_SNAPSHOT_DIR, or <temp dir>/indexium-search-snapshot (settings.py)."""
    return Path(configured or Path(tempfile.gettempdir()) / "indexium-search-snapshot")


def _on(name: str) -> bool:
    return os.environ.get(name, "true").strip().lower() not in _OFF


def start() -> subprocess.Popen | None:
    """The child fetching the snapshot, when this replica will start from one (else None)."""
    if not (_on("INDEXIUM_API_SEARCH_INDEX") and _on("INDEXIUM_API_SEARCH_SNAPSHOT")):
        return None
    try:
        return subprocess.Popen([sys.executable, "-m", "indexium_api.prefetch"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)
    except OSError:
        return None


class FetchFailed(Exception):
    """A refresh's fetch child did not leave the latest revision on the node (the index is kept)."""


# A serving replica's refresh: the fetch's niceness (os.nice). Its ~1,200 chunks at 100,000 mods
# are ~1-2 s of Python in the process that fetches them: the replica's event loop's, were it its own
# (a soak's 10-s window with such a refresh and a write reached an API p95 of 1.4 s), the requests' first otherwise.
REFRESH_NICE = 10


async def in_child(nats_url: str, target: Path, *, nice: int = REFRESH_NICE, bound_s: float = PREFETCH_BOUND_S) -> bool:
    """The latest snapshot fetched into ``target`` by a child process (this module), at ``nice``,
    waited for without blocking the caller's event loop; whether it ended well. The child is killed
    past ``bound_s`` (or when the caller is cancelled). Its settings come in its environment, not
    its command line (a NATS URL may hold credentials)."""
    import asyncio

    env = {**os.environ, "NATS_URL": nats_url, "INDEXIUM_API_SEARCH_SNAPSHOT_DIR": str(target)}
    child = await asyncio.create_subprocess_exec(sys.executable, "-m", "indexium_api.prefetch", "--nice", str(nice),
                                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                 stderr=subprocess.DEVNULL, env=env)
    try:
        return await asyncio.wait_for(child.wait(), bound_s) == 0
    except asyncio.TimeoutError:
        return False
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()


def _child() -> None:
    import asyncio

    from indexium_platform.snapshotfetch import fetch

    if len(sys.argv) == 3 and sys.argv[1] == "--nice":
        os.nice(int(sys.argv[2]))
    url = os.environ.get("NATS_URL", "nats://127.0.0.1:4222")
    target = directory(os.environ.get("INDEXIUM_API_SEARCH_SNAPSHOT_DIR", ""))
    try:
        asyncio.run(asyncio.wait_for(fetch(url, target), PREFETCH_BOUND_S))
    except BaseException:  # (the API's own fetch tries again and says why)
        sys.exit(1)


if __name__ == "__main__":
    _child()
