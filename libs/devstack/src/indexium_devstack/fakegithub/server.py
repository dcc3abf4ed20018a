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

import aiohttp
from aiohttp import web

from .api import ApiRoutes, build_github_app
from .appauth import AppRegistry
from .cdn import CdnRoutes, Signer, build_cdn_app
from .controls import FaultControls, RateLimitControls
from .deliveries import Deliveries
from .faults import Faults
from .installs import Installations
from .models import Asset, AssetStats, CdnRequest, State
from .oauth import OAuth
from .pages import RepositoryPages
from .payloads import Payloads
from .ratelimit import RateLimiter
from .render import Urls
from .repos import Repositories


class FakeGitHub(Repositories, Installations, Payloads, Deliveries, FaultControls, RateLimitControls):
    """GitHub-shaped server for tests and the local demo. See module docstring.

    This class owns the lifecycle, the addresses, the clock and what tests observe; each
    concern tests drive lives in its own mixin: ``repos`` (repositories, releases, assets,
    the demo's mods), ``installs`` (App key, installations, tokens), ``payloads`` (URLs,
    JSON and webhook payloads), ``deliveries`` (webhook sending and redelivery) and
    ``controls`` (faults, rate limits).
    """

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
        # (route template, status) of every API answer, as GitHub would bill it: 304s are free.
        self.api_statuses: list[tuple[str, int]] = []
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
        RepositoryPages(self).add_routes(github_app.router)  # last: /{owner}/{repo} matches widely
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

    # ==== observation ============================================================================
    def stats(self, asset: Asset | int) -> AssetStats:
        aid = asset if isinstance(asset, int) else asset.id
        return self.state.stats_for(aid).snapshot()

    def reset_stats(self) -> None:
        self.state.stats.clear()
        self.state.cdn_requests.clear()
        self.api_calls.clear()
        self.api_log.clear()
        self.api_statuses.clear()

    @property
    def cdn_requests(self) -> list[CdnRequest]:
        """Every request the CDN host saw, with its headers (case-insensitive)."""
        return self.state.cdn_requests


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
