"""ReleaseWatch.notice: which published releases the GitHub role schedules to read again. A
release that already carries its jars needs no re-read, even when it arrives before the App's
installation event is applied (the demo sends both at once; two consumers take them)."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import structlog.testing

from indexium_contracts import github, ingest
from indexium_devstack import payloads
from indexium_indexer.github.metrics import GithubMetrics
from indexium_indexer.github.watch import ReleaseWatch
from indexium_platform.metrics import ServiceMetrics

ASSET = {"id": 91, "name": "lumen-1.0.0.jar", "label": None, "content_type": "application/java-archive",
         "state": "uploaded", "size": 1234, "download_count": 0, "created_at": "2026-12-04T10:00:00Z",
         "updated_at": "2026-12-04T10:00:00Z",
         "browser_download_url": "https://github.com/o/r/releases/download/v1/lumen-1.0.0.jar"}


def _event(assets: list[dict]) -> ingest.ReleaseReceived:
    raw = payloads.load_payload("release.published")
    raw["release"]["assets"] = assets
    hook = msgspec.convert(raw, github.ReleaseWebhook)
    return ingest.ReleaseReceived(delivery_id="d-1", received_at=datetime.now(UTC).isoformat(), webhook=hook)


async def test_a_release_with_its_jars_is_complete_before_the_installation_is_known(pool):
    watch = ReleaseWatch(pool, (15.0, 60.0), GithubMetrics(ServiceMetrics("github-watch-test")), outage_retry_s=1)
    with structlog.testing.capture_logs() as logs:
        assert await watch.notice(_event([ASSET])) == "complete"
        # A bare release of a repository the App does not know yet cannot be read as the App.
        assert await watch.notice(_event([])) == "no_installation"
    assert [e["event"] for e in logs] == ["release_reread_impossible"]
