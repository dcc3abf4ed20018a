"""The parts of GitHub's webhook payloads we read, as lenient msgspec Structs.

GitHub adds fields all the time, so unknown fields are ignored (never
``forbid_unknown_fields`` here). Fields GitHub may omit or null have defaults.
Every example in ``shared/github-payloads`` decodes with these types (tested).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import msgspec

from indexium_content import urls
from indexium_jar import formats


class Account(msgspec.Struct, frozen=True):
    id: int
    login: str
    type: str | None = None


class Installation(msgspec.Struct, frozen=True):
    id: int
    account: Account | None = None


def repository_page(url: str | None, full_name: str) -> str | None:
    """``url`` without a trailing slash if it is the web page of repository ``full_name``: a
    URL the one URL policy keeps (``indexium_content.urls``: http(s), a host, no credentials,
    nothing a browser would read as another URL), at most 512 characters, whose path is
    ``/<full_name>`` with no query or fragment."""
    url = urls.allowed(url)
    if url is None or len(url) > 512:
        return None
    parts = urlsplit(url.rstrip("/"))
    if parts.query or parts.fragment or parts.path.lower() != "/" + full_name.lower():
        return None
    return url.rstrip("/")


class Repository(msgspec.Struct, frozen=True):
    id: int
    name: str
    full_name: str
    owner: Account
    private: bool = False
    default_branch: str | None = None
    description: str | None = None
    html_url: str | None = None
    homepage: str | None = None
    topics: list[str] = []
    archived: bool = False
    fork: bool = False  # GitHub's flag: a fork of another repository (shown on the mod page and in /api/v1)

    @property
    def page_url(self) -> str | None:
        """``html_url`` when it is this repository's page (http or https, no credentials, the
        path ``/<full_name>``, at most 512 characters), else None: what ``mods.repo_url``
        stores, and where the site and /v2 link the repository and its issues."""
        return repository_page(self.html_url, self.full_name)


class InstallationRepository(msgspec.Struct, frozen=True):
    """Installation events list repositories with only these few fields."""

    id: int
    name: str
    full_name: str
    private: bool = False


class ReleaseAsset(msgspec.Struct, frozen=True):
    id: int
    name: str
    browser_download_url: str
    size: int = 0
    content_type: str | None = None
    state: str | None = None
    label: str | None = None
    download_count: int = 0
    url: str | None = None
    digest: str | None = None  # "sha256:<hex>", on assets uploaded since mid-2025
    created_at: str | None = None
    updated_at: str | None = None


class Release(msgspec.Struct, frozen=True):
    id: int
    tag_name: str
    draft: bool = False
    prerelease: bool = False
    name: str | None = None
    body: str | None = None
    html_url: str | None = None
    created_at: str | None = None
    published_at: str | None = None
    author: Account | None = None
    assets: list[ReleaseAsset] = []
    # GitHub's immutable releases: assets are final at publish (none added or replaced later).
    immutable: bool = False


class ReleaseWebhook(msgspec.Struct, frozen=True):
    action: str
    release: Release
    repository: Repository
    sender: Account | None = None
    installation: Installation | None = None


class InstallationWebhook(msgspec.Struct, frozen=True):
    action: str
    installation: Installation
    repositories: list[InstallationRepository] = []
    sender: Account | None = None


class InstallationRepositoriesWebhook(msgspec.Struct, frozen=True):
    action: str
    installation: Installation
    repositories_added: list[InstallationRepository] = []
    repositories_removed: list[InstallationRepository] = []
    repository_selection: str | None = None
    sender: Account | None = None


class PushCommit(msgspec.Struct, frozen=True):
    id: str
    added: list[str] = []
    removed: list[str] = []
    modified: list[str] = []


class PushWebhook(msgspec.Struct, frozen=True):
    ref: str
    repository: Repository
    before: str | None = None
    after: str | None = None
    commits: list[PushCommit] = []
    installation: Installation | None = None
    sender: Account | None = None


# A loader manifest in any module's resources (a build may name its modules anything): the
# source-tree files the format registry's jar formats name; or, at the repository's root, a
# file (or any file under a folder, e.g. shaders/) the pack formats name.
_PACK_FILES = [p for p in formats.SOURCE_PACK_PATHS if not p.endswith("/")]
_PACK_FOLDERS = [p for p in formats.SOURCE_PACK_PATHS if p.endswith("/")]
_MANIFEST_PATH = re.compile(
    r"(^|/)src/main/resources/(" + "|".join(re.escape(p) for p in formats.SOURCE_MANIFESTS) + r")$"
    + "".join("|^" + re.escape(p) + "$" for p in _PACK_FILES)
    + "".join("|^" + re.escape(p) + r"[^/]" for p in _PACK_FOLDERS)
)


def is_manifest_path(path: str) -> bool:
    return bool(_MANIFEST_PATH.search(path))


def manifest_paths_only(push: PushWebhook) -> PushWebhook:
    """The push with each commit's added/removed/modified lists cut to manifest paths (a pack's too):
    all a push is read for (a card refresh). A push listing thousands of files would
    otherwise outgrow a queue message and be refused on every redelivery."""
    def keep(paths: list[str]) -> list[str]:
        return [p for p in paths if is_manifest_path(p)]

    commits = [PushCommit(id=c.id, added=keep(c.added), removed=keep(c.removed), modified=keep(c.modified))
               for c in push.commits]
    return msgspec.structs.replace(push, commits=commits)


class RepositoryWebhook(msgspec.Struct, frozen=True):
    action: str
    repository: Repository
    installation: Installation | None = None
    sender: Account | None = None


class PingWebhook(msgspec.Struct, frozen=True):
    zen: str | None = None
    hook_id: int | None = None


# X-GitHub-Event value -> payload type. Events not listed are accepted and ignored.
WEBHOOK_TYPES: dict[str, type[msgspec.Struct]] = {
    "ping": PingWebhook,
    "release": ReleaseWebhook,
    "installation": InstallationWebhook,
    "installation_repositories": InstallationRepositoriesWebhook,
    "push": PushWebhook,
    "repository": RepositoryWebhook,
}

_DECODERS = {event: msgspec.json.Decoder(t) for event, t in WEBHOOK_TYPES.items()}


def decode_webhook(event: str, body: bytes) -> msgspec.Struct | None:
    """Decode a webhook body for a known event; None for events we do not take.

    Raises ``msgspec.DecodeError`` / ``msgspec.ValidationError`` on malformed bodies.
    """
    decoder = _DECODERS.get(event)
    return None if decoder is None else decoder.decode(body)
