"""GitHub App flows: JWT → installation token → API, hook deliveries and redelivery."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time

import jwt
import pytest
from yarl import URL

from indexium_devstack.fakegithub import generate_rsa_pem, make_app_jwt

pytestmark = pytest.mark.component


@pytest.fixture
async def app(gh):
    app_id, pem = gh.generate_app_key()
    return app_id, pem


def _bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"}


async def test_jwt_to_installation_token_to_repositories(gh, http, app):
    app_id, pem = app
    repos = [gh.add_repo(f"alice/mod{i}", private=(i == 0)) for i in range(5)]
    inst = gh.add_installation(repos)
    gh.token_lifetime = 1800
    jwt_token = make_app_jwt(app_id, pem)
    url = f"{gh.api_url}/app/installations/{inst.id}/access_tokens"
    async with http.post(url, headers=_bearer(jwt_token)) as r:
        assert r.status == 201
        body = await r.json()
    token = body["token"]
    assert token.startswith("ghs_") and len(token) == 40
    expires = time.mktime(time.strptime(body["expires_at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(expires - (time.time() + 1800)) < 5
    assert body["permissions"]["contents"] == "read"

    names, next_url = [], f"{gh.api_url}/installation/repositories?per_page=2"
    while next_url:
        async with http.get(next_url, headers={"Authorization": f"token {token}"}) as r:
            assert r.status == 200
            page = await r.json()
            m = re.search(r'<([^>]+)>; rel="next"', r.headers.get("Link", ""))
        assert page["total_count"] == 5
        names += [x["full_name"] for x in page["repositories"]]
        next_url = m.group(1) if m else None
    assert names == [f"alice/mod{i}" for i in range(5)]

    async with http.get(f"{gh.api_url}/repos/alice/mod0", headers=_bearer(token)) as r:
        assert r.status == 200 and (await r.json())["private"] is True
    async with http.get(f"{gh.api_url}/repos/alice/mod0") as r:
        assert r.status == 404  # private repository, anonymous


async def test_bad_and_expired_tokens_are_401(gh, http, app):
    inst = gh.add_installation([gh.add_repo("alice/mod")])
    for headers in (
        {"Authorization": "token ghs_notarealtoken000000000000000000000000"},
        {"Authorization": "Basic Zm9vOmJhcg=="},
    ):
        async with http.get(f"{gh.api_url}/installation/repositories", headers=headers) as r:
            assert r.status == 401
            body = await r.json()
            assert body["message"] == "Bad credentials"
            assert body["documentation_url"].startswith("https://docs.github.com")
    async with http.get(f"{gh.api_url}/installation/repositories") as r:
        assert r.status == 401  # needs a token
    # an invalid token is rejected even on public endpoints, as on GitHub
    async with http.get(
        f"{gh.api_url}/repos/alice/mod", headers={"Authorization": "token ghs_bogus"}
    ) as r:
        assert r.status == 401
    token = gh.issue_token(inst, lifetime=60)
    async with http.get(f"{gh.api_url}/installation/repositories", headers=_bearer(token)) as r:
        assert r.status == 200
    gh.advance(61)
    async with http.get(f"{gh.api_url}/installation/repositories", headers=_bearer(token)) as r:
        assert r.status == 401 and (await r.json())["message"] == "Bad credentials"


async def test_jwt_validation(gh, http, app):
    app_id, pem = app
    inst = gh.add_installation([gh.add_repo("alice/mod")])
    url = f"{gh.api_url}/app/installations/{inst.id}/access_tokens"
    now = int(time.time())
    other_pem, _ = generate_rsa_pem()
    bad = {
        "missing": None,
        "wrong key": make_app_jwt(app_id, other_pem),
        "wrong issuer": make_app_jwt(999999, pem),
        "too long": jwt.encode({"iat": now, "exp": now + 3600, "iss": str(app_id)}, pem, "RS256"),
        "expired": jwt.encode({"iat": now - 1200, "exp": now - 600, "iss": str(app_id)}, pem, "RS256"),
        "HS256": jwt.encode({"iat": now, "exp": now + 60, "iss": str(app_id)}, "x" * 32, "HS256"),
        "garbage": "not.a.jwt",
    }
    for label, token in bad.items():
        headers = _bearer(token) if token else {}
        async with http.post(url, headers=headers) as r:
            assert r.status == 401, label
            assert "message" in await r.json()
    async with http.post(url, headers=_bearer(make_app_jwt(app_id, pem))) as r:
        assert r.status == 201
    async with http.post(
        f"{gh.api_url}/app/installations/1/access_tokens", headers=_bearer(make_app_jwt(app_id, pem))
    ) as r:
        assert r.status == 404
    async with http.get(f"{gh.api_url}/app", headers=_bearer(make_app_jwt(app_id, pem))) as r:
        assert (await r.json())["id"] == app_id
    async with http.get(
        f"{gh.api_url}/repos/alice/mod/installation", headers=_bearer(make_app_jwt(app_id, pem))
    ) as r:
        assert (await r.json())["id"] == inst.id


async def test_hook_deliveries_cursor_pagination(gh, http, app):
    app_id, pem = app
    repo = gh.add_repo("alice/mod")
    inst = gh.add_installation([repo])
    rel = gh.add_release(repo, "v1")
    recorded = [
        gh.record_delivery("release", gh.release_payload(rel), status_code=code)
        for code in (200, 500, 202, 0, 200)
    ]
    url = f"{gh.api_url}/app/hook/deliveries?per_page=2"
    seen = []
    while url:
        async with http.get(url, headers=_bearer(make_app_jwt(app_id, pem))) as r:
            assert r.status == 200
            items = await r.json()
            m = re.search(r'<([^>]+)>; rel="next"', r.headers.get("Link", ""))
        seen += items
        if m:
            assert URL(m.group(1)).query["cursor"].startswith("v1_")
        url = m.group(1) if m else None
    assert [d["id"] for d in seen] == [d.id for d in reversed(recorded)]
    first = seen[-1]
    assert set(first) >= {
        "id", "guid", "delivered_at", "redelivery", "duration", "status", "status_code",
        "event", "action", "installation_id", "repository_id",
    }
    assert first["event"] == "release" and first["action"] == "published"
    assert first["installation_id"] == inst.id and first["repository_id"] == repo.id
    assert [d["status"] for d in seen][::-1][:2] == ["OK", "Invalid HTTP Response: 500"]
    async with http.get(f"{gh.api_url}/app/hook/deliveries") as r:
        assert r.status == 401  # JWT required


async def test_redelivery_attempt_resends_with_valid_signature(gh, http, app, receiver):
    app_id, pem = app
    secret = "s3cr3t"
    gh.configure_webhook(receiver.url, secret)
    repo = gh.add_repo("alice/mod")
    gh.add_installation([repo])
    rel = gh.add_release(repo, "v1", assets=[("a.jar", b"PK")])
    original = gh.record_delivery("release", gh.release_payload(rel), status_code=500)

    url = f"{gh.api_url}/app/hook/deliveries/{original.id}/attempts"
    async with http.post(url, headers=_bearer(make_app_jwt(app_id, pem))) as r:
        assert r.status == 202
    await gh.flush()

    assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    assert body == original.body
    assert headers["X-GitHub-Event"] == "release"
    assert headers["X-GitHub-Delivery"] == original.guid
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-Hub-Signature-256"], expected)
    assert headers["User-Agent"].startswith("GitHub-Hookshot/")
    assert json.loads(body)["release"]["assets"][0]["name"] == "a.jar"

    async with http.get(
        f"{gh.api_url}/app/hook/deliveries", headers=_bearer(make_app_jwt(app_id, pem))
    ) as r:
        items = await r.json()
    assert items[0]["redelivery"] is True and items[0]["guid"] == original.guid
    assert items[0]["status_code"] == 202 and items[0]["id"] != original.id
    async with http.get(
        f"{gh.api_url}/app/hook/deliveries/{items[0]['id']}",
        headers=_bearer(make_app_jwt(app_id, pem)),
    ) as r:
        detail = await r.json()
    assert detail["request"]["payload"]["action"] == "published"
    async with http.post(
        f"{gh.api_url}/app/hook/deliveries/1/attempts", headers=_bearer(make_app_jwt(app_id, pem))
    ) as r:
        assert r.status == 404


async def test_token_scoped_to_repositories_and_redelivery_without_receiver(gh, http, app):
    app_id, pem = app
    inst = gh.add_installation([gh.add_repo("alice/a", private=True), gh.add_repo("alice/b", private=True)])
    async with http.post(
        f"{gh.api_url}/app/installations/{inst.id}/access_tokens",
        headers=_bearer(make_app_jwt(app_id, pem)),
        json={"repositories": ["b"]},
    ) as r:
        assert r.status == 201
        body = await r.json()
    assert [x["full_name"] for x in body["repositories"]] == ["alice/b"]
    headers = {"Authorization": f"token {body['token']}"}
    async with http.get(f"{gh.api_url}/installation/repositories", headers=headers) as r:
        assert (await r.json())["total_count"] == 1
    async with http.get(f"{gh.api_url}/repos/alice/a", headers=headers) as r:
        assert r.status == 404
    async with http.get(f"{gh.api_url}/repos/alice/b", headers=headers) as r:
        assert r.status == 200

    d = gh.record_delivery("ping", {"zen": "Design for failure."}, status_code=200)
    async with http.post(
        f"{gh.api_url}/app/hook/deliveries/{d.id}/attempts", headers=_bearer(make_app_jwt(app_id, pem))
    ) as r:
        assert r.status == 202
    await gh.flush()
    assert gh.deliveries[-1].redelivery and gh.deliveries[-1].status_code == 0
