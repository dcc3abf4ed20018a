"""``make run DEMO=1``: sample mods on a local GitHub-shaped server, and signed webhooks for them.

The fake GitHub runs on its own event loop in a background thread so the stack's
supervisor loop stays simple and synchronous.
"""

from __future__ import annotations

import asyncio
import secrets
import threading

from .fakegithub import FakeGitHub


DEMO_USER = "demo-author"


class DemoGitHub:
    def __init__(self, webhook_secret: str):
        self.secret = webhook_secret
        self.loop = asyncio.new_event_loop()
        self.gh: FakeGitHub | None = None
        self._app_key = ""
        self._thread = threading.Thread(target=self.loop.run_forever, name="demo-github", daemon=True)

    def _call(self, coro, timeout: float = 60.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> "DemoGitHub":
        self._thread.start()

        async def boot() -> FakeGitHub:
            gh = FakeGitHub()
            await gh.start()
            _, self._app_key = gh.generate_app_key()  # the GitHub App role signs its JWTs with it
            gh.add_demo_mods()
            # Sign-in approves at once as the demo author, who can reach every demo repository.
            gh.oauth.sign_in_as(DEMO_USER, member_of=list(gh.state.installations.values()))
            return gh

        self.gh = self._call(boot())
        return self

    @property
    def download_hosts(self) -> list[str]:
        return [self.gh.github_host, self.gh.cdn_host]

    def site_env(self, public_url: str) -> dict[str, str]:
        """The api's web-site settings for signing in against this fake GitHub (docs/web.md)."""
        return {
            "INDEXIUM_PUBLIC_URL": public_url,
            "INDEXIUM_GITHUB_URL": self.gh.base_url,
            "INDEXIUM_GITHUB_API_URL": self.gh.api_url,
            "INDEXIUM_GITHUB_CLIENT_ID": self.gh.oauth.client_id,
            "INDEXIUM_GITHUB_CLIENT_SECRET": self.gh.oauth.client_secret,
            "INDEXIUM_GITHUB_APP_SLUG": "indexium-demo",
            "INDEXIUM_SESSION_SECRET": secrets.token_urlsafe(48),  # sessions end with the demo
            "INDEXIUM_ADMIN_LOGINS": DEMO_USER,  # so the demo shows the review queue too
        }

    def app_env(self) -> dict[str, str]:
        """The GitHub App role's settings against this stand-in (ingest reads them too: its
        failed-delivery reconciler asks the stand-in's delivery log), so the demo runs the
        role: the dashboard's "Check again" is read and acted on, as in production."""
        return {
            "INDEXIUM_GITHUB_APP_ID": str(self.gh.app_id),
            "INDEXIUM_GITHUB_APP_PRIVATE_KEY": self._app_key,
            "INDEXIUM_GITHUB_API_URL": self.gh.api_url,
        }

    def send_all(self, webhook_url: str) -> int:
        """What GitHub sends when the demo author installs the App (``installation created``,
        one per installation), then one signed ``release published`` webhook per demo release,
        oldest first; how many were accepted."""

        async def send() -> int:
            sent = 0
            for inst in list(self.gh.state.installations.values()):
                payload = self.gh.installation_payload(inst, "created")
                sent += await self.gh.send_webhook(webhook_url, "installation", payload, self.secret) == 202
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
