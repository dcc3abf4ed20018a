"""Release-asset downloads: the github-host redirector and the CDN host serving bytes.

``GET /{owner}/{repo}/releases/download/{tag}/{name}`` on the github host answers ``302``
to a signed, expiring URL on the CDN host, like github.com → release-assets.githubusercontent.com.
The CDN honours HEAD, full GET and single byte ranges (``a-b``, ``a-``, ``-N``).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from email.utils import formatdate
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from aiohttp import web
from multidict import CIMultiDict

from .models import Asset, CdnRequest, iso

if TYPE_CHECKING:  # pragma: no cover
    from .server import FakeGitHub

BLOB_PREFIX = "/github-production-release-asset"


# ---- Range -------------------------------------------------------------------------------
class Unsatisfiable(Exception):
    pass


def parse_range(header: str | None, size: int) -> tuple[int, int] | None:
    """One byte range → inclusive (start, end) clamped to the size.

    ``None`` means "serve the whole body" (no header, a syntactically invalid one, or several
    ranges, which RFC 9110 lets a server ignore). Raises ``Unsatisfiable`` for 416 cases.
    """
    if not header:
        return None
    unit, _, spec = header.strip().partition("=")
    if unit.strip().lower() != "bytes" or not spec or "," in spec:
        return None
    first, dash, last = spec.strip().partition("-")
    first, last = first.strip(), last.strip()
    if not dash or (first and not first.isdigit()) or (last and not last.isdigit()):
        return None
    if not first:  # suffix: bytes=-N
        if not last:
            return None
        n = int(last)
        if n == 0 or size == 0:
            raise Unsatisfiable
        return max(size - n, 0), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None
    if start >= size:
        raise Unsatisfiable
    return start, min(end, size - 1)


# ---- Signed URLs -------------------------------------------------------------------------
@dataclass
class Signer:
    secret: bytes
    ttl: float = 300.0

    @classmethod
    def random(cls, ttl: float = 300.0) -> "Signer":
        return cls(secrets.token_bytes(32), ttl)

    def _mac(self, path: str, exp: int) -> str:
        return hmac.new(self.secret, f"{path}\n{exp}".encode(), hashlib.sha256).hexdigest()

    def sign(self, cdn_base: str, asset: Asset, now: float, ttl: float | None = None) -> str:
        exp = int(now + (self.ttl if ttl is None else ttl))
        path = f"{BLOB_PREFIX}/{asset.repo.id}/{asset.blob_key}"
        query = urlencode(
            {
                "sp": "r",
                "sv": "2018-11-09",
                "sr": "b",
                "spr": "https",
                "se": iso(exp),
                "rscd": f"attachment; filename={asset.name}",
                "rsct": "application/octet-stream",
                "exp": str(exp),
                "sig": self._mac(path, exp),
            }
        )
        return f"{cdn_base}{path}?{query}"

    def check(self, path: str, exp: str | None, sig: str | None, now: float) -> str:
        """'ok', 'expired' or 'invalid'."""
        if not exp or not sig or not exp.isdigit():
            return "invalid"
        if not hmac.compare_digest(self._mac(path, int(exp)), sig):
            return "invalid"
        if int(exp) < now:
            return "expired"
        return "ok"


def _azure_error(status: int, code: str, message: str) -> web.Response:
    body = (
        '<?xml version="1.0" encoding="utf-8"?><Error>'
        f"<Code>{code}</Code><Message>{message}</Message></Error>"
    )
    return web.Response(
        status=status,
        text=body,
        content_type="application/xml",
        headers={"Server": "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0"},
    )


def _fault_response(status: int, retry_after, body: str | None) -> web.Response:
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = str(retry_after)
    return web.Response(
        status=status,
        text=body if body is not None else f"{status} injected fault\n",
        headers=headers,
    )


class CdnRoutes:
    """Handlers for the CDN host and the github-host download redirector."""

    def __init__(self, gh: "FakeGitHub") -> None:
        self.gh = gh

    # ---- github host: browser_download_url ---------------------------------------------
    async def download(self, request: web.Request) -> web.StreamResponse:
        gh = self.gh
        repo = gh.state.find_repo(request.match_info["owner"], request.match_info["repo"])
        asset = None
        if repo is not None:
            try:
                asset = repo.release(request.match_info["tag"]).asset(request.match_info["name"])
            except KeyError:
                asset = None
        delay = gh.faults.delay("download", asset.id if asset else None)
        if delay:
            await asyncio.sleep(delay)
        fault = gh.faults.take("download", asset.id if asset else None)
        if fault is not None:
            return _fault_response(fault.status, fault.retry_after, fault.body)
        if asset is None or gh.faults.mode(asset.id) == "404":
            return web.Response(status=404, text="Not Found", content_type="text/plain")
        if asset.repo.private or asset.release.draft:
            # Private repositories and drafts need credentials that can see the repository.
            if not gh._can_see(request, asset.repo):
                return web.Response(status=404, text="Not Found", content_type="text/plain")
        return self._redirect(asset)

    def _redirect(self, asset: Asset) -> web.Response:
        gh = self.gh
        target = gh.faults.redirects.get(asset.id) or gh.signed_cdn_url(asset)
        gh.state.stats_for(asset.id).redirects += 1
        asset.download_count += 1
        return web.Response(
            status=302,
            headers={"Location": target, "Content-Type": "text/html; charset=utf-8"},
            text=f'<html><body>You are being <a href="{target}">redirected</a>.</body></html>',
        )

    # ---- CDN host -------------------------------------------------------------------------
    async def blob(self, request: web.Request) -> web.StreamResponse:
        gh = self.gh
        asset = gh.state.blobs.get(request.match_info["key"])
        if asset is not None and str(asset.repo.id) != request.match_info["repo_id"]:
            asset = None
        rec = CdnRequest(
            method=request.method,
            path_qs=request.path_qs,
            headers=CIMultiDict(request.headers),
            asset_id=asset.id if asset else None,
        )
        gh.state.cdn_requests.append(rec)
        stats = gh.state.stats_for(asset.id) if asset else None
        if stats is not None:
            stats.requests += 1
            stats.headers.append(rec.headers)
            if "Range" in request.headers:
                stats.ranges.append(request.headers["Range"])
        resp = await self._blob_response(request, asset)
        rec.status = resp.status
        if stats is not None:
            stats.statuses.append(resp.status)
            stats.bytes_sent += rec.bytes_sent
        return resp

    async def _blob_response(self, request: web.Request, asset: Asset | None) -> web.StreamResponse:
        gh = self.gh
        rec = gh.state.cdn_requests[-1]
        delay = gh.faults.delay("cdn", asset.id if asset else None)
        if delay:
            await asyncio.sleep(delay)
        fault = gh.faults.take("cdn", asset.id if asset else None)
        if fault is not None:
            return _fault_response(fault.status, fault.retry_after, fault.body)
        if asset is None or gh.faults.mode(asset.id) == "404":
            return _azure_error(404, "BlobNotFound", "The specified blob does not exist.")
        mode = gh.faults.mode(asset.id)
        verdict = gh.signer.check(
            request.path, request.query.get("exp"), request.query.get("sig"), gh.state.clock()
        )
        if mode == "expire_once":
            gh.faults.modes.pop(asset.id, None)
            verdict = "expired"
        elif mode == "expired":
            verdict = "expired"
        if verdict == "invalid":
            return _azure_error(
                403,
                "AuthenticationFailed",
                "Server failed to authenticate the request. Make sure the value of "
                "Authorization header is formed correctly including the signature.",
            )
        if verdict == "expired":
            return _azure_error(
                403,
                "AuthenticationFailed",
                "Server failed to authenticate the request. Signed expiry time must be "
                "after signed start time.",
            )

        size = asset.size
        headers = {
            "Content-Type": "application/octet-stream",
            "ETag": asset.etag,
            "Last-Modified": formatdate(asset.updated_at, usegmt=True),
            "Content-Disposition": f"attachment; filename={asset.name}",  # GitHub-safe name
            "Server": "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0",
            "x-ms-blob-type": "BlockBlob",
            "Cache-Control": "public, max-age=300",
        }
        if mode == "no_range":
            rng = None
        else:
            headers["Accept-Ranges"] = "bytes"
            try:
                rng = parse_range(request.headers.get("Range"), size)
            except Unsatisfiable:
                headers["Content-Range"] = f"bytes */{size}"
                return _range_not_satisfiable(headers)
            if_range = request.headers.get("If-Range")
            if rng is not None and if_range and if_range != asset.etag:
                rng = None  # validator changed: send the whole representation
        if rng is None:
            status, start, end = 200, 0, size - 1
        else:
            status, (start, end) = 206, rng
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        body = asset.content[start : end + 1] if size else b""
        if request.method == "HEAD":
            headers["Content-Length"] = str(len(body))
            return web.Response(status=status, headers=headers)

        if mode == "truncate" and len(body) > 1:
            resp = web.StreamResponse(status=status, headers=headers)
            resp.content_length = len(body)
            await resp.prepare(request)
            half = body[: len(body) // 2]
            await resp.write(half)
            rec.bytes_sent = len(half)
            await asyncio.sleep(0)
            if request.transport is not None:
                request.transport.abort()
            return resp
        rec.bytes_sent = len(body)
        return web.Response(status=status, headers=headers, body=body)

    async def unknown(self, request: web.Request) -> web.Response:
        self.gh.state.cdn_requests.append(
            CdnRequest(request.method, request.path_qs, CIMultiDict(request.headers), None, 400)
        )
        return _azure_error(
            400, "InvalidUri", "The requested URI does not represent any resource on the server."
        )


def _range_not_satisfiable(headers: dict) -> web.Response:
    hdrs = {k: v for k, v in headers.items() if k != "Content-Type"}
    return web.Response(
        status=416,
        headers=hdrs,
        text=(
            '<?xml version="1.0" encoding="utf-8"?><Error><Code>InvalidRange</Code>'
            "<Message>The range specified is invalid for the current size of the "
            "resource.</Message></Error>"
        ),
        content_type="application/xml",
    )


def build_cdn_app(routes: CdnRoutes) -> web.Application:
    app = web.Application()
    app.router.add_get(BLOB_PREFIX + "/{repo_id:\\d+}/{key}", routes.blob, allow_head=True)
    app.router.add_route("*", "/{tail:.*}", routes.unknown)
    return app
