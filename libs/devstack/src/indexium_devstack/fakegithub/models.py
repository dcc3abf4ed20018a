"""State of the fake GitHub: users, repositories, releases, assets, installations, deliveries.

Plain mutable dataclasses; the server renders them to GitHub-shaped JSON in ``render``.
Identifiers are allocated from per-kind counters so that a fresh server is deterministic.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import mimetypes
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from multidict import CIMultiDict


def iso(ts: float | None) -> str | None:
    """Epoch seconds → GitHub's ``2019-05-15T15:20:53Z``."""
    if ts is None:
        return None
    return datetime.fromtimestamp(int(ts), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, prefix: str, ident: int) -> str:
    """Legacy global node id, as in GitHub's example payloads (``MDEwOlJlcG9zaXRvcnk...``)."""
    return base64.b64encode(f"{prefix}:{kind}{ident}".encode()).decode()


_CONTENT_TYPES = {
    ".jar": "application/java-archive",
    ".zip": "application/zip",
    ".json": "application/json",
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".toml": "application/toml",
    ".png": "image/png",
    ".gz": "application/gzip",
    ".sha256": "text/plain",
    ".sha1": "text/plain",
}


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._+\-@~]")


def github_asset_name(name: str) -> str:
    """Asset names as GitHub stores them: special characters (spaces, brackets, ...) become
    ``.``, and leading/trailing dots are dropped (``"My Mod (1).jar"`` → ``"My.Mod.1.jar"``)."""
    out = re.sub(r"\.{2,}", ".", _UNSAFE_NAME.sub(".", name)).strip(".")
    return out or "default"


def guess_content_type(name: str) -> str:
    lower = name.lower()
    for ext, ctype in _CONTENT_TYPES.items():
        if lower.endswith(ext):
            return ctype
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # or "Organization", "Bot"
    site_admin: bool = False

    @property
    def node_id(self) -> str:
        if self.type == "Organization":
            return node_id("Organization", "012", self.id)
        return node_id("User", "04", self.id)


@dataclass
class Asset:
    id: int
    name: str
    content: bytes
    content_type: str
    release: "Release"
    label: str | None = None
    state: str = "uploaded"
    download_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    uploader: User | None = None
    digest_override: Any = ...  # ``...`` = computed from content, None = null, str = verbatim
    blob_key: str = ""

    @property
    def size(self) -> int:
        return len(self.content)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def digest(self) -> str | None:
        if self.digest_override is ...:
            return f"sha256:{self.sha256}"
        return self.digest_override

    @property
    def etag(self) -> str:
        # Azure-blob style strong ETag; changes when content changes.
        return '"0x8DC' + self.sha256[:12].upper() + '"'

    @property
    def node_id(self) -> str:
        return node_id("ReleaseAsset", "012", self.id)

    @property
    def repo(self) -> "Repo":
        return self.release.repo


@dataclass
class Release:
    id: int
    repo: "Repo"
    tag_name: str
    name: str | None
    body: str | None
    draft: bool
    prerelease: bool
    created_at: float
    published_at: float | None
    target_commitish: str
    author: User
    assets: list[Asset] = field(default_factory=list)
    make_latest: bool = True
    # GitHub's immutable releases: assets are attached while a draft and final once published.
    immutable: bool = False

    @property
    def node_id(self) -> str:
        return node_id("Release", "07", self.id)

    def asset(self, name: str) -> Asset:
        for a in self.assets:
            if a.name == name:
                return a
        raise KeyError(name)


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    description: str | None = None
    topics: list[str] = field(default_factory=list)
    private: bool = False
    default_branch: str = "main"
    homepage: str | None = None
    language: str | None = "Java"
    license: dict | None = None
    archived: bool = False
    fork: bool = False
    created_at: float = 0.0
    updated_at: float = 0.0
    pushed_at: float = 0.0
    stargazers_count: int = 0
    releases: list[Release] = field(default_factory=list)
    # files[ref][path] = bytes; ref None = present at every ref unless overridden.
    files: dict[str | None, dict[str, bytes]] = field(default_factory=dict)
    # The git trees API answers "truncated": true (as GitHub does past 100,000 entries / 7 MB).
    tree_truncated: bool = False

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def node_id(self) -> str:
        return node_id("Repository", "010", self.id)

    def release(self, tag: str) -> Release:
        for r in self.releases:
            if r.tag_name == tag:
                return r
        raise KeyError(tag)


@dataclass
class Installation:
    id: int
    account: User
    repos: list[Repo] = field(default_factory=list)
    repository_selection: str = "selected"
    permissions: dict[str, str] = field(
        default_factory=lambda: {"contents": "read", "metadata": "read"}
    )
    events: list[str] = field(default_factory=lambda: ["release", "repository"])
    created_at: float = 0.0
    suspended_at: float | None = None

    @property
    def node_id(self) -> str:
        return node_id("IntegrationInstallation", "023", self.id)


@dataclass
class Token:
    token: str
    installation_id: int
    expires_at: float
    repository_ids: list[int] | None = None


@dataclass
class Delivery:
    """One attempt to deliver a webhook (an original delivery or a redelivery)."""

    id: int
    guid: str
    event: str
    action: str | None
    body: bytes
    status_code: int
    delivered_at: float
    duration: float = 0.0
    redelivery: bool = False
    installation_id: int | None = None
    repository_id: int | None = None
    url: str | None = None
    request_headers: dict[str, str] = field(default_factory=dict)
    response_headers: dict[str, str] = field(default_factory=dict)
    response_body: str = ""

    @property
    def status(self) -> str:
        if self.status_code == 0:
            return "failed to connect"
        if 200 <= self.status_code < 300:
            return "OK"
        return f"Invalid HTTP Response: {self.status_code}"


@dataclass
class CdnRequest:
    """A request seen by the CDN host (recorded with its headers, case-insensitive)."""

    method: str
    path_qs: str
    headers: CIMultiDict
    asset_id: int | None
    status: int = 0
    bytes_sent: int = 0


@dataclass(frozen=True)
class AssetStats:
    """Snapshot of what the CDN (and the download redirector) did for one asset."""

    requests: int = 0  # CDN hits (any method/status)
    bytes_sent: int = 0  # body bytes written by the CDN
    ranges: tuple[str, ...] = ()  # Range header values, in order (absent ones not listed)
    redirects: int = 0  # 302s from browser_download_url / asset API to the CDN
    statuses: tuple[int, ...] = ()  # CDN response statuses, in order
    headers: tuple[CIMultiDict, ...] = ()  # CDN request headers, in order


@dataclass
class _MutableStats:
    requests: int = 0
    bytes_sent: int = 0
    ranges: list[str] = field(default_factory=list)
    redirects: int = 0
    statuses: list[int] = field(default_factory=list)
    headers: list[CIMultiDict] = field(default_factory=list)

    def snapshot(self) -> AssetStats:
        return AssetStats(
            self.requests,
            self.bytes_sent,
            tuple(self.ranges),
            self.redirects,
            tuple(self.statuses),
            tuple(self.headers),
        )


class State:
    """Everything the fake knows. No I/O; the server and builders mutate it."""

    def __init__(self, clock=time.time) -> None:
        self.clock = clock
        self.users: dict[str, User] = {}
        self.repos: dict[str, Repo] = {}  # "owner/name" (lower-case) -> Repo
        self.installations: dict[int, Installation] = {}
        self.tokens: dict[str, Token] = {}
        self.deliveries: list[Delivery] = []
        self.stats: dict[int, _MutableStats] = {}
        self.cdn_requests: list[CdnRequest] = []
        self._user_ids = itertools.count(21031067)
        self._repo_ids = itertools.count(186853002)
        self._release_ids = itertools.count(17372790)
        self._asset_ids = itertools.count(16837455)
        self._installation_ids = itertools.count(957387)
        self._delivery_ids = itertools.count(12077215967)
        self.blobs: dict[str, Asset] = {}

    # ---- users / repos ----------------------------------------------------------------
    def user(self, login: str, *, type: str = "User", id: int | None = None) -> User:
        u = self.users.get(login.lower())
        if u is None:
            u = User(login=login, id=id if id is not None else next(self._user_ids), type=type)
            self.users[login.lower()] = u
        return u

    def find_repo(self, owner: str, name: str) -> Repo | None:
        return self.repos.get(f"{owner}/{name}".lower())

    def repo_by_id(self, repo_id: int) -> Repo | None:
        for r in self.repos.values():
            if r.id == repo_id:
                return r
        return None

    def next_repo_id(self) -> int:
        return next(self._repo_ids)

    def next_release_id(self) -> int:
        return next(self._release_ids)

    def next_asset_id(self) -> int:
        return next(self._asset_ids)

    def next_installation_id(self) -> int:
        return next(self._installation_ids)

    def next_delivery_id(self) -> int:
        return next(self._delivery_ids)

    def new_blob_key(self, asset_id: int) -> str:
        return str(uuid.uuid4())  # opaque, like the CDN's blob names

    # ---- lookups ----------------------------------------------------------------------
    def all_assets(self):
        for repo in self.repos.values():
            for rel in repo.releases:
                yield from rel.assets

    def asset_by_id(self, asset_id: int) -> Asset | None:
        for a in self.all_assets():
            if a.id == asset_id:
                return a
        return None

    def release_by_id(self, release_id: int) -> Release | None:
        for repo in self.repos.values():
            for rel in repo.releases:
                if rel.id == release_id:
                    return rel
        return None

    def installation_for_repo(self, repo: Repo) -> Installation | None:
        for inst in self.installations.values():
            if repo in inst.repos:
                return inst
        return None

    def stats_for(self, asset_id: int) -> _MutableStats:
        s = self.stats.get(asset_id)
        if s is None:
            s = self.stats[asset_id] = _MutableStats()
        return s
