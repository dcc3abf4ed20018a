"""``FakeGitHub``: a real HTTP server on loopback that behaves like GitHub for Indexium.

Two sites acting as two hosts:

* the **github** host (``127.0.0.1:<port>``): REST API at ``/`` (like api.github.com) and the
  ``browser_download_url`` redirector (like github.com);
* the **CDN** host (``localhost:<port>``): signed, expiring release-asset URLs serving bytes
  with HTTP Range support (like release-assets.githubusercontent.com).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterable
from typing import Any

import aiohttp
from aiohttp import web

from .api import ApiRoutes, build_github_app
from .appauth import AppRegistry
from .cdn import CdnRoutes, Signer, build_cdn_app
from .faults import MODES, WHERES, Faults, QueuedFailure
from .oauth import OAuth
from .models import (
    Asset,
    AssetStats,
    CdnRequest,
    Delivery,
    Installation,
    Release,
    Repo,
    State,
    Token,
    User,
    github_asset_name,
    guess_content_type,
)
from .ratelimit import RateLimiter
from .render import (
    Urls,
    download_url,
    installation_json,
    installation_ref,
    release_json,
    repo_json,
    repo_short_json,
    user_json,
)
from .webhooks import deliver, encode_payload, new_delivery

_LICENSES = {
    "MIT": ("mit", "MIT License"),
    "Apache-2.0": ("apache-2.0", "Apache License 2.0"),
    "LGPL-3.0": ("lgpl-3.0", "GNU Lesser General Public License v3.0"),
    "GPL-3.0": ("gpl-3.0", "GNU General Public License v3.0"),
    "MPL-2.0": ("mpl-2.0", "Mozilla Public License 2.0"),
    "CC0-1.0": ("cc0-1.0", "Creative Commons Zero v1.0 Universal"),
}

AssetSpec = tuple[str, bytes] | tuple[str, bytes, str] | dict


class FakeGitHub:
    """GitHub-shaped server for tests and the local demo. See module docstring."""

    def __init__(
        self,
        *,
        github_host: str = "127.0.0.1",
        cdn_host: str = "localhost",
        port: int = 0,
        cdn_port: int = 0,
        url_ttl: float = 300.0,
        token_lifetime: float = 3600.0,
        rate_limit: int = 5000,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
        hook_id: int = 109948940,
        app_owner: str = "indexium",
    ) -> None:
        self._offset = 0.0
        self.state = State(clock=self.now)
        self.faults = Faults()
        self.signer = Signer.random(url_ttl)
        self.limiter = RateLimiter(limit=rate_limit, clock=self.now)
        self.app = AppRegistry(self.state, token_lifetime=token_lifetime)
        self.api = ApiRoutes(self)
        self.oauth = OAuth(self)  # user sign-in (the OAuth web flow): fakegithub/oauth.py
        self.cdn = CdnRoutes(self)
        self.api_calls: dict[str, int] = {}
        self.api_log: list[tuple[str, str, str]] = []
        self.webhook_url = webhook_url
        self.webhook_secret = webhook_secret
        self.hook_id = hook_id
        self.app_owner = app_owner
        self._bind = (github_host, port, cdn_host, cdn_port)
        self._runners: list[web.AppRunner] = []
        self._session: aiohttp.ClientSession | None = None
        self._tasks: set[asyncio.Task] = set()
        self.github_host = ""
        self.cdn_host = ""

    # ==== lifecycle ==========================================================================
    async def start(self) -> "FakeGitHub":
        if self._runners:
            return self
        github_bind, port, cdn_bind, cdn_port = self._bind
        github_app = build_github_app(self.api, self.cdn.download)
        self.oauth.add_routes(github_app.router)
        gh_runner = web.AppRunner(github_app, access_log=None)
        await gh_runner.setup()
        self._runners.append(gh_runner)
        await web.TCPSite(gh_runner, github_bind, port).start()
        self.github_host = f"{github_bind}:{gh_runner.addresses[0][1]}"

        cdn_runner = web.AppRunner(build_cdn_app(self.cdn), access_log=None)
        await cdn_runner.setup()
        self._runners.append(cdn_runner)
        ips = await _resolve(cdn_bind)
        await web.TCPSite(cdn_runner, ips[0], cdn_port).start()
        bound = cdn_runner.addresses[0][1]
        for ip in ips[1:]:  # e.g. ::1 when localhost also resolves to IPv6
            try:
                await web.TCPSite(cdn_runner, ip, bound).start()
            except OSError:
                pass
        self.cdn_host = f"{cdn_bind}:{bound}"
        self._session = aiohttp.ClientSession()
        return self

    async def close(self) -> None:
        await self.flush(timeout=5)
        for t in list(self._tasks):
            t.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None
        for runner in reversed(self._runners):
            await runner.cleanup()
        self._runners.clear()

    async def __aenter__(self) -> "FakeGitHub":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def flush(self, timeout: float | None = None) -> None:
        """Wait for background work (redeliveries triggered through the API)."""
        pending = [t for t in self._tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    # ==== addresses ===========================================================================
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` — plays github.com (browser_download_url, html_url)."""
        self._require_started()
        return f"http://{self.github_host}"

    @property
    def api_url(self) -> str:
        """``http://127.0.0.1:<port>`` — plays api.github.com (same host, base path ``/``)."""
        return self.base_url

    @property
    def cdn_url(self) -> str:
        self._require_started()
        return f"http://{self.cdn_host}"

    @property
    def urls(self) -> Urls:
        return Urls(api=self.api_url, web=self.base_url, uploads=self.base_url)

    def _require_started(self) -> None:
        if not self.github_host:
            raise RuntimeError("FakeGitHub is not started (use `async with FakeGitHub()`)")

    # ==== clock =================================================================================
    def now(self) -> float:
        """The fake's clock: wall time plus whatever ``advance`` added."""
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock forward (expires signed URLs, tokens, rate-limit windows)."""
        self._offset += seconds

    # ==== state builders =======================================================================
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
    ) -> Release:
        """Add a release; ``assets`` items are ``(name, bytes)``, ``(name, bytes, content_type)``
        or dicts of ``add_asset`` keyword arguments (``name``, ``content``, ...)."""
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
        """Add an asset. ``digest``: default computed ``sha256:<hex>``; ``None`` renders null.
        The name is normalised like GitHub does (``github_asset_name``)."""
        name = github_asset_name(name)
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

    # ==== GitHub App ============================================================================
    def generate_app_key(self, app_id: int | None = None, bits: int = 2048) -> tuple[int, str]:
        """Create (or replace) the App's RSA key; returns ``(app_id, private_key_pem)``."""
        return self.app.generate_key(app_id, bits)

    @property
    def app_id(self) -> int:
        return self.app.app_id

    @property
    def token_lifetime(self) -> float:
        return self.app.token_lifetime

    @token_lifetime.setter
    def token_lifetime(self, seconds: float) -> None:
        self.app.token_lifetime = seconds

    def add_installation(
        self,
        repos: Iterable[Repo | str] = (),
        *,
        account: User | str | None = None,
        installation_id: int | None = None,
        permissions: dict[str, str] | None = None,
        repository_selection: str = "selected",
        events: Iterable[str] = ("release", "repository"),
    ) -> Installation:
        repos = [self._as_repo(r) for r in repos]
        if account is None:
            account = repos[0].owner if repos else self.state.user("modder")
        elif isinstance(account, str):
            account = self.state.user(account)
        inst = Installation(
            id=installation_id if installation_id is not None else self.state.next_installation_id(),
            account=account,
            repos=repos,
            repository_selection=repository_selection,
            created_at=self.now(),
            events=list(events),
        )
        if permissions is not None:
            inst.permissions = dict(permissions)
        self.state.installations[inst.id] = inst
        return inst

    def issue_token(self, installation: Installation | int, lifetime: float | None = None) -> str:
        """Mint an installation token directly (what POST .../access_tokens returns)."""
        iid = installation if isinstance(installation, int) else installation.id
        return self.app.mint_token(iid, lifetime).token

    def expire_tokens(self) -> None:
        for tok in self.state.tokens.values():
            tok.expires_at = self.now() - 1

    @property
    def tokens(self) -> dict[str, Token]:
        return self.state.tokens

    # ---- auth helpers used by routes --------------------------------------------------------
    def _token_has_repo(self, token: Token | None, repo: Repo) -> bool:
        """Whether an installation token grants access to the repository itself."""
        if token is None:
            return False
        inst = self.state.installations.get(token.installation_id)
        if inst is None or repo not in inst.repos:
            return False
        return token.repository_ids is None or repo.id in token.repository_ids

    def _token_sees(self, token: Token | None, repo: Repo) -> bool:
        return not repo.private or self._token_has_repo(token, repo)

    def _can_see(self, request: web.Request, repo: Repo) -> bool:
        try:
            token = self.app.token_from_header(request.headers.get("Authorization"))
        except Exception:
            return False
        return self._token_has_repo(token, repo)

    # ==== URLs & payloads =====================================================================
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

    # ==== webhooks =============================================================================
    def configure_webhook(self, url: str | None, secret: str | None) -> None:
        """Where ``POST /app/hook/deliveries/{id}/attempts`` re-sends deliveries."""
        self.webhook_url, self.webhook_secret = url, secret

    async def send_webhook(
        self,
        url: str,
        event: str,
        payload: dict | bytes,
        secret: str | None,
        delivery_id: str | None = None,
    ) -> int:
        """POST a delivery with GitHub's headers; records it for ``/app/hook/deliveries``.
        Returns the receiver's HTTP status (0 if it could not be reached)."""
        d = await self.deliver(url, event, payload, secret, delivery_id=delivery_id)
        return d.status_code

    async def deliver(
        self,
        url: str,
        event: str,
        payload: dict | bytes,
        secret: str | None,
        *,
        delivery_id: str | None = None,
        redelivery: bool = False,
    ) -> Delivery:
        """Like ``send_webhook`` but returns the recorded ``Delivery``."""
        if self._session is None:
            raise RuntimeError("FakeGitHub is not started")
        return await deliver(
            self._session,
            self.state,
            url,
            event,
            encode_payload(payload),
            secret,
            guid=delivery_id,
            hook_id=self.hook_id,
            app_id=self.app.app_id or None,
            redelivery=redelivery,
        )

    def record_delivery(
        self,
        event: str,
        payload: dict | bytes,
        status_code: int = 200,
        *,
        guid: str | None = None,
        redelivery: bool = False,
        delivered_at: float | None = None,
        duration: float = 0.05,
    ) -> Delivery:
        """Record a delivery as if it had been sent (for redelivery / catch-up tests)."""
        return new_delivery(
            self.state,
            event,
            encode_payload(payload),
            status_code,
            guid=guid,
            redelivery=redelivery,
            delivered_at=delivered_at,
            duration=duration,
            url=self.webhook_url,
        )

    @property
    def deliveries(self) -> list[Delivery]:
        return self.state.deliveries

    def _schedule_redelivery(self, original: Delivery) -> None:
        async def run() -> None:
            if self.webhook_url is None:
                new_delivery(
                    self.state, original.event, original.body, 0,
                    guid=original.guid, redelivery=True,
                )
                return
            await self.deliver(
                self.webhook_url,
                original.event,
                original.body,
                self.webhook_secret,
                delivery_id=original.guid,
                redelivery=True,
            )

        task = asyncio.get_running_loop().create_task(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ==== observation ============================================================================
    def stats(self, asset: Asset | int) -> AssetStats:
        aid = asset if isinstance(asset, int) else asset.id
        return self.state.stats_for(aid).snapshot()

    def reset_stats(self) -> None:
        self.state.stats.clear()
        self.state.cdn_requests.clear()
        self.api_calls.clear()
        self.api_log.clear()

    @property
    def cdn_requests(self) -> list[CdnRequest]:
        """Every request the CDN host saw, with its headers (case-insensitive)."""
        return self.state.cdn_requests

    # ==== fault injection =========================================================================
    def fail_next(
        self,
        asset: Asset | int | None = None,
        status: int = 503,
        count: int = 3,
        retry_after: int | float | None = None,
        *,
        where: str = "cdn",
        body: str | None = None,
    ) -> None:
        """The next ``count`` matching requests answer ``status`` (with ``Retry-After`` if
        given). ``asset=None`` matches any. ``where``: 'cdn' (default), 'download' (the
        github-host redirector / asset API octet-stream) or 'api' (every API route)."""
        if where not in WHERES:
            raise ValueError(f"where must be one of {sorted(WHERES)}")
        aid = asset if isinstance(asset, int) or asset is None else asset.id
        self.faults.queued.append(QueuedFailure(status, count, retry_after, aid, where, body))

    def set_mode(self, asset: Asset | int, mode: str) -> None:
        """Per-asset CDN behaviour: normal, no_range, 404, expire_once, expired, truncate."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {sorted(MODES)}")
        aid = asset if isinstance(asset, int) else asset.id
        if mode == "normal":
            self.faults.modes.pop(aid, None)
        else:
            self.faults.modes[aid] = mode

    def redirect_asset_to(self, asset: Asset | int, url: str | None) -> None:
        """Make the asset's download redirect go to ``url`` (``None`` restores the CDN)."""
        aid = asset if isinstance(asset, int) else asset.id
        if url is None:
            self.faults.redirects.pop(aid, None)
        else:
            self.faults.redirects[aid] = url

    def set_latency(
        self, seconds: float, *, asset: Asset | int | None = None, where: str = "all"
    ) -> None:
        """Artificial delay before answering: per asset (CDN + redirector) or per host part."""
        if asset is not None:
            aid = asset if isinstance(asset, int) else asset.id
            self.faults.asset_latency[aid] = seconds
            return
        targets = WHERES if where == "all" else {where}
        for w in targets:
            self.faults.latency[w] = seconds

    def reset_faults(self) -> None:
        self.faults.reset()
        self.limiter.secondary_pending = 0

    # ==== rate limiting ==============================================================================
    def set_rate_limit(
        self,
        limit: int,
        remaining: int | None = None,
        reset_in_seconds: float = 3600.0,
        *,
        status: int | None = None,
    ) -> None:
        """Set the ``core`` bucket; when exhausted, API calls answer ``status`` (403 default,
        or 429) until the reset time, then the bucket refills."""
        self.limiter.set(limit, remaining, reset_in_seconds, status=status)

    def secondary_limit_next(self, n: int = 1, retry_after: int = 60, status: int = 403) -> None:
        """The next ``n`` API calls hit a secondary rate limit (``Retry-After`` seconds)."""
        self.limiter.secondary_pending = n
        self.limiter.secondary_retry_after = retry_after
        self.limiter.secondary_status = status

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


async def _resolve(host: str) -> list[str]:
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return [host]
    ips: list[str] = []
    for family, *_rest, addr in infos:
        if family in (socket.AF_INET, socket.AF_INET6) and addr[0] not in ips:
            ips.append(addr[0])
    # IPv4 first: its port (chosen by the OS) is then reused for the IPv6 address.
    ips.sort(key=lambda ip: ":" in ip)
    return ips or [host]
