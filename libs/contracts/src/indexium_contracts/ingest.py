"""Stream INGEST: webhooks accepted by the ingest service, one message per delivery.

Published by ingest with ``Nats-Msg-Id`` = ``X-GitHub-Delivery`` so a delivery
posted twice inside the duplicate window is stored once. Consumed by the indexer
(``release``); the other subjects are kept for the GitHub App work.
"""

from __future__ import annotations

import msgspec

from . import github
from .streams import BucketSpec, ConsumerSpec, StreamSpec

SUBJECT_PREFIX = "indexium.ingest"
RELEASE = f"{SUBJECT_PREFIX}.release"
INSTALLATION = f"{SUBJECT_PREFIX}.installation"
INSTALLATION_REPOSITORIES = f"{SUBJECT_PREFIX}.installation_repositories"
PUSH = f"{SUBJECT_PREFIX}.push"
REPOSITORY = f"{SUBJECT_PREFIX}.repository"
# Not a webhook: a signed-in author asking (on the web site) for their repository to be read again.
CATCH_UP = f"{SUBJECT_PREFIX}.catch_up"

STREAM = StreamSpec(
    name="INGEST",
    subjects=(f"{SUBJECT_PREFIX}.>",),
    description="GitHub webhook deliveries accepted by ingest",
    max_age_s=7 * 24 * 3600,  # a week to recover from a long indexer outage
    duplicate_window_s=120.0,
    # Events carry only the typed fields we read, far smaller than GitHub's raw bodies;
    # 1 MiB is nats-server's default max_payload.
    max_msg_size=1024 * 1024,
)

# JetStream's duplicate window is minutes; GitHub redelivers the same X-GitHub-Delivery up to
# 3 days later. Ingest records every delivery it stored here and publishes nothing for a
# delivery already recorded. 4 days = GitHub's 3-day redelivery limit plus a day of margin.
DELIVERIES = BucketSpec(
    name="ingest_deliveries",
    description="X-GitHub-Delivery ids already stored on INGEST (long-window dedupe)",
    ttl_s=4 * 24 * 3600,
)

INDEXER = ConsumerSpec(
    stream=STREAM.name,
    durable="indexer",
    filter_subjects=(RELEASE,),
    description="Indexer: read release jars with Range requests, upsert versions",
    ack_wait_s=30.0,  # a crashed worker's jobs go to another replica after this; heartbeats every 10 s
    max_deliver=-1,  # never dropped by JetStream: attempts are counted in job_attempts (jobs.py)
    max_ack_pending=256,
)


class _Received(msgspec.Struct, frozen=True, tag_field="type"):
    delivery_id: str
    received_at: str  # RFC 3339 UTC, set by ingest when the request arrived


class ReleaseReceived(_Received, frozen=True, tag="release_received.v1"):
    webhook: github.ReleaseWebhook


class InstallationReceived(_Received, frozen=True, tag="installation_received.v1"):
    webhook: github.InstallationWebhook


class InstallationRepositoriesReceived(
    _Received, frozen=True, tag="installation_repositories_received.v1"
):
    webhook: github.InstallationRepositoriesWebhook


class PushReceived(_Received, frozen=True, tag="push_received.v1"):
    webhook: github.PushWebhook


class RepositoryReceived(_Received, frozen=True, tag="repository_received.v1"):
    webhook: github.RepositoryWebhook


class CatchUpRequested(_Received, frozen=True, tag="catch_up_requested.v1"):
    """The web site's "Check again": re-read one repository the author can reach on GitHub.

    ``delivery_id`` is synthetic (``catch-up:<repo id>:<random>``), so the GitHub role's usual
    delivery record and dedupe apply. The role re-evaluates a repository that is not a mod yet
    and queues a release catch-up for one that is."""

    github_repo_id: int
    installation_id: int
    requested_by: str  # the GitHub login, for the log line


IngestEvent = (
    ReleaseReceived
    | InstallationReceived
    | InstallationRepositoriesReceived
    | PushReceived
    | RepositoryReceived
    | CatchUpRequested
)

# X-GitHub-Event -> (subject, event type)
BY_GITHUB_EVENT: dict[str, tuple[str, type[_Received]]] = {
    "release": (RELEASE, ReleaseReceived),
    "installation": (INSTALLATION, InstallationReceived),
    "installation_repositories": (INSTALLATION_REPOSITORIES, InstallationRepositoriesReceived),
    "push": (PUSH, PushReceived),
    "repository": (REPOSITORY, RepositoryReceived),
}

encoder = msgspec.msgpack.Encoder()
decoder = msgspec.msgpack.Decoder(IngestEvent)


def repository_of(event) -> int | None:
    """The GitHub repository id an event is about; None for one about no single repository
    (an installation's)."""
    if isinstance(event, CatchUpRequested):
        return event.github_repo_id
    repository = getattr(getattr(event, "webhook", None), "repository", None)
    return getattr(repository, "id", None)


def about_message(data: bytes) -> tuple[int | None, str | None]:
    """(:func:`repository_of`, the release's tag) of a message's bytes: what its dead letter is
    kept with (``dead_letters.github_repo_id``, ``tag_name``), so the author's dashboard reads
    neither the bytes nor another repository's. (None, None) for bytes that do not decode."""
    try:
        event = decoder.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None, None
    release = getattr(getattr(event, "webhook", None), "release", None)  # a catch-up has no webhook
    return repository_of(event), getattr(release, "tag_name", None)
