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


def _child() -> None:
    import asyncio

    from indexium_platform.snapshotfetch import fetch

    url = os.environ.get("NATS_URL", "nats://127.0.0.1:4222")
    target = directory(os.environ.get("INDEXIUM_API_SEARCH_SNAPSHOT_DIR", ""))
    try:
        asyncio.run(asyncio.wait_for(fetch(url, target), PREFETCH_BOUND_S))
    except BaseException:  # (the API's own fetch tries again and says why)
        sys.exit(1)


if __name__ == "__main__":
    _child()
