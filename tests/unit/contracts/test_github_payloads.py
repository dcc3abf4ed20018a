"""Every real GitHub example payload decodes with our contracts, and events round-trip."""

import json
from pathlib import Path

import msgspec
import pytest

from indexium_contracts import github, ingest

PAYLOADS = Path(__file__).resolve().parents[3].parent / "shared" / "github-payloads"
EXAMPLES = sorted(p for p in PAYLOADS.glob("*.json") if not p.name.startswith("schema."))


def event_of(path: Path) -> str:
    return path.name.split(".", 1)[0]


def with_asset(payload: dict) -> dict:
    """Release examples carry no assets: add one shaped like schema.release-asset.json."""
    schema = json.loads((PAYLOADS / "schema.release-asset.json").read_text())
    asset = {
        "url": "https://api.github.com/repos/o/r/releases/assets/1",
        "browser_download_url": "https://github.com/o/r/releases/download/1.0/mod-1.0.jar",
        "id": 1, "node_id": "RA_1", "name": "mod-1.0.jar", "label": None, "state": "uploaded",
        "content_type": "application/java-archive", "size": 1234, "download_count": 7,
        "created_at": "2025-07-01T00:00:00Z", "updated_at": "2025-07-01T00:00:00Z",
        "uploader": None, "digest": "sha256:" + "ab" * 32,
    }
    assert set(schema["required"]) <= set(asset)
    payload = json.loads(json.dumps(payload))
    payload["release"]["assets"] = [asset]
    return payload


def test_examples_are_present():
    assert len(EXAMPLES) >= 40, PAYLOADS


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_decodes(path):
    body = path.read_bytes()
    decoded = github.decode_webhook(event_of(path), body)
    assert decoded is not None
    assert isinstance(decoded, github.WEBHOOK_TYPES[event_of(path)])


@pytest.mark.parametrize("path", [p for p in EXAMPLES if event_of(p) == "release"], ids=lambda p: p.name)
def test_release_event_round_trips_with_assets(path):
    payload = with_asset(json.loads(path.read_bytes()))
    hook = github.decode_webhook("release", json.dumps(payload).encode())
    event = ingest.ReleaseReceived(delivery_id="d-1", received_at="2025-07-01T00:00:00+00:00", webhook=hook)
    back = ingest.decoder.decode(ingest.encoder.encode(event))
    assert back == event
    asset = back.webhook.release.assets[0]
    assert asset.digest == "sha256:" + "ab" * 32
    assert asset.browser_download_url.endswith("mod-1.0.jar")
    assert back.webhook.repository.full_name == payload["repository"]["full_name"]


def test_unknown_fields_are_ignored_and_missing_required_fields_are_errors():
    ok = github.decode_webhook("release", json.dumps({
        "action": "published", "new_field": 1,
        "release": {"id": 1, "tag_name": "v1", "future": {"x": 1}},
        "repository": {"id": 2, "name": "r", "full_name": "o/r", "owner": {"id": 3, "login": "o"}},
    }).encode())
    assert ok.release.tag_name == "v1"
    with pytest.raises(msgspec.ValidationError):
        github.decode_webhook("release", b'{"action": "published", "release": {"id": 1}}')
    assert github.decode_webhook("star", b"{}") is None


def test_a_repository_page_is_its_html_url_only_when_that_is_its_page():
    from indexium_contracts.github import repository_page

    assert repository_page("https://github.com/Alice/Lumen/", "alice/lumen") == "https://github.com/Alice/Lumen"
    assert repository_page("http://127.0.0.1:8085/alice/lumen", "alice/lumen") == "http://127.0.0.1:8085/alice/lumen"
    for hostile in ("javascript:alert(1)//alice/lumen", "https://x@github.com/alice/lumen", "https://github.com/mallory/lumen",
                    "https://github.com/alice/lumen?x=1", "https://github.com/alice/lumen#f", "http://[::1/alice/lumen",
                    "https://github.com:x/alice/lumen", "//github.com/alice/lumen", "https:\\\\github.com/alice/lumen",
                    "https://github.com\\@evil.example/alice/lumen", "https://git\thub.com/alice/lumen",
                    "https://github.com/" + "a" * 600, None, ""):
        assert repository_page(hostile, "alice/lumen") is None, hostile
    # The one URL policy trims what every URL parser trims at the ends.
    assert repository_page("https://github.com/alice/lumen\n", "alice/lumen") == "https://github.com/alice/lumen"
