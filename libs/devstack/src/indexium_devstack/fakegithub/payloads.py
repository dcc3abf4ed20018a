"""URLs of ``FakeGitHub``'s assets and the JSON it renders: REST shapes and webhook payloads
as GitHub sends them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .models import Asset, Installation, Release, Repo, User
from .render import (
    download_url,
    installation_json,
    installation_ref,
    release_json,
    repo_json,
    repo_short_json,
    user_json,
)


class Payloads:
    """Mixin of ``FakeGitHub``; uses its ``urls``, ``api_url``, ``cdn_url``, ``signer``,
    ``state``, ``app`` and ``_as_repo``."""

    def download_url(self, asset: Asset) -> str:
        """The asset's ``browser_download_url`` on the github host."""
        return download_url(asset, self.urls)

    def asset_api_url(self, asset: Asset) -> str:
        return f"{self.api_url}/repos/{asset.repo.full_name}/releases/assets/{asset.id}"

    def signed_cdn_url(self, asset: Asset, ttl: float | None = None) -> str:
        """A fresh signed CDN URL for the asset (what the redirect's Location holds)."""
        return self.signer.sign(self.cdn_url, asset, self.now(), ttl)

    @property
    def url_ttl(self) -> float:
        return self.signer.ttl

    @url_ttl.setter
    def url_ttl(self, seconds: float) -> None:
        self.signer.ttl = seconds

    def release_json(self, release: Release) -> dict:
        return release_json(release, self.urls)

    def repo_json(self, repo: Repo | str) -> dict:
        return repo_json(self._as_repo(repo), self.urls)

    def release_payload(
        self,
        release: Release,
        action: str = "published",
        *,
        installation_id: int | None | Any = ...,
        sender: User | str | None = None,
    ) -> dict:
        """A ``release`` webhook payload as GitHub sends it. ``installation_id``: default =
        the installation covering the repo (omitted if none); ``None`` omits it."""
        if isinstance(sender, str):
            sender = self.state.user(sender)
        payload = {
            "action": action,
            "release": release_json(release, self.urls),
            "repository": repo_json(release.repo, self.urls),
            "sender": user_json(sender or release.author, self.urls),
        }
        if installation_id is ...:
            inst = self.state.installation_for_repo(release.repo)
            installation_id = inst.id if inst else None
        if installation_id is not None:
            payload["installation"] = installation_ref(installation_id)
        return payload

    def installation_payload(
        self, installation: Installation, action: str = "created", *, sender: User | str | None = None
    ) -> dict:
        """An ``installation`` webhook payload (created, deleted, suspend, ...)."""
        sender = self.state.user(sender) if isinstance(sender, str) else sender
        return {
            "action": action,
            "installation": installation_json(installation, self.app.app_id, self.urls),
            "repositories": [repo_short_json(r) for r in installation.repos],
            "sender": user_json(sender or installation.account, self.urls),
        }

    def installation_repositories_payload(
        self,
        installation: Installation,
        added: Iterable[Repo | str] = (),
        removed: Iterable[Repo | str] = (),
        *,
        sender: User | str | None = None,
    ) -> dict:
        """An ``installation_repositories`` payload; action is ``added`` unless only removals."""
        added = [self._as_repo(r) for r in added]
        removed = [self._as_repo(r) for r in removed]
        sender = self.state.user(sender) if isinstance(sender, str) else sender
        who = user_json(sender or installation.account, self.urls)
        return {
            "action": "added" if added or not removed else "removed",
            "installation": installation_json(installation, self.app.app_id, self.urls),
            "repository_selection": installation.repository_selection,
            "repositories_added": [repo_short_json(r) for r in added],
            "repositories_removed": [repo_short_json(r) for r in removed],
            "requester": who,
            "sender": who,
        }
