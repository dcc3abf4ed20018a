"""Is a repository a mod (or a pack)? A loader manifest on its default branch, or a pack's file at
its root (the format registry's pack formats' source paths: ``pack.mcmeta``, ``shaders/``,
``modrinth.index.json``, packwiz's ``pack.toml``), or a loader manifest in its latest release's jar,
or a pack in its latest release's zip or ``.mrpack``.

Branch: one request for the branch's file list (the git trees API, recursive), then the
contents API for the manifest it names: any module's ``src/main/resources`` manifest, the
single-module layout first, then the common multi-module ones (``fabric/``, ``neoforge/``,
``forge/``, ``quilt/``, ``common/``), then any other module. Two requests whatever the
layout, one for a repository without commits (409) or without the branch (404); a mod's
manifest ranks before a pack's file. Only when
GitHub truncates the list (a very large repository) are the usual paths probed one by one
(``len(CANDIDATE_PATHS)`` requests at most: a 404 costs quota too).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import aiohttp
import msgspec

from indexium_contracts import github
from indexium_contracts.github import is_manifest_path
from indexium_github import GitHubClient, GitHubError, NotFound, assets
from indexium_jar import formats
from indexium_jar.errors import JarReadError
from indexium_jar.manifests import parse_jar
from indexium_jar.metadata import read_metadata
from indexium_jar.packread import read_pack_metadata
from indexium_jar.model import ModRecord
from indexium_jar.http.remote import DownloadPolicy


MANIFEST_FILES = formats.SOURCE_MANIFESTS  # the format registry's jar formats' source-tree files
# The pack formats' files at a repository's root (a folder, e.g. shaders/, is found in the file
# list only: there is no file to probe for it when the list is truncated).
PACK_FILES = tuple(p for p in formats.SOURCE_PACK_PATHS if not p.endswith("/"))
# The single-module layout, then modules named after a loader (fabric/, neoforge/ ...), then common/.
MODULE_DIRS = ("", *formats.MODULE_LOADERS, "common")
RESOURCES = "src/main/resources"
CANDIDATE_PATHS = tuple(
    f"{module + '/' if module else ''}{RESOURCES}/{name}" for module in MODULE_DIRS for name in MANIFEST_FILES
) + PACK_FILES
RAW = "application/vnd.github.raw+json"
_releases = msgspec.json.Decoder(list[github.Release])


class _TreeEntry(msgspec.Struct):
    path: str
    type: str


class _Tree(msgspec.Struct):
    tree: list[_TreeEntry] = []
    truncated: bool = False


_trees = msgspec.json.Decoder(_Tree)


def jar_path(source_path: str) -> str | None:
    """``fabric/src/main/resources/fabric.mod.json`` -> ``fabric.mod.json`` (its path in the jar);
    None for a pack's file (no jar manifest)."""
    parts = source_path.split(f"{RESOURCES}/", 1)
    return parts[1] if len(parts) == 2 else None


def source_record(source_path: str, data: bytes) -> ModRecord | None:
    """The manifest's record, read by the jar reader's own parsers (templates and all); None for a
    pack's file (the card keeps the repository's name until a release is indexed)."""
    path = jar_path(source_path)
    if path is None:
        return None
    result = parse_jar({path: data})
    return result.records[0] if result.records else None


@dataclass(frozen=True)
class Evaluation:
    registered: bool
    reason: str | None = None  # why not, when skipped
    source: str | None = None  # "branch:<path>" or "release:<tag>/<asset>"
    record: ModRecord | None = None  # the branch manifest's record, when there is one


class Prober:
    def __init__(self, client: GitHubClient, session: aiohttp.ClientSession, policy: DownloadPolicy):
        self._client, self._session, self._policy = client, session, policy

    async def read_file(self, repo: github.Repository, installation_id: int, path: str) -> bytes | None:
        try:
            resp = await self._client.get(
                f"/repos/{repo.full_name}/contents/{quote(path)}", installation_id=installation_id,
                params={"ref": repo.default_branch or "main"}, accept=RAW, op="get_contents",
            )
        except NotFound:
            return None
        return resp.body

    async def branch_manifest(self, repo: github.Repository, installation_id: int,
                              first: str | None = None) -> tuple[str, bytes] | None:
        """The first manifest on the default branch: ``first`` (where it was last time) if it is
        still there, else the ones the branch's file list names, in the order above."""
        if first:
            data = await self.read_file(repo, installation_id, first)
            if data is not None:
                return first, data
        listed = await self.branch_manifest_paths(repo, installation_id)
        paths = [p for p in CANDIDATE_PATHS if p != first] if listed is None else [p for p in listed if p != first]
        for path in paths:
            data = await self.read_file(repo, installation_id, path)
            if data is not None:
                return path, data
        return None

    async def branch_manifest_paths(self, repo: github.Repository, installation_id: int) -> list[str] | None:
        """Manifest paths on the default branch, best first; None when the list is truncated."""
        branch = repo.default_branch or "main"
        try:
            resp = await self._client.get(
                f"/repos/{repo.full_name}/git/trees/{quote(branch, safe='')}", installation_id=installation_id,
                params={"recursive": "1"}, op="get_tree",
            )
        except NotFound:
            return []  # no such branch: nothing on it
        except GitHubError as exc:
            if exc.status == 409:  # "Git Repository is empty."
                return []
            raise
        tree = _trees.decode(resp.body)
        if tree.truncated:
            return None
        found = [e.path for e in tree.tree if e.type == "blob" and is_manifest_path(e.path)]
        rank = {path: i for i, path in enumerate(CANDIDATE_PATHS)}
        # A mod's manifest (listed or in any module) first, then a pack's root file, then a pack's folder.
        return sorted(found, key=lambda p: (f"{RESOURCES}/" not in p, rank.get(p, len(rank)), p.count("/"), p))

    async def latest_release(self, repo: github.Repository, installation_id: int) -> github.Release | None:
        try:
            resp = await self._client.get(f"/repos/{repo.full_name}/releases/latest",
                                          installation_id=installation_id, op="latest_release")
            return resp.decode(github.Release)
        except NotFound:  # no "latest": perhaps only pre-releases
            resp = await self._client.get(f"/repos/{repo.full_name}/releases", installation_id=installation_id,
                                          params={"per_page": 10}, op="list_releases")
            return next((r for r in _releases.decode(resp.body) if not r.draft), None)

    async def evaluate(self, repo: github.Repository, installation_id: int) -> Evaluation:
        branch = repo.default_branch or "main"
        found = await self.branch_manifest(repo, installation_id)
        if found is not None:
            path, data = found
            return Evaluation(True, source=f"branch:{path}", record=source_record(path, data))
        release = await self.latest_release(repo, installation_id)
        if release is None:
            return Evaluation(False, f"no mod manifest on branch {branch} and no published release")
        # Jars first (a mod's release often carries its resource pack too), then packs.
        files = sorted(assets.mod_jars(release.assets), key=lambda a: not assets.is_jar(a.name))
        if not files:
            return Evaluation(False, f"no mod manifest on branch {branch}; latest release "
                                     f"{release.tag_name} has no jar or pack")
        for asset in files[:3]:
            try:
                if assets.is_jar(asset.name):
                    md = await read_metadata(self._session, asset.browser_download_url, self._policy)
                else:  # a pack's archive (a zip, a .mrpack): the release job's pack reader
                    md = await read_pack_metadata(self._session, asset.browser_download_url, self._policy,
                                                  file_name=asset.name, release_text=release.name or "")
            except JarReadError as exc:
                if exc.retryable:
                    raise
                continue
            if md.records or md.pack is not None:
                return Evaluation(True, source=f"release:{release.tag_name}/{asset.name}")
        return Evaluation(False, f"no mod manifest on branch {branch} nor in the jars or packs of "
                                 f"latest release {release.tag_name}")
