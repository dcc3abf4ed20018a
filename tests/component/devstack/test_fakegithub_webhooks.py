"""Sending webhooks like GitHub's Hookshot."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid

import pytest

from indexium_devstack.fakegithub import sign

pytestmark = pytest.mark.component


def test_sign_matches_github_docs_vector():
    # Example from GitHub's "Validating webhook deliveries" docs.
    assert (
        sign(b"Hello, World!", "It's a Secret to Everybody")
        == "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )


async def test_send_webhook_posts_with_github_headers(gh, receiver):
    repo = gh.add_repo("alice/mod")
    rel = gh.add_release(repo, "v1", assets=[("a.jar", b"PK")])
    payload = gh.release_payload(rel)
    receiver.status = 204
    status = await gh.send_webhook(receiver.url, "release", payload, "topsecret")
    assert status == 204
    headers, body = receiver.received[0]
    assert json.loads(body) == payload
    assert headers["Content-Type"] == "application/json"
    assert headers["X-GitHub-Event"] == "release"
    uuid.UUID(headers["X-GitHub-Delivery"])
    assert headers["X-GitHub-Hook-ID"].isdigit()
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    assert headers["X-Hub-Signature-256"] == (
        "sha256=" + hmac.new(b"topsecret", body, hashlib.sha256).hexdigest()
    )
    d = gh.deliveries[-1]
    assert d.guid == headers["X-GitHub-Delivery"] and d.status_code == 204 and d.status == "OK"
    assert d.event == "release" and d.action == "published" and d.repository_id == repo.id


async def test_send_webhook_with_given_delivery_id_and_raw_bytes(gh, receiver):
    raw = b'{"zen":"Keep it logically awesome.","hook_id":1}'
    await gh.send_webhook(receiver.url, "ping", raw, "k", delivery_id="abc-123")
    headers, body = receiver.received[0]
    assert body == raw and headers["X-GitHub-Delivery"] == "abc-123"
    assert headers["X-Hub-Signature-256"] == sign(raw, "k")


async def test_unreachable_receiver_is_recorded_as_failed(gh):
    status = await gh.send_webhook("http://127.0.0.1:9/hook", "ping", {"zen": "x"}, "k")
    assert status == 0
    assert gh.deliveries[-1].status == "failed to connect"


async def test_other_event_payloads(gh):
    gh.generate_app_key(app_id=4242)
    repos = [gh.add_repo("alice/a"), gh.add_repo("alice/b")]
    inst = gh.add_installation(repos[:1])
    created = gh.installation_payload(inst)
    assert created["action"] == "created" and created["installation"]["app_id"] == 4242
    assert [r["full_name"] for r in created["repositories"]] == ["alice/a"]
    added = gh.installation_repositories_payload(inst, added=[repos[1]])
    assert added["action"] == "added" and added["repositories_added"][0]["id"] == repos[1].id
    assert gh.installation_repositories_payload(inst, removed=["alice/a"])["action"] == "removed"
