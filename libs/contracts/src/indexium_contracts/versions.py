"""Stream VERSIONS: facts about versions after they are committed to PostgreSQL.

Published by the indexer after its transaction commits (publish after commit).
Consumed by the API replicas (cache invalidation; each replica its own ephemeral
consumer) and, later, by the scan stage.
"""

from __future__ import annotations

import msgspec

from .streams import StreamSpec

SUBJECT_PREFIX = "indexium.version"
INDEXED = f"{SUBJECT_PREFIX}.indexed"
HIDDEN = f"{SUBJECT_PREFIX}.hidden"

STREAM = StreamSpec(
    name="VERSIONS",
    subjects=(f"{SUBJECT_PREFIX}.>",),
    description="Versions indexed or hidden, published after commit",
    max_age_s=7 * 24 * 3600,
)


class FileRef(msgspec.Struct, frozen=True):
    file_id: str
    filename: str
    url: str
    size: int
    digest: str | None = None  # GitHub's "sha256:<hex>" when the asset had one
    sidecar_url: str | None = None  # a "<name>.sha256" asset of the same release


class _VersionEvent(msgspec.Struct, frozen=True, tag_field="type"):
    mod_id: str
    slug: str
    version_id: str
    version_number: str


class VersionIndexed(_VersionEvent, frozen=True, tag="version_indexed.v1"):
    visible: bool
    files: list[FileRef] = []


class VersionHidden(_VersionEvent, frozen=True, tag="version_hidden.v1"):
    reason: str


VersionEvent = VersionIndexed | VersionHidden

encoder = msgspec.msgpack.Encoder()
decoder = msgspec.msgpack.Decoder(VersionEvent)
