"""Is a repository a mod? A loader manifest on its default branch, or in its latest release's jar.

Branch: the contents API at each usual resource path, the single-module layout first,
then the common multi-module ones (``fabric/``, ``neoforge/``, ``forge/``, ``quilt/``,
``common/``). Each probe is one request (a 404 costs quota too), so a repository that is
not a mod costs ``len(CANDIDATE_PATHS)`` requests plus one or two for its latest release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

import aiohttp
import msgspec

from indexium_contracts import github
from indexium_github import GitHubClient, NotFound
from indexium_jar.errors import JarReadError
from indexium_jar.manifests import parse_jar
from indexium_jar.model import ModRecord
from indexium_jar.remote import DownloadPolicy

from .. import assets
from ..jarread import read_metadata

MANIFEST_FILES = ("fabric.mod.json", "quilt.mod.json", "META-INF/neoforge.mods.toml", "META-INF/mods.toml")
MODULE_DIRS = ("", "fabric", "neoforge", "forge", "quilt", "common")
RESOURCES = "src/main/resources"
CANDIDATE_PATHS = tuple(
    f"{module + '/' if module else ''}{RESOURCES}/{name}" for module in MODULE_DIRS for name in MANIFEST_FILES
)
# Any module's resources, for pushes (a build may name its modules anything).
_MANIFEST_PATH = re.compile(
    r"(^|/)src/main/resources/(fabric\.mod\.json|quilt\.mod\.json|META-INF/(neoforge\.)?mods\.toml)$"
)
RAW = "application/vnd.github.raw+json"
_releases = msgspec.json.Decoder(list[github.Release])


def is_manifest_path(path: str) -> bool:
    return bool(_MANIFEST_PATH.search(path))


def jar_path(source_path: str) -> str:
    """``fabric/src/main/resources/fabric.mod.json`` -> ``fabric.mod.json`` (its path in the jar)."""
    return source_path.split(f"{RESOURCES}/", 1)[1]


def source_record(source_path: str, data: bytes) -> ModRecord | None:
    """The manifest's record, read by the jar reader's own parsers (templates and all)."""
    result = parse_jar({jar_path(source_path): data})
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
        paths = [first] if first else []
        paths += [p for p in CANDIDATE_PATHS if p != first]
        for path in paths:
            data = await self.read_file(repo, installation_id, path)
            if data is not None:
                return path, data
        return None

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
        jars = assets.mod_jars(release.assets)
        if not jars:
            return Evaluation(False, f"no mod manifest on branch {branch}; latest release "
                                     f"{release.tag_name} has no jar")
        for jar in jars[:3]:
            try:
                md = await read_metadata(self._session, jar.browser_download_url, self._policy)
            except JarReadError as exc:
                if exc.retryable:
                    raise
                continue
            if md.records:
                return Evaluation(True, source=f"release:{release.tag_name}/{jar.name}")
        return Evaluation(False, f"no mod manifest on branch {branch} nor in the jars of "
                                 f"latest release {release.tag_name}")
