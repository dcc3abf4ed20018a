"""Stream VERSIONS: facts about versions after they are committed to PostgreSQL.

Published by the indexer after its transaction commits (publish after commit).
Consumed by the API replicas (cache invalidation: each replica holds a core NATS
subscription on ``indexium.version.>``) and by the scan stage (durable ``scan``, "version indexed" only), which
publishes ``version.scanned`` after its own commit; operators' quarantine decisions
publish ``version.reviewed``; the GitHub role publishes ``version.mod_changed`` when an
installation or repository change hides, shows or edits a whole mod; the ownership rules
publish ``version.status_changed`` for a version of another project (or another version of
the same one) whose status a job or decision changed (a re-upload found, a mod id taken over
or settled). The notify role (durable ``notify``: indexed, scanned, reviewed, status_changed) matches every
version that became public against the webhook subscriptions.
"""

from __future__ import annotations

import msgspec

from .streams import ConsumerSpec, StreamSpec

SUBJECT_PREFIX = "indexium.version"
INDEXED = f"{SUBJECT_PREFIX}.indexed"
HIDDEN = f"{SUBJECT_PREFIX}.hidden"
SCANNED = f"{SUBJECT_PREFIX}.scanned"
REVIEWED = f"{SUBJECT_PREFIX}.reviewed"
MOD_CHANGED = f"{SUBJECT_PREFIX}.mod_changed"
STATUS_CHANGED = f"{SUBJECT_PREFIX}.status_changed"

STREAM = StreamSpec(
    name="VERSIONS",
    subjects=(f"{SUBJECT_PREFIX}.>",),
    description="Versions indexed or hidden, published after commit",
    max_age_s=7 * 24 * 3600,
)

SCAN = ConsumerSpec(
    stream=STREAM.name,
    durable="scan",
    filter_subjects=(INDEXED,),
    description="Scan stage: stream every jar once, hash it, check digests, scan its bytecode",
    ack_wait_s=120.0,  # heartbeated every 40 s while a file streams
    max_deliver=-1,  # never dropped by JetStream: attempts are counted in job_attempts (jobs.py)
    max_ack_pending=64,
)

NOTIFY = ConsumerSpec(
    stream=STREAM.name,
    durable="notify",
    filter_subjects=(INDEXED, SCANNED, REVIEWED, STATUS_CHANGED),
    description="Notify role: match versions that became public against webhook subscriptions",
    ack_wait_s=30.0,  # one short transaction; heartbeated every 10 s all the same
    max_deliver=-1,  # attempts are counted in job_attempts (jobs.py)
    max_ack_pending=64,
)


class FileRef(msgspec.Struct, frozen=True):
    file_id: str
    filename: str
    url: str
    size: int
    digest: str | None = None  # GitHub's "sha256:<hex>" when the asset had one
    sidecar_url: str | None = None  # a "<name>.sha256" asset of the same release
    # Compressed sizes of the jar's data-descriptor entries as the indexer read them from the
    # central directory (indexium_jar.zip.entrysizes format; b"" for none, or too many to send):
    # the scan streams the file without a Range request of its own for them.
    entry_sizes: bytes = b""


class _VersionEvent(msgspec.Struct, frozen=True, tag_field="type"):
    mod_id: str
    slug: str
    version_id: str
    version_number: str


class VersionIndexed(_VersionEvent, frozen=True, tag="version_indexed.v1"):
    visible: bool
    files: list[FileRef] = []
    # False: the release was sent again and nothing served changed, but the scan still has work
    # on the version (it awaits its scan, or a file was never scanned: the job's first run may
    # have committed without publishing). The scan stage acts on it; API replicas drop nothing.
    changed: bool = True


class VersionHidden(_VersionEvent, frozen=True, tag="version_hidden.v1"):
    reason: str


class FileScanned(msgspec.Struct, frozen=True):
    file_id: str
    result: str  # clean | suspicious | failed
    sha1: str | None = None
    sha256: str | None = None
    sha512: str | None = None
    findings: int = 0
    reason: str | None = None  # why a scan failed


class VersionScanned(_VersionEvent, frozen=True, tag="version_scanned.v1"):
    """The scan stage committed results; ``visible`` says whether public endpoints show it now."""

    status: str  # pending_scan | public | quarantined | rejected
    visible: bool
    files: list[FileScanned] = []


class VersionReviewed(_VersionEvent, frozen=True, tag="version_reviewed.v1"):
    """An operator approved or rejected a quarantined version."""

    decision: str  # approved | rejected
    by: str
    status: str
    visible: bool


class VersionStatusChanged(_VersionEvent, frozen=True, tag="version_status_changed.v1"):
    """The ownership rules (``indexium_db.queries.ownership``) held or released a version other
    than the one its job was about: another project's copy of bytes that an earlier publisher now
    owns, the versions of a project that lost or won a mod id, those an operator's decision on a
    claim settled. Published after the commit that changed it."""

    status: str  # pending_scan | public | quarantined | rejected
    visible: bool
    reason: str = ""


class ModChanged(msgspec.Struct, frozen=True, tag_field="type", tag="mod_changed.v1"):
    """What public endpoints show of a whole mod changed outside the release indexer: the
    GitHub role applied an installation or repository event (removed, deleted, privatized,
    archived, transferred, suspended, uninstalled, and the way back), or reconciliation
    caught up with one that never arrived. Published after commit with the mod's state then;
    on the ``indexium.version.`` prefix so every API replica's invalidation receives it. Also
    the release indexer's, cause ``ownership.slug_moved``, naming a project's *old* slug after
    it took a mod id's own slug over (``ownership.take_slug``): no row has that slug any more."""

    mod_id: str
    slug: str
    visible: bool  # not hidden (a hidden mod and all its versions are served by no endpoint)
    cause: str  # "<event>.<action>" (``repository.privatized``) or ``reconcile.<what>``
    hidden_reason: str | None = None


VersionEvent = (VersionIndexed | VersionHidden | VersionScanned | VersionReviewed | ModChanged
                | VersionStatusChanged)

encoder = msgspec.msgpack.Encoder()
decoder = msgspec.msgpack.Decoder(VersionEvent)
