"""The search index's snapshot in JetStream's object store (docs/api.md, "Replica start: the
snapshot"; the file's format: ``indexium_search.snapshot``).

One writer (``python -m indexium_ops search-snapshot``, on a schedule) puts the file under
``OBJECT`` in ``BUCKET``; an API replica gets it into a node-local file when its node has no copy of
that revision, maps it, and re-reads the mods changed since the position the file records. The
store keeps the latest revision only (a put replaces the object; its old chunks are purged).
"""

from __future__ import annotations

from .streams import ObjectStoreSpec

BUCKET = ObjectStoreSpec(
    name="search-snapshot",
    description="The search index as a file the API replicas map (indexium_search.snapshot); one object, the latest",
    # A few revisions in flight at most (~110 MiB at 100,000 mods, ~1.1 GiB at 1,000,000): bounded
    # so a runaway writer cannot fill the server's disk.
    max_bytes=8 * 1024**3,
)
OBJECT = "search-index"
