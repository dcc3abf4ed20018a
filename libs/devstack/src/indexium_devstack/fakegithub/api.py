"""GitHub REST API routes on the github host (base path ``/``, like api.github.com)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import uuid
from typing import TYPE_CHECKING, Any, Callable, Sequence

from aiohttp import web

from .appauth import DOCS_APP_AUTH, AuthError
from .models import Repo, Token, iso
from .ratelimit import DOCS_PRIMARY, DOCS_SECONDARY
from .render import (
    asset_json,
    installation_json,
    release_json,
    repo_json,
)
from .webhooks import delivery_detail, delivery_summary

if TYPE_CHECKING:  # pragma: no cover
    from .server import FakeGitHub

DOCS = "https://docs.github.com/rest"
JSON_CT = "application/json; charset=utf-8"


def json_response(data: Any, status: int = 200, headers: dict | None = None) -> web.Response:
    body = json.dumps(data, ensure_ascii=False, indent=2).encode()
    resp = web.Response(status=status, body=body, headers=headers)
    resp.headers["Content-Type"] = JSON_CT
    return resp


def error(status: int, message: str, docs: str = DOCS, headers: dict | None = None) -> web.Response:
    return json_response(
        {"message": message, "documentation_url": docs, "status": str(status)},
        status=status,
        headers=headers,
    )


def not_found() -> web.Response:
    return error(404, "Not Found", "https://docs.github.com/rest")


def kind(tag: str) -> Callable:
    """Mark a handler: 'api' (rate-limited, counted), 'download' or 'web' (not API routes)."""

    def deco(fn):
        fn.fake_kind = tag
        return fn

    return deco


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def paginate(
    request: web.Request, items: Sequence, default: int = 30, maximum: int = 100
) -> tuple[list, dict[str, str]]:
    """Page/per_page pagination with a GitHub-style ``Link`` header."""
    per_page = min(max(_int(request.query.get("per_page"), default), 1), maximum)
    page = max(_int(request.query.get("page"), 1), 1)
    total = len(items)
    last = max((total + per_page - 1) // per_page, 1)
    chunk = list(items[(page - 1) * per_page : page * per_page])
    links = []

    def url(n: int) -> str:
        q = dict(request.query)
        q["per_page"] = str(per_page)
        q["page"] = str(n)
        return str(request.url.with_query(q))

    if page > 1:
        links.append(f'<{url(min(page - 1, last))}>; rel="prev"')
    if page < last:
        links.append(f'<{url(page + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if page > 1:
        links.append(f'<{url(1)}>; rel="first"')
    headers = {"Link": ", ".join(links)} if links else {}
    return chunk, headers


def _etag(body: bytes) -> str:
    return 'W/"' + hashlib.sha256(body).hexdigest()[:40] + '"'


def _etag_matches(header: str, etag: str) -> bool:
    bare = etag.removeprefix("W/")
    for candidate in header.split(","):
        c = candidate.strip()
        if c == "*" or c.removeprefix("W/") == bare:
            return True
    return False


class ApiRoutes:
    def __init__(self, gh: "FakeGitHub") -> None:
        self.gh = gh

    # ---- helpers ------------------------------------------------------------------------
    @property
    def urls(self):
        return self.gh.urls

    def _token(self, request: web.Request) -> Token | None:
        return self.gh.app.token_from_header(request.headers.get("Authorization"))

    def _repo(self, request: web.Request) -> Repo:
        """The repository named in the path, if the caller may see it; else 404."""
        token = self._token(request)
        repo = self.gh.state.find_repo(request.match_info["owner"], request.match_info["repo"])
        if repo is None or not self.gh._token_sees(token, repo):
            raise web.HTTPNotFound()
        return repo

    def _can_push(self, request: web.Request, repo: Repo) -> bool:
        return self.gh._token_has_repo(self._token(request), repo)

    # ---- middleware -----------------------------------------------------------------------
    @web.middleware
    async def middleware(self, request: web.Request, handler) -> web.StreamResponse:
        gh = self.gh
        route_kind = getattr(request.match_info.handler, "fake_kind", "api")
        if route_kind in ("download", "web"):
            return await handler(request)
        resource = request.match_info.route.resource
        template = f"{request.method} {resource.canonical if resource else request.path}"
        gh.api_calls[template] = gh.api_calls.get(template, 0) + 1
        gh.api_log.append((request.method, request.path_qs, template))
        limiter = gh.limiter
        counted = request.path != "/rate_limit"
        extra = {
            "X-GitHub-Request-Id": uuid.uuid4().hex[:20].upper(),
            "X-GitHub-Media-Type": "github.v3; format=json",
            "X-GitHub-Api-Version-Selected": "2022-11-28",
        }

        delay = gh.faults.delay("api")
        if delay:
            await asyncio.sleep(delay)
        fault = gh.faults.take("api", None)
        if fault is not None:
            headers = dict(extra)
            if fault.retry_after is not None:
                headers["Retry-After"] = str(fault.retry_after)
            return error(fault.status, fault.body or "Server Error", headers=headers)
        if counted and limiter.take_secondary():
            headers = {**extra, **limiter.headers(), "Retry-After": str(limiter.secondary_retry_after)}
            return error(
                limiter.secondary_status,
                "You have exceeded a secondary rate limit. Please wait a few minutes before "
                "you try again. If you reach out to GitHub Support for help, please include "
                f"the request ID {extra['X-GitHub-Request-Id']}.",
                DOCS_SECONDARY,
                headers=headers,
            )
        if counted and limiter.exhausted:
            who = self._who(request)
            return error(
                limiter.exceeded_status,
                f"API rate limit exceeded for {who}. (But here's the good news: Authenticated "
                "requests get a higher rate limit. Check out the documentation for more details.)"
                if who.count(".") == 3
                else f"API rate limit exceeded for {who}.",
                DOCS_PRIMARY,
                headers={**extra, **limiter.headers()},
            )

        try:
            resp = await handler(request)
        except AuthError as exc:
            resp = error(exc.status, exc.message, exc.docs)
        except web.HTTPNotFound:
            resp = not_found()
        except web.HTTPMethodNotAllowed:
            resp = error(404, "Not Found")
        except web.HTTPException as exc:
            if exc.status >= 400:
                resp = error(exc.status, exc.reason)
            else:
                raise

        if (
            request.method in ("GET", "HEAD")
            and resp.status == 200
            and isinstance(getattr(resp, "body", None), (bytes, bytearray))
        ):
            etag = _etag(bytes(resp.body))
            resp.headers["ETag"] = etag
            inm = request.headers.get("If-None-Match")
            if inm and _etag_matches(inm, etag):
                headers = {**extra, **limiter.headers(), "ETag": etag}
                for h in ("Link", "Cache-Control", "Vary"):
                    if h in resp.headers:
                        headers[h] = resp.headers[h]
                gh.api_statuses.append((template, 304))
                return web.Response(status=304, headers=headers)
        gh.api_statuses.append((template, resp.status))
        if counted:
            limiter.consume()
        resp.headers.update(extra)
        resp.headers.update(limiter.headers())
        resp.headers.setdefault("Cache-Control", "private, max-age=60, s-maxage=60")
        resp.headers.setdefault("Vary", "Accept, Authorization, Cookie, X-GitHub-OTP")
        return resp

    def _who(self, request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        cred = auth.partition(" ")[2].strip()
        tok = self.gh.state.tokens.get(cred)
        if tok is not None:
            return f"installation ID {tok.installation_id}"
        return request.remote or "127.0.0.1"

    # ---- misc -----------------------------------------------------------------------------
    async def root(self, request: web.Request) -> web.Response:
        api = self.urls.api
        return json_response(
            {
                "current_user_url": f"{api}/user",
                "repository_url": f"{api}/repos/{{owner}}/{{repo}}",
                "rate_limit_url": f"{api}/rate_limit",
            }
        )

    async def rate_limit(self, request: web.Request) -> web.Response:
        self._token(request)
        core = self.gh.limiter.snapshot()
        core.pop("resource")
        return json_response({"resources": {"core": core}, "rate": core})

    # ---- repositories ---------------------------------------------------------------------
    async def get_repo(self, request: web.Request) -> web.Response:
        return json_response(repo_json(self._repo(request), self.urls))

    def _visible_releases(self, request: web.Request, repo: Repo) -> list:
        push = self._can_push(request, repo)
        rels = [r for r in repo.releases if push or not r.draft]
        rels.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return rels

    async def list_releases(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        chunk, headers = paginate(request, self._visible_releases(request, repo))
        return json_response([release_json(r, self.urls) for r in chunk], headers=headers)

    async def latest_release(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        candidates = [
            r for r in repo.releases if not r.draft and not r.prerelease and r.make_latest
        ]
        if not candidates:
            raise web.HTTPNotFound()
        best = max(candidates, key=lambda r: (r.published_at or r.created_at, r.id))
        return json_response(release_json(best, self.urls))

    async def release_by_tag(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        for r in self._visible_releases(request, repo):
            if r.tag_name == request.match_info["tag"] and not r.draft:
                return json_response(release_json(r, self.urls))
        raise web.HTTPNotFound()

    def _release(self, request: web.Request):
        repo = self._repo(request)
        rid = int(request.match_info["release_id"])
        for r in self._visible_releases(request, repo):
            if r.id == rid:
                return r
        raise web.HTTPNotFound()

    async def get_release(self, request: web.Request) -> web.Response:
        return json_response(release_json(self._release(request), self.urls))

    async def release_assets(self, request: web.Request) -> web.Response:
        rel = self._release(request)
        chunk, headers = paginate(request, rel.assets)
        return json_response([asset_json(a, self.urls) for a in chunk], headers=headers)

    async def get_asset(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        aid = int(request.match_info["asset_id"])
        asset = next(
            (a for r in self._visible_releases(request, repo) for a in r.assets if a.id == aid),
            None,
        )
        if asset is None or self.gh.faults.mode(asset.id) == "404":
            raise web.HTTPNotFound()
        accept = request.headers.get("Accept", "")
        if "application/octet-stream" in accept:
            fault = self.gh.faults.take("download", asset.id)
            if fault is not None:
                headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after else None
                return error(fault.status, fault.body or "Server Error", headers=headers)
            return self.gh.cdn._redirect(asset)
        return json_response(asset_json(asset, self.urls))

    async def get_contents(self, request: web.Request) -> web.Response:
        repo = self._repo(request)
        path = request.match_info["path"].strip("/")
        ref = request.query.get("ref") or repo.default_branch
        by_ref = repo.files.get(ref, {})
        content = by_ref[path] if path in by_ref else repo.files.get(None, {}).get(path)
        if content is None:
            raise web.HTTPNotFound()
        return self._file(request, repo, path, ref, content)

    async def get_readme(self, request: web.Request) -> web.Response:
        """``GET /repos/{owner}/{repo}/readme[?ref=]``: the preferred README as GitHub picks it
        (``.github/``, then the root, then ``docs/``; a file named README with any extension),
        as contents JSON (base64) or, under ``Accept: application/vnd.github.raw+json``, the
        bytes; 404 when there is none. The middleware's ETag/304 applies, per representation."""
        repo = self._repo(request)
        ref = request.query.get("ref") or repo.default_branch
        files = {**repo.files.get(None, {}), **repo.files.get(ref, {})}
        for folder in (".github/", "", "docs/"):
            names = sorted((p for p in files if p.startswith(folder) and "/" not in p[len(folder):]
                            and re.fullmatch(r"(?i)readme(\.[a-z0-9]+)?", p[len(folder):])),
                           key=lambda p: (not p.lower().endswith(".md"), p))
            if names:
                return self._file(request, repo, names[0], ref, files[names[0]])
        raise web.HTTPNotFound()

    def _file(self, request: web.Request, repo: Repo, path: str, ref: str, content: bytes) -> web.Response:
        accept = request.headers.get("Accept", "")
        if "application/vnd.github.raw" in accept or "application/vnd.github.v3.raw" in accept:
            return web.Response(body=content, content_type="application/octet-stream")
        sha = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
        api = f"{self.urls.api}/repos/{repo.full_name}/contents/{path}?ref={ref}"
        html = f"{self.urls.web}/{repo.full_name}/blob/{ref}/{path}"
        raw = f"{self.urls.web}/{repo.full_name}/raw/{ref}/{path}"
        git = f"{self.urls.api}/repos/{repo.full_name}/git/blobs/{sha}"
        encoded = base64.encodebytes(content).decode()
        return json_response(
            {
                "name": path.rsplit("/", 1)[-1],
                "path": path,
                "sha": sha,
                "size": len(content),
                "url": api,
                "html_url": html,
                "git_url": git,
                "download_url": raw,
                "type": "file",
                "content": encoded,
                "encoding": "base64",
                "_links": {"self": api, "git": git, "html": html},
            }
        )

    async def get_tree(self, request: web.Request) -> web.Response:
        """``GET /repos/{owner}/{repo}/git/trees/{ref}[?recursive=1]``: the files of a branch
        (404 for a ref that does not exist, 409 for a repository without commits)."""
        repo = self._repo(request)
        ref = request.match_info["ref"]
        if ref != repo.default_branch and ref not in repo.files:
            raise web.HTTPNotFound()
        files = {**repo.files.get(None, {}), **repo.files.get(ref, {})}
        if not files:
            return error(409, "Git Repository is empty.")
        recursive = request.query.get("recursive", "") not in ("", "0", "false")
        dirs = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
        entries = [{"path": d, "mode": "040000", "type": "tree"} for d in dirs]
        for path, content in sorted(files.items()):
            sha = hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()
            entries.append({"path": path, "mode": "100644", "type": "blob", "sha": sha, "size": len(content)})
        if not recursive:
            entries = [e for e in entries if "/" not in e["path"]]
        for e in entries:
            e.setdefault("sha", hashlib.sha1(e["path"].encode()).hexdigest())
            e["url"] = f"{self.urls.api}/repos/{repo.full_name}/git/{e['type']}s/{e['sha']}"
        tree_sha = hashlib.sha1("\n".join(f"{e['path']} {e['sha']}" for e in entries).encode()).hexdigest()
        return json_response({"sha": tree_sha, "url": f"{self.urls.api}/repos/{repo.full_name}/git/trees/{tree_sha}",
                              "tree": entries, "truncated": repo.tree_truncated})

    # ---- GitHub App (JWT) --------------------------------------------------------------------
    def _jwt(self, request: web.Request) -> dict:
        return self.gh.app.verify_jwt(request.headers.get("Authorization"))

    async def get_app(self, request: web.Request) -> web.Response:
        self._jwt(request)
        gh = self.gh
        owner = gh.state.user(gh.app_owner)
        return json_response(
            {
                "id": gh.app.app_id,
                "slug": gh.app.slug,
                "client_id": gh.app.client_id,
                "node_id": f"A_{gh.app.app_id}",
                "owner": self._user(owner),
                "name": gh.app.slug,
                "description": "",
                "external_url": gh.base_url,
                "html_url": f"{gh.base_url}/apps/{gh.app.slug}",
                "created_at": iso(0),
                "updated_at": iso(0),
                "permissions": {"contents": "read", "metadata": "read"},
                "events": ["release", "repository"],
                "installations_count": len(gh.state.installations),
            }
        )

    def _user(self, user):
        from .render import user_json

        return user_json(user, self.urls)

    async def list_installations(self, request: web.Request) -> web.Response:
        self._jwt(request)
        insts = sorted(self.gh.state.installations.values(), key=lambda i: i.id)
        chunk, headers = paginate(request, insts)
        return json_response(
            [installation_json(i, self.gh.app.app_id, self.urls) for i in chunk], headers=headers
        )

    async def get_installation(self, request: web.Request) -> web.Response:
        self._jwt(request)
        inst = self.gh.state.installations.get(int(request.match_info["installation_id"]))
        if inst is None:
            raise web.HTTPNotFound()
        return json_response(installation_json(inst, self.gh.app.app_id, self.urls))

    async def repo_installation(self, request: web.Request) -> web.Response:
        self._jwt(request)
        repo = self.gh.state.find_repo(request.match_info["owner"], request.match_info["repo"])
        inst = self.gh.state.installation_for_repo(repo) if repo else None
        if inst is None:
            raise web.HTTPNotFound()
        return json_response(installation_json(inst, self.gh.app.app_id, self.urls))

    async def create_token(self, request: web.Request) -> web.Response:
        self._jwt(request)
        inst = self.gh.state.installations.get(int(request.match_info["installation_id"]))
        if inst is None:
            raise web.HTTPNotFound()
        if inst.suspended_at is not None:
            return error(403, "This installation has been suspended", DOCS_APP_AUTH)
        repo_ids = None
        if request.can_read_body:
            try:
                body = await request.json()
            except ValueError:
                return error(400, "Problems parsing JSON")
            if isinstance(body, dict):
                if body.get("repository_ids"):
                    repo_ids = [int(x) for x in body["repository_ids"]]
                if body.get("repositories"):
                    names = {str(n).lower() for n in body["repositories"]}
                    repo_ids = (repo_ids or []) + [
                        r.id for r in inst.repos if r.name.lower() in names
                    ]
        tok = self.gh.app.mint_token(inst.id, repository_ids=repo_ids)
        repos = [r for r in inst.repos if repo_ids is None or r.id in repo_ids]
        out = {
            "token": tok.token,
            "expires_at": iso(tok.expires_at),
            "permissions": dict(inst.permissions),
            "repository_selection": inst.repository_selection,
        }
        if repo_ids is not None:
            out["repositories"] = [repo_json(r, self.urls) for r in repos]
        return json_response(out, status=201)

    # ---- installation token -------------------------------------------------------------------
    async def installation_repositories(self, request: web.Request) -> web.Response:
        token = self._token(request)
        if token is None:
            raise AuthError("Requires authentication")
        inst = self.gh.state.installations[token.installation_id]
        repos = [
            r for r in inst.repos if token.repository_ids is None or r.id in token.repository_ids
        ]
        chunk, headers = paginate(request, repos)
        return json_response(
            {
                "total_count": len(repos),
                "repository_selection": inst.repository_selection,
                "repositories": [repo_json(r, self.urls) for r in chunk],
            },
            headers=headers,
        )

    async def revoke_token(self, request: web.Request) -> web.Response:
        token = self._token(request)
        if token is None:
            raise AuthError("Requires authentication")
        self.gh.state.tokens.pop(token.token, None)
        return web.Response(status=204)

    # ---- hook deliveries ----------------------------------------------------------------------
    async def list_deliveries(self, request: web.Request) -> web.Response:
        self._jwt(request)
        per_page = min(max(_int(request.query.get("per_page"), 30), 1), 100)
        items = sorted(self.gh.state.deliveries, key=lambda d: d.id, reverse=True)
        cursor = request.query.get("cursor")
        if cursor:
            if not cursor.startswith("v1_") or not cursor[3:].isdigit():
                return error(422, "Invalid cursor")
            before = int(cursor[3:])
            items = [d for d in items if d.id < before]
        chunk = items[:per_page]
        headers = {}
        if len(items) > per_page:
            q = dict(request.query)
            q["per_page"] = str(per_page)
            q["cursor"] = f"v1_{chunk[-1].id}"
            headers["Link"] = f'<{request.url.with_query(q)}>; rel="next"'
        return json_response([delivery_summary(d) for d in chunk], headers=headers)

    def _delivery(self, request: web.Request):
        did = int(request.match_info["delivery_id"])
        for d in self.gh.state.deliveries:
            if d.id == did:
                return d
        raise web.HTTPNotFound()

    async def get_delivery(self, request: web.Request) -> web.Response:
        self._jwt(request)
        return json_response(delivery_detail(self._delivery(request)))

    async def redeliver(self, request: web.Request) -> web.Response:
        self._jwt(request)
        d = self._delivery(request)
        self.gh._schedule_redelivery(d)
        return json_response({}, status=202)


def build_github_app(api: ApiRoutes, download_handler) -> web.Application:
    app = web.Application(middlewares=[api.middleware])
    r = app.router

    async def download(request: web.Request) -> web.StreamResponse:
        return await download_handler(request)

    download.fake_kind = "download"
    get = lambda path, h: r.add_get(path, h, allow_head=False)  # noqa: E731
    get("/", api.root)
    get("/rate_limit", api.rate_limit)
    get("/repos/{owner}/{repo}", api.get_repo)
    get("/repos/{owner}/{repo}/installation", api.repo_installation)
    get("/repos/{owner}/{repo}/releases", api.list_releases)
    get("/repos/{owner}/{repo}/releases/latest", api.latest_release)
    get("/repos/{owner}/{repo}/releases/tags/{tag:.+}", api.release_by_tag)
    get(r"/repos/{owner}/{repo}/releases/assets/{asset_id:\d+}", api.get_asset)
    get(r"/repos/{owner}/{repo}/releases/{release_id:\d+}", api.get_release)
    get(r"/repos/{owner}/{repo}/releases/{release_id:\d+}/assets", api.release_assets)
    get("/repos/{owner}/{repo}/contents/{path:.*}", api.get_contents)
    get("/repos/{owner}/{repo}/readme", api.get_readme)
    get("/repos/{owner}/{repo}/git/trees/{ref:.+}", api.get_tree)
    get("/app", api.get_app)
    get("/app/installations", api.list_installations)
    get(r"/app/installations/{installation_id:\d+}", api.get_installation)
    r.add_post(r"/app/installations/{installation_id:\d+}/access_tokens", api.create_token)
    get("/installation/repositories", api.installation_repositories)
    r.add_delete("/installation/token", api.revoke_token)
    get("/app/hook/deliveries", api.list_deliveries)
    get(r"/app/hook/deliveries/{delivery_id:\d+}", api.get_delivery)
    r.add_post(r"/app/hook/deliveries/{delivery_id:\d+}/attempts", api.redeliver)
    r.add_get("/{owner}/{repo}/releases/download/{tag:.+}/{name}", download, allow_head=True)
    return app
