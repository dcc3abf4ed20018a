"""``make run DEMO=1``: sample mods on a local GitHub-shaped server, and signed webhooks for them.

The fake GitHub runs on its own event loop in a background thread so the stack's
supervisor loop stays simple and synchronous.
"""

from __future__ import annotations

import asyncio
import threading

from .fakegithub import FakeGitHub


class DemoGitHub:
    def __init__(self, webhook_secret: str):
        self.secret = webhook_secret
        self.loop = asyncio.new_event_loop()
        self.gh: FakeGitHub | None = None
        self._thread = threading.Thread(target=self.loop.run_forever, name="demo-github", daemon=True)

    def _call(self, coro, timeout: float = 60.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> "DemoGitHub":
        self._thread.start()

        async def boot() -> FakeGitHub:
            gh = FakeGitHub()
            await gh.start()
            gh.add_demo_mods()
            return gh

        self.gh = self._call(boot())
        return self

    @property
    def download_hosts(self) -> list[str]:
        return [self.gh.github_host, self.gh.cdn_host]

    def send_all(self, webhook_url: str) -> int:
        """One signed ``release published`` webhook per demo release, oldest first."""

        async def send() -> int:
            sent = 0
            for repo in list(self.gh.state.repos.values()):
                for release in repo.releases:
                    payload = self.gh.release_payload(release, action="published")
                    status = await self.gh.send_webhook(webhook_url, "release", payload, self.secret)
                    sent += status == 202
            return sent

        return self._call(send())

    def stop(self) -> None:
        if self.gh is not None:
            self._call(self.gh.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
