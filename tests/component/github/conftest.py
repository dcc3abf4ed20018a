"""FakeGitHub with an App key, and a GitHubClient on it whose clock is the fake's.

``FakeSleep`` advances the fake's clock instead of sleeping, so waiting for a rate-limit
reset an hour away takes no time and the test can read how long the client waited.
"""

from __future__ import annotations

import aiohttp
import pytest

from indexium_devstack.fakegithub import FakeGitHub
from indexium_github import AppConfig, GitHubClient


class FakeSleep:
    def __init__(self, gh: FakeGitHub):
        self.gh, self.waits = gh, []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.gh.advance(seconds)


@pytest.fixture
async def gh():
    async with FakeGitHub() as server:
        _, server.test_private_key = server.generate_app_key()
        yield server


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
def fake_sleep(gh):
    return FakeSleep(gh)


@pytest.fixture
def make_client(gh, session, fake_sleep):
    def make(**kw) -> GitHubClient:
        config = AppConfig(app_id=gh.app_id, private_key=gh.test_private_key, api_url=gh.api_url)
        options = {"clock": gh.now, "sleep": fake_sleep, "mutation_interval_s": 0.0, **kw}
        return GitHubClient(session, config, **options)
    return make
