"""Repositories, releases, assets and repository files of ``FakeGitHub``: what tests and
the demo build the fake's state with."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .models import Asset, Installation, Release, Repo, User, github_asset_name, guess_content_type

_LICENSES = {
    "MIT": ("mit", "MIT License"),
    "Apache-2.0": ("apache-2.0", "Apache License 2.0"),
    "LGPL-3.0": ("lgpl-3.0", "GNU Lesser General Public License v3.0"),
    "GPL-3.0": ("gpl-3.0", "GNU General Public License v3.0"),
    "MPL-2.0": ("mpl-2.0", "Mozilla Public License 2.0"),
    "CC0-1.0": ("cc0-1.0", "Creative Commons Zero v1.0 Universal"),
}

AssetSpec = tuple[str, bytes] | tuple[str, bytes, str] | dict


class Repositories:
    """Mixin of ``FakeGitHub``; uses its ``state``, ``now`` and ``add_installation``."""

    def add_repo(
        self,
        owner: str = "modder",
        name: str | None = None,
        *,
        description: str | None = None,
        topics: Iterable[str] = (),
        private: bool = False,
        default_branch: str = "main",
        owner_type: str = "User",
        owner_id: int | None = None,
        repo_id: int | None = None,
        homepage: str | None = None,
        language: str | None = "Java",
        license: str | None = None,
        archived: bool = False,
        fork: bool = False,
        installation: Installation | None = None,
    ) -> Repo:
        """Add a repository. ``add_repo("alice", "mod")`` or ``add_repo("alice/mod")``."""
        if name is None:
            if "/" not in owner:
                raise ValueError("give owner and name, or 'owner/name'")
            owner, name = owner.split("/", 1)
        if self.state.find_repo(owner, name) is not None:
            raise ValueError(f"repository {owner}/{name} exists")
        now = self.now()
        lic = None
        if license:
            key, lname = _LICENSES.get(license, (license.lower(), license))
            lic = {
                "key": key,
                "name": lname,
                "spdx_id": license,
                "url": f"https://api.github.com/licenses/{key}",
                "node_id": "MDc6TGljZW5zZTEz",
            }
        repo = Repo(
            id=repo_id if repo_id is not None else self.state.next_repo_id(),
            owner=self.state.user(owner, type=owner_type, id=owner_id),
            name=name,
            description=description,
            topics=list(topics),
            private=private,
            default_branch=default_branch,
            homepage=homepage,
            language=language,
            license=lic,
            archived=archived,
            fork=fork,
            created_at=now,
            updated_at=now,
            pushed_at=now,
        )
        self.state.repos[repo.full_name.lower()] = repo
        if installation is not None:
            installation.repos.append(repo)
        return repo

    def repo(self, full_name: str) -> Repo:
        owner, _, name = full_name.partition("/")
        repo = self.state.find_repo(owner, name)
        if repo is None:
            raise KeyError(full_name)
        return repo

    def _as_repo(self, repo: Repo | str) -> Repo:
        return self.repo(repo) if isinstance(repo, str) else repo

    def add_release(
        self,
        repo: Repo | str,
        tag: str,
        assets: Iterable[AssetSpec] = (),
        *,
        name: str | None = None,
        body: str | None = "",
        draft: bool = False,
        prerelease: bool = False,
        created_at: float | None = None,
        published_at: float | None = None,
        target_commitish: str | None = None,
        author: User | str | None = None,
        release_id: int | None = None,
        make_latest: bool = True,
        immutable: bool = False,
    ) -> Release:
        """Add a release; ``assets`` items are ``(name, bytes)``, ``(name, bytes, content_type)``
        or dicts of ``add_asset`` keyword arguments (``name``, ``content``, ...).

        Like GitHub, a release may be published with no assets and get them later
        (``add_asset``), as release tools do (they publish, then upload; GitHub sends no
        webhook for an upload). ``immutable``: assets are final once published, as on GitHub
        with immutable releases (``add_asset`` then refuses)."""
        repo = self._as_repo(repo)
        if any(r.tag_name == tag for r in repo.releases):
            raise ValueError(f"{repo.full_name} already has a release tagged {tag}")
        created = self.now() if created_at is None else created_at
        if isinstance(author, str):
            author = self.state.user(author)
        rel = Release(
            id=release_id if release_id is not None else self.state.next_release_id(),
            repo=repo,
            tag_name=tag,
            name=tag if name is None else name,
            body=body,
            draft=draft,
            prerelease=prerelease,
            created_at=created,
            published_at=None if draft else (created if published_at is None else published_at),
            target_commitish=target_commitish or repo.default_branch,
            author=author or repo.owner,
            make_latest=make_latest,
        )
        repo.releases.append(rel)
        for spec in assets:
            if isinstance(spec, dict):
                self.add_asset(rel, **spec)
            else:
                self.add_asset(rel, *spec)
        rel.immutable = immutable  # after its assets: they came with the publish
        return rel

    def add_asset(
        self,
        release: Release,
        name: str,
        content: bytes,
        content_type: str | None = None,
        *,
        label: str | None = None,
        digest: Any = ...,
        download_count: int = 0,
        uploader: User | str | None = None,
        asset_id: int | None = None,
        created_at: float | None = None,
    ) -> Asset:
        """Add an asset (upload it), to a new release or to one published earlier: the release's
        JSON lists it from now on, so its ETag changes. ``digest``: default computed
        ``sha256:<hex>``; ``None`` renders null. The name is normalised like GitHub does
        (``github_asset_name``)."""
        name = github_asset_name(name)
        if release.immutable and not release.draft:
            raise ValueError(f"release {release.tag_name} is immutable: GitHub refuses new assets (422)")
        if any(a.name == name for a in release.assets):
            raise ValueError(f"release {release.tag_name} already has an asset named {name}")
        if isinstance(uploader, str):
            uploader = self.state.user(uploader)
        ts = self.now() if created_at is None else created_at
        aid = asset_id if asset_id is not None else self.state.next_asset_id()
        asset = Asset(
            id=aid,
            name=name,
            content=bytes(content),
            content_type=content_type or guess_content_type(name),
            release=release,
            label=label,
            download_count=download_count,
            created_at=ts,
            updated_at=ts,
            uploader=uploader or release.author,
            digest_override=digest,
            blob_key=self.state.new_blob_key(aid),
        )
        self.state.blobs[asset.blob_key] = asset
        release.assets.append(asset)
        return asset

    def replace_asset_content(self, asset: Asset, content: bytes) -> None:
        """Change an asset's bytes (new ETag/digest/size), as a re-upload would."""
        asset.content = bytes(content)
        asset.updated_at = self.now()

    def remove_asset(self, asset: Asset) -> None:
        asset.release.assets.remove(asset)
        self.state.blobs.pop(asset.blob_key, None)

    def remove_release(self, release: Release | Repo | str, tag: str | None = None) -> Release:
        """Delete a release (``remove_release(rel)`` or ``remove_release(repo, tag)``); its
        assets stop being served."""
        if not isinstance(release, Release):
            if tag is None:
                raise ValueError("give a Release, or a repo and a tag")
            release = self._as_repo(release).release(tag)
        release.repo.releases.remove(release)
        for a in release.assets:
            self.state.blobs.pop(a.blob_key, None)
        return release

    def set_file(
        self, repo: Repo | str, path: str, content: bytes | str | None, ref: str | None = None
    ) -> None:
        """Put (or with ``None`` remove) a file for the contents API. ``ref=None`` makes it
        present at every ref that does not override it."""
        repo = self._as_repo(repo)
        files = repo.files.setdefault(ref, {})
        path = path.strip("/")
        if content is None:
            files.pop(path, None)
        else:
            files[path] = content.encode() if isinstance(content, str) else bytes(content)

    # ==== demo ======================================================================================
    def add_demo_mods(self, mods=None, *, install: bool = True) -> list[Repo]:
        """Populate sample mod repositories with releases and jars (``jars.demo_mods()``)."""
        from ..jars import demo_mods

        repos = []
        for mod in mods if mods is not None else demo_mods():
            repo = self.add_repo(
                mod.owner,
                mod.repo,
                description=mod.description,
                topics=mod.topics,
                license=mod.license,
                homepage=mod.homepage,
            )
            self.set_file(repo, "README.md", _demo_readme(mod))
            for i, rel in enumerate(mod.releases):
                self.add_release(
                    repo,
                    rel.tag,
                    rel.assets,
                    name=rel.name,
                    body=rel.body,
                    prerelease=rel.prerelease,
                    created_at=self.now() - (len(mod.releases) - i) * 86400,
                )
            repos.append(repo)
        if install and repos:
            by_owner: dict[str, list[Repo]] = {}
            for r in repos:
                by_owner.setdefault(r.owner.login, []).append(r)
            for owned in by_owner.values():
                self.add_installation(owned)
        return repos


def _demo_readme(mod) -> str:
    """A README as a mod's repository has one: what the demo's mod pages show (the GitHub role
    reads it; docs/github-app.md, "The README")."""
    rows = "\n".join(f"| {loader} | {', '.join(mod.game_versions)} |" for loader in mod.loaders)
    return (f"# {mod.name}\n\n{mod.description}\n\n## Installing\n\n"
            f"1. Install the loader ({', '.join(mod.loaders)}).\n"
            "2. Drop the jar of the latest release "
            "into your `mods` folder.\n\n"
            f"| Loader | Minecraft |\n|---|---|\n{rows}\n\n"
            "## Features\n\n- [x] works on servers and clients\n- [ ] a config screen\n\n"
            f"Licensed under {mod.license}. See [the license](LICENSE).\n")
