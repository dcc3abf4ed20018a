"""REST API of the fake: shapes, pagination, contents, ETags/304, rate limits."""

from __future__ import annotations

import base64
import re
import time

import pytest
from yarl import URL

from indexium_devstack import payloads
from indexium_devstack.fakegithub import FakeGitHub

pytestmark = pytest.mark.component

needs_examples = pytest.mark.skipif(
    not payloads.available(), reason="shared/github-payloads not present"
)


def _links(header: str | None) -> dict[str, URL]:
    out = {}
    for part in (header or "").split(","):
        m = re.match(r'\s*<([^>]+)>;\s*rel="(\w+)"', part)
        if m:
            out[m.group(2)] = URL(m.group(1))
    return out


def _keys(d):
    """Recursive key structure (dict keys; first element of lists)."""
    if isinstance(d, dict):
        return {k: _keys(v) for k, v in d.items()}
    if isinstance(d, list) and d:
        return [_keys(d[0])]
    return None


def _missing(expected, actual, path=""):
    """Keys present in the real example but absent from ours."""
    out = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k, v in expected.items():
            if k not in actual:
                out.append(path + k)
            else:
                out += _missing(v, actual[k], f"{path}{k}.")
    return out


@needs_examples
async def test_release_payload_has_the_shape_of_the_real_example(gh):
    repo = gh.add_repo("Codertocat", "Hello-World", description="hi", topics=["minecraft-mod"])
    inst = gh.add_installation([repo])
    rel = gh.add_release(repo, "0.0.1", assets=[("mod.jar", b"PK\x05\x06" + b"\0" * 18)])
    ours = gh.release_payload(rel)
    real = payloads.load_payload("release.published")
    assert _missing(_keys(real), _keys(ours)) == []
    assert set(ours) == set(real) | {"installation"}
    # GitHub added "immutable" to every release in 2025 (immutable releases), after the example
    # was captured.
    assert set(ours["release"]) == set(real["release"]) | {"immutable"}
    assert set(ours["repository"]) == set(real["repository"])
    assert ours["installation"]["id"] == inst.id and ours["installation"]["node_id"]
    asset = ours["release"]["assets"][0]
    assert payloads.asset_schema_problems(asset) == []
    assert asset["digest"] == "sha256:" + rel.assets[0].sha256
    assert asset["size"] == 22 and asset["state"] == "uploaded"
    assert ours["repository"]["topics"] == ["minecraft-mod"]
    assert ours["repository"]["owner"]["login"] == "Codertocat"
    no_inst = gh.release_payload(rel, installation_id=None)
    assert "installation" not in no_inst


@needs_examples
async def test_rest_shapes_match_the_webhook_shapes(gh, http):
    repo = gh.add_repo("alice/lumen", description="Lanterns")
    rel = gh.add_release(repo, "v1", assets=[("a.jar", b"x" * 10)])
    async with http.get(f"{gh.api_url}/repos/alice/lumen") as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("application/json")
        body = await r.json()
    real = payloads.load_payload("release.published")
    assert _missing(_keys(real["repository"]), _keys(body)) == []
    async with http.get(f"{gh.api_url}/repos/alice/lumen/releases/{rel.id}") as r:
        body = await r.json()
    assert body["id"] == rel.id and body["assets"][0]["name"] == "a.jar"
    assert _missing(_keys(real["release"]), _keys(body)) == []


async def test_releases_pagination_link_headers(gh, http):
    repo = gh.add_repo("alice/many")
    base = time.time() - 10_000
    for i in range(250):
        gh.add_release(repo, f"v{i}", created_at=base + i)
    url = f"{gh.api_url}/repos/alice/many/releases?per_page=100"
    seen, pages = [], 0
    while url:
        async with http.get(url) as r:
            assert r.status == 200
            items = await r.json()
            links = _links(r.headers.get("Link"))
        pages += 1
        seen += [it["tag_name"] for it in items]
        if pages == 1:
            assert set(links) == {"next", "last"}
            assert links["next"].query["page"] == "2" and links["last"].query["page"] == "3"
            assert links["next"].query["per_page"] == "100"
            assert f"{links['next'].host}:{links['next'].port}" == gh.github_host
        if pages == 2:
            assert set(links) == {"prev", "next", "last", "first"}
        if pages == 3:
            assert len(items) == 50 and "next" not in links and links["prev"].query["page"] == "2"
        url = str(links["next"]) if "next" in links else None
    assert pages == 3
    assert seen == [f"v{i}" for i in range(249, -1, -1)]  # newest first, no duplicates
    async with http.get(f"{gh.api_url}/repos/alice/many/releases") as r:
        assert len(await r.json()) == 30  # GitHub's default per_page
    async with http.get(f"{gh.api_url}/repos/alice/many/releases?per_page=100&page=4") as r:
        assert await r.json() == []


async def test_release_lookups_and_drafts(gh, http):
    repo = gh.add_repo("alice/mod")
    gh.add_release(repo, "v1.0", created_at=time.time() - 300)
    gh.add_release(repo, "v1.1", created_at=time.time() - 200)
    gh.add_release(repo, "v2.0-beta", prerelease=True, created_at=time.time() - 100)
    draft = gh.add_release(repo, "v3.0", draft=True)
    api = gh.api_url
    async with http.get(f"{api}/repos/alice/mod/releases/latest") as r:
        assert (await r.json())["tag_name"] == "v1.1"
    async with http.get(f"{api}/repos/alice/mod/releases/tags/v2.0-beta") as r:
        body = await r.json()
        assert body["prerelease"] is True
    async with http.get(f"{api}/repos/alice/mod/releases") as r:
        assert [x["tag_name"] for x in await r.json()] == ["v2.0-beta", "v1.1", "v1.0"]
    async with http.get(f"{api}/repos/alice/mod/releases/{draft.id}") as r:
        assert r.status == 404  # drafts are invisible without push access
    token = gh.issue_token(gh.add_installation([repo]))
    async with http.get(
        f"{api}/repos/alice/mod/releases/{draft.id}", headers={"Authorization": f"Bearer {token}"}
    ) as r:
        assert r.status == 200 and (await r.json())["draft"] is True
    stranger = gh.issue_token(gh.add_installation([gh.add_repo("carol/other")]))
    async with http.get(
        f"{api}/repos/alice/mod/releases/{draft.id}", headers={"Authorization": f"token {stranger}"}
    ) as r:
        assert r.status == 404  # a token for another installation cannot see the draft
    async with http.get(f"{api}/repos/alice/nope") as r:
        assert r.status == 404
        assert (await r.json())["message"] == "Not Found"


async def test_asset_api_json_and_octet_stream(gh, http):
    repo = gh.add_repo("alice/mod")
    asset = gh.add_release(repo, "v1", assets=[("m.jar", b"jarbytes")]).assets[0]
    url = f"{gh.api_url}/repos/alice/mod/releases/assets/{asset.id}"
    async with http.get(url) as r:
        body = await r.json()
        assert body["browser_download_url"] == gh.download_url(asset)
        assert body["url"] == url
    async with http.get(url, headers={"Accept": "application/octet-stream"}, allow_redirects=False) as r:
        assert r.status == 302
        assert URL(r.headers["Location"]).port == URL(gh.cdn_url).port
    async with http.get(url, headers={"Accept": "application/octet-stream"}) as r:
        assert await r.read() == b"jarbytes"


async def test_contents(gh, http):
    repo = gh.add_repo("alice/mod", default_branch="main")
    gh.set_file(repo, ".indexium.json", b'{"loader":"fabric"}')
    gh.set_file(repo, ".indexium.json", b'{"loader":"forge"}', ref="v2")
    base = f"{gh.api_url}/repos/alice/mod/contents/.indexium.json"
    async with http.get(base) as r:
        body = await r.json()
        assert body["type"] == "file" and body["encoding"] == "base64"
        assert base64.b64decode(body["content"]) == b'{"loader":"fabric"}'
        assert body["size"] == 19 and len(body["sha"]) == 40
    async with http.get(base + "?ref=v2") as r:
        assert base64.b64decode((await r.json())["content"]) == b'{"loader":"forge"}'
    async with http.get(base + "?ref=v1") as r:
        assert base64.b64decode((await r.json())["content"]) == b'{"loader":"fabric"}'
    async with http.get(base, headers={"Accept": "application/vnd.github.raw+json"}) as r:
        assert await r.read() == b'{"loader":"fabric"}'
    async with http.get(f"{gh.api_url}/repos/alice/mod/contents/missing.txt") as r:
        assert r.status == 404


async def test_git_trees(gh, http):
    repo = gh.add_repo("alice/mod", default_branch="main")
    api = f"{gh.api_url}/repos/alice/mod/git/trees"
    async with http.get(f"{api}/main?recursive=1") as r:
        assert r.status == 409 and (await r.json())["message"] == "Git Repository is empty."
    gh.set_file(repo, "src/main/resources/fabric.mod.json", b"{}")
    gh.set_file(repo, "README.md", b"hi")
    gh.set_file(repo, "forge/build.gradle", b"", ref="dev")
    async with http.get(f"{api}/main?recursive=1") as r:
        body = await r.json()
    assert body["truncated"] is False and len(body["sha"]) == 40
    assert [(e["path"], e["type"]) for e in body["tree"]] == [
        ("src", "tree"), ("src/main", "tree"), ("src/main/resources", "tree"),
        ("README.md", "blob"), ("src/main/resources/fabric.mod.json", "blob")]
    async with http.get(f"{api}/main") as r:  # not recursive: the top level only
        assert [e["path"] for e in (await r.json())["tree"]] == ["src", "README.md"]
    async with http.get(f"{api}/dev?recursive=1") as r:
        assert "forge/build.gradle" in [e["path"] for e in (await r.json())["tree"]]
    async with http.get(f"{api}/nope?recursive=1") as r:
        assert r.status == 404
    repo.tree_truncated = True
    async with http.get(f"{api}/main?recursive=1") as r:
        assert (await r.json())["truncated"] is True


async def test_rate_limit_headers_exhaustion_and_reset(gh, http):
    gh.add_repo("alice/mod")
    url = f"{gh.api_url}/repos/alice/mod"
    gh.set_rate_limit(60, remaining=2, reset_in_seconds=120)
    expected_reset = int(time.time()) + 120
    for remaining in (1, 0):
        async with http.get(url) as r:
            assert r.status == 200
            assert r.headers["X-RateLimit-Limit"] == "60"
            assert r.headers["X-RateLimit-Remaining"] == str(remaining)
            assert r.headers["X-RateLimit-Used"] == str(60 - remaining)
            assert r.headers["X-RateLimit-Resource"] == "core"
            assert abs(int(r.headers["X-RateLimit-Reset"]) - expected_reset) <= 2
    async with http.get(url) as r:
        assert r.status == 403
        body = await r.json()
        assert body["message"].startswith("API rate limit exceeded")
        assert "documentation_url" in body
        assert r.headers["X-RateLimit-Remaining"] == "0"
    async with http.get(f"{gh.api_url}/rate_limit") as r:  # free, like GitHub's
        assert (await r.json())["resources"]["core"]["remaining"] == 0
    gh.advance(121)
    async with http.get(url) as r:
        assert r.status == 200
        assert r.headers["X-RateLimit-Remaining"] == "59"
    gh.set_rate_limit(10, remaining=0, reset_in_seconds=60, status=429)
    async with http.get(url) as r:
        assert r.status == 429


async def test_conditional_request_304_does_not_count(gh, http):
    repo = gh.add_repo("alice/mod")
    gh.add_release(repo, "v1")
    url = f"{gh.api_url}/repos/alice/mod/releases"
    async with http.get(url) as r:
        etag = r.headers["ETag"]
        remaining = int(r.headers["X-RateLimit-Remaining"])
    for _ in range(3):
        async with http.get(url, headers={"If-None-Match": etag}) as r:
            assert r.status == 304
            assert r.headers["ETag"] == etag
            assert int(r.headers["X-RateLimit-Remaining"]) == remaining
            assert await r.read() == b""
    gh.add_release(repo, "v2")  # representation changed → 200 with a new ETag, counted
    async with http.get(url, headers={"If-None-Match": etag}) as r:
        assert r.status == 200 and r.headers["ETag"] != etag
        assert int(r.headers["X-RateLimit-Remaining"]) == remaining - 1


async def test_a_release_published_bare_gets_its_asset_later_and_its_304s_end(gh, http):
    """As release tools do on GitHub: publish with no assets, upload afterwards. Until the
    upload the release answers 304 to its ETag; the upload changes it. An immutable release's
    assets are final."""
    repo = gh.add_repo("alice/mod")
    rel = gh.add_release(repo, "v1")
    assert gh.release_payload(rel)["release"]["assets"] == []
    url = f"{gh.api_url}/repos/alice/mod/releases/{rel.id}"
    async with http.get(url) as r:
        etag, body = r.headers["ETag"], await r.json()
    assert body["assets"] == [] and body["immutable"] is False
    async with http.get(url, headers={"If-None-Match": etag}) as r:
        assert r.status == 304
    gh.add_asset(rel, "mod-1.0.jar", b"PK\x05\x06" + bytes(18))
    async with http.get(url, headers={"If-None-Match": etag}) as r:
        assert r.status == 200 and r.headers["ETag"] != etag
        assert [a["name"] for a in (await r.json())["assets"]] == ["mod-1.0.jar"]
    final = gh.add_release(repo, "v2", [("mod-2.0.jar", b"PK")], immutable=True)
    async with http.get(f"{gh.api_url}/repos/alice/mod/releases/{final.id}") as r:
        assert (await r.json())["immutable"] is True
    with pytest.raises(ValueError, match="immutable"):
        gh.add_asset(final, "late.jar", b"PK")


async def test_secondary_limit_and_api_faults(gh, http):
    gh.add_repo("alice/mod")
    url = f"{gh.api_url}/repos/alice/mod"
    gh.secondary_limit_next(2, retry_after=30)
    for _ in range(2):
        async with http.get(url) as r:
            assert r.status == 403
            assert r.headers["Retry-After"] == "30"
            assert "secondary rate limit" in (await r.json())["message"]
    async with http.get(url) as r:
        assert r.status == 200
    gh.fail_next(None, status=502, count=1, where="api", retry_after=1)
    async with http.get(url) as r:
        assert r.status == 502 and r.headers["Retry-After"] == "1"
    async with http.get(url) as r:
        assert r.status == 200


async def test_api_call_counters_and_unknown_routes(gh, http):
    gh.add_repo("alice/mod")
    for _ in range(3):
        async with http.get(f"{gh.api_url}/repos/alice/mod") as r:
            assert r.status == 200
    async with http.get(f"{gh.api_url}/repos/alice/mod/releases") as r:
        assert r.status == 200
    async with http.get(f"{gh.api_url}/no/such/endpoint/here") as r:
        assert r.status == 404
        assert await r.json() == {
            "message": "Not Found",
            "documentation_url": "https://docs.github.com/rest",
            "status": "404",
        }
        assert "X-RateLimit-Remaining" in r.headers
    assert gh.api_calls["GET /repos/{owner}/{repo}"] == 3
    assert gh.api_calls["GET /repos/{owner}/{repo}/releases"] == 1


async def test_fixed_ports_and_lifecycle():
    gh = FakeGitHub()
    await gh.start()
    try:
        assert gh.github_host.startswith("127.0.0.1:") and gh.cdn_host.startswith("localhost:")
        assert gh.api_url == gh.base_url == f"http://{gh.github_host}"
    finally:
        await gh.close()
