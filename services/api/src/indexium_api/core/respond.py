"""Cached JSON answers: one cache lookup, ETag / If-None-Match -> 304 (and Last-Modified /
If-Modified-Since for answers that carry a date: the Atom feeds), Cache-Control, X-Cache.

Handlers call :func:`cached` with a key, the tags that invalidate it, a TTL and a
function computing ``(status, payload)`` from the database. 404s are cached like 200s
(tagged with the slug, so the mod's first release clears them).
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import hashlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from aiohttp import hdrs, web
from multidict import CIMultiDict

from indexium_search import sqlpath
from indexium_platform.web import ApiError

from . import search_index
from .cache import HIT, Unavailable
from .inflight import Busy
from .state import API, CLIENT, Api

_json = msgspec.json.Encoder()
GLOBAL = "global"  # every listing and lookup that any version event may change
_X_CACHE = {"hit": "HIT", "miss": "MISS", "coalesced": "MISS", "stale": "STALE"}
_UNSET = object()


# Bodies at least this long, of a type that compresses, are kept gzip'ed (docs/api.md, "Compressed
# answers"): the cache holds ~4-8x more answers in the same memory, and a client that accepts gzip
# gets the stored bytes as they are (most do: browsers, launchers, aiohttp, requests, undici).
GZIP_MIN = 1024
GZIP_LEVEL = 6  # 13 KB of search JSON: ~140 us a miss at 1 to 6 alike; 6 is the smallest
# Kept gzip'ed only when that saves at least an eighth (a README page of images' URLs still does).
GZIP_KEEP = 7 / 8
_ALREADY_COMPRESSED = ("image/png", "image/jpeg", "image/webp", "image/gif", "application/zip")


def _gzip(body: bytes) -> bytes:
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)  # (wbits 31: the gzip container)
    return z.compress(body) + z.flush()


class Cached:
    """One answer as the cache keeps it: its status, body (gzip'ed when that pays, see GZIP_MIN),
    strong ETag (of the identity body) and the headers of its 200s."""

    __slots__ = ("status", "stored", "gzipped", "etag", "content_type", "extra_headers", "last_modified", "_headers")

    def __init__(self, status: int, body: bytes, etag: str, content_type: str = "application/json",
                 extra_headers: tuple[tuple[str, str], ...] = (), last_modified: str | None = None):
        self.status, self.etag, self.content_type = status, etag, content_type
        # Headers of this body alone (a page's Content-Security-Policy naming its README's image origins).
        self.extra_headers = extra_headers
        # An HTTP-date, for answers that have one (the Atom feeds: their change stamp): sent as
        # Last-Modified, and If-Modified-Since is answered 304 by it when no If-None-Match came.
        self.last_modified = last_modified
        self.stored, self.gzipped = body, False
        if len(body) >= GZIP_MIN and status < 400 and not content_type.startswith(_ALREADY_COMPRESSED):
            packed = _gzip(body)
            if len(packed) <= len(body) * GZIP_KEEP:
                self.stored, self.gzipped = packed, True
        # (X-Cache, Cache-Control, gzip sent) -> the answer's headers, built once: a hit copies them.
        self._headers: dict = {}

    def _fields(self) -> tuple:
        return (self.status, self.stored, self.etag, self.content_type, self.extra_headers, self.last_modified)

    def __eq__(self, other: object) -> bool:  # (the headers' memo takes no part)
        return isinstance(other, Cached) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    @property
    def body(self) -> bytes:
        """The identity body (inflated anew from a gzip'ed entry: for the few that need it)."""
        return zlib.decompress(self.stored, 31) if self.gzipped else self.stored

    def sent(self, gzip_ok: bool) -> tuple[bytes, bool]:
        """The bytes to send a client (``gzip_ok``: it accepts gzip) and whether they are gzip."""
        if self.gzipped and gzip_ok:
            return self.stored, True
        return self.body, False

    def etag_for(self, gzip_sent: bool) -> str:
        """The ETag of what is sent: the gzip'ed bytes are another representation, so its tag is
        the weak form of the body's (as nginx sends it); If-None-Match compares weakly, so either
        form a client kept matches the same entry."""
        return "W/" + self.etag if gzip_sent else self.etag

    def coding(self, gzip_sent: bool, body: bool = True) -> dict[str, str]:
        """The headers the encoding choice decides, for every way an entry is sent (a 200 here, a
        304 in ``_answer``, /openapi.json): its ETag, ``Vary`` when what is sent depends on
        Accept-Encoding, and with a ``body`` sent gzip'ed, ``Content-Encoding``."""
        coded = {"ETag": self.etag_for(gzip_sent)}
        if self.gzipped:  # (what is sent depends on Accept-Encoding: caches must key on it)
            coded["Vary"] = "Accept-Encoding"
            if gzip_sent and body:
                coded["Content-Encoding"] = "gzip"
        return coded

    def headers(self, x_cache: str, cache_control: str, gzip_sent: bool = False) -> CIMultiDict:
        """The headers of a 200 answer with this body (the caller's copy is the response's).
        Remembered for hits only (~1 KB each): most entries a miss stores, an uncached search's,
        are never asked for again, and a miss's own work dwarfs building them."""
        memo = (x_cache, cache_control, gzip_sent)
        headers = self._headers.get(memo)
        if headers is None:
            headers = CIMultiDict({
                "Content-Type": self.content_type, "Cache-Control": cache_control, "X-Cache": x_cache,
                **dict(self.extra_headers), **self.coding(gzip_sent)})
            if self.last_modified is not None:
                headers["Last-Modified"] = self.last_modified
            if x_cache == "HIT":
                self._headers[memo] = headers
        return headers


_ACCEPTS: dict[str, bool] = {}  # Accept-Encoding header -> gzip accepted (a few distinct values in practice)
_ACCEPTS_MAX = 256


def accepts_gzip(header: str | None) -> bool:
    """Whether an Accept-Encoding (RFC 9110 12.5.3) allows gzip: ``gzip`` or ``x-gzip`` with a q
    above 0, or ``*`` above 0 with gzip not refused by name. Remembered per header value."""
    if not header:
        return False
    known = _ACCEPTS.get(header)
    if known is not None:
        return known
    named: bool | None = None
    star = False
    for item in header.split(","):
        name, _, params = item.partition(";")
        name = name.strip().lower()
        q = 1.0
        for param in params.split(";"):
            key, _, val = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(val.strip())
                except ValueError:
                    q = 0.0
        if name in ("gzip", "x-gzip"):
            named = q > 0 if named is None else named or q > 0
        elif name == "*":
            star = q > 0
    ok = named if named is not None else star
    if len(_ACCEPTS) >= _ACCEPTS_MAX:
        _ACCEPTS.clear()
    _ACCEPTS[header] = ok
    return ok


def etag_of(body: bytes) -> str:
    """A strong ETag of an answer's body (its BLAKE2b-128, quoted)."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def make(status: int, payload: object) -> Cached:
    body = _json.encode(payload)
    return Cached(status, body, etag_of(body))


ENTRY_OVERHEAD = 2048


def sizeof(value) -> int:
    """What an entry holds in memory: its body as stored (gzip'ed or not), and the rest (the entry,
    its key, the headers its hits copy) as ENTRY_OVERHEAD: 1,641 bytes measured for a site search
    page (tracemalloc, 5,000 entries of 6,000-byte bodies, each hit once, when a miss's headers
    were kept too: ~1 KB less since), rounded up. A cached count is an int."""
    return len(value.stored) + ENTRY_OVERHEAD if isinstance(value, Cached) else 64


MOD_TAG_PREFIX = "mod:"


def mod_tag(slug: str) -> str:
    return MOD_TAG_PREFIX + slug


def not_found(what: str) -> tuple[int, dict]:
    return 404, {"error": "not_found", "description": what}


def no_mod(slug: str) -> tuple[int, dict]:
    return not_found(f"No mod with slug '{slug}'.")


def etag_matches(header: str | None, etag: str) -> bool:
    """If-None-Match with weak comparison: a list of (W/)"tags" or '*'."""
    if not header:
        return False
    header = header.strip()
    if header == "*":
        return True
    return any(t.strip().removeprefix("W/") == etag for t in header.split(","))


def not_modified_since(header: str | None, last_modified: str) -> bool:
    """If-Modified-Since (RFC 9110 13.1.3): true when the answer's Last-Modified is not later than
    the date the client sent. A date that does not parse is ignored (the full answer goes)."""
    if not header:
        return False
    try:
        since = email.utils.parsedate_to_datetime(header)
    except (TypeError, ValueError, IndexError):
        return False
    if since is None or since.tzinfo is None:
        return False
    return email.utils.parsedate_to_datetime(last_modified) <= since


def unavailable(request: web.Request) -> ApiError:
    api = request.app[API]
    route = request.match_info.route.resource
    api.metrics.db_unavailable.labels(route.canonical if route else "unmatched").inc()
    return ApiError(503, "database_unavailable", "The catalogue is briefly unavailable; retry shortly.",
                    headers={"Retry-After": str(api.settings.retry_after_s)})


def hit(request: web.Request, key: tuple, tags: tuple[str, ...], cache_control: str | None = None,
        api: Api | None = None) -> web.Response | None:
    """The answer from a fresh cache entry, or None: what :func:`cached` answers first.

    Not a coroutine: a handler that builds its miss path per request (closures over the
    parsed query) asks this first, so a hit builds nothing and awaits nothing. ``api``: the
    handler's own ``request.app[API]``, if it has it (each look-up costs a hit three calls)."""
    if api is None:
        api = request.app[API]
    value = api.cache.fresh(key, tags)
    return None if value is None else _answer(request, api, value, HIT, cache_control)


async def cached(
    request: web.Request,
    key: tuple,
    tags: tuple[str, ...],
    compute: Callable[[], Awaitable[tuple[int, object] | Cached]],
    ttl: float | None = None,
    cache_control: str | None = None,
) -> web.Response:
    answer = hit(request, key, tags, cache_control)
    if answer is not None:
        return answer
    api = request.app[API]
    value, result = await _computed(request, api, key, tags, compute, ttl)
    return _answer(request, api, value, result, cache_control)


async def _computed(request: web.Request, api, key: tuple, tags: tuple[str, ...],
                    compute: Callable[[], Awaitable[tuple[int, object] | Cached]], ttl: float | None):
    """The entry for ``key`` from the cache, computed once if it is not there, and how it came."""

    async def build() -> Cached:
        result = await compute()
        return result if isinstance(result, Cached) else make(*result)

    # Waiting for a computation of this key already in flight costs the database nothing: no slot.
    try:
        async with contextlib.nullcontext() if api.cache.computing(key) else uncached(request, api):
            return await api.cache.get(key, tags, api.settings.cache_ttl_s if ttl is None else ttl, build)
    except Unavailable:
        raise unavailable(request) from None


async def entry(request: web.Request, key: tuple, tags: tuple[str, ...],
                compute: Callable[[], Awaitable[tuple[int, object] | Cached]], ttl: float | None = None) -> Cached:
    """The cache entry :func:`cached` would answer with, for a handler that sends its body its own
    way (the site's pages for a signed-in visitor: the shared body with their own header, no ETag)."""
    api = request.app[API]
    value = api.cache.fresh(key, tags)
    if value is not None:
        api.metrics.cache_result(request.match_info.route.resource, HIT).value += 1
        return value
    value, result = await _computed(request, api, key, tags, compute, ttl)
    api.metrics.cache_result(request.match_info.route.resource, result).value += 1
    return value


@contextlib.asynccontextmanager
async def uncached(request: web.Request, api: Api | None = None) -> AsyncIterator[None]:
    """Around a request's uncached work (a cache miss, a lookup, a session read): one of its
    client's in-flight slots held (inflight.py), waited for in turn; a 429 when the client
    already has too many in flight. Nothing for a request with no client (the cap is off, or a
    trusted proxy named none)."""
    if api is None:
        api = request.app[API]
    in_flight = api.in_flight
    if in_flight is None:
        yield
        return
    key = request.get(CLIENT, _UNSET)  # (the rate limit's hook noted it; with the limit off, found here)
    if key is _UNSET:
        key = request[CLIENT] = api.keys.key(request.remote, request.headers.get(hdrs.X_FORWARDED_FOR))
    if key is None:
        yield
        return
    try:
        await in_flight.acquire(key)
    except Busy as busy:
        api.metrics.rate_limited.labels("in_flight").inc()
        raise ApiError(429, "too_many_in_flight",
                       f"More than {busy.cap} of your requests are being computed at once; "
                       f"retry in {busy.retry_after_s} s.",
                       headers={"Retry-After": str(busy.retry_after_s)}) from None
    try:
        yield
    finally:
        in_flight.release(key)


def _answer(request: web.Request, api: Api, value: Cached, result: str, cache_control: str | None) -> web.Response:
    api.metrics.cache_result(request.match_info.route.resource, result).value += 1  # (Count.inc, inline)
    if value.status >= 400:
        # Kept in our own cache (a flood of lookups for a missing mod costs one query), but
        # never in browsers or CDNs: the mod can appear any second (docs/api.md, errors).
        headers = {"Cache-Control": "no-store", "X-Cache": _X_CACHE[result]}
        return web.Response(status=value.status, body=value.body, content_type=value.content_type, headers=headers)
    cache_control = cache_control or api.client_cache_control
    gzip_sent = value.gzipped and accepts_gzip(request.headers.get(hdrs.ACCEPT_ENCODING))
    if_none_match = request.headers.get(hdrs.IF_NONE_MATCH)  # (an istr: no case-folding per look-up)
    if if_none_match is not None and etag_matches(if_none_match, value.etag) or (
            if_none_match is None and value.last_modified is not None
            and not_modified_since(request.headers.get(hdrs.IF_MODIFIED_SINCE), value.last_modified)):
        headers = {"Cache-Control": cache_control, "X-Cache": _X_CACHE[result], **value.coding(gzip_sent, body=False)}
        if value.last_modified is not None:
            headers["Last-Modified"] = value.last_modified
        return web.Response(status=304, headers=headers)
    body, gzip_sent = value.sent(gzip_sent)
    return web.Response(status=value.status, body=body, headers=value.headers(_X_CACHE[result], cache_control, gzip_sent))


async def query(request: web.Request, fn, *args, **kwargs):
    """One uncached database call (bulk POST lookups); 503 when PostgreSQL is unavailable."""
    api = request.app[API]
    try:
        async with uncached(request, api):
            return await api.db.run(fn, *args, **kwargs)
    except Unavailable:
        raise unavailable(request) from None



async def browse_total(api, sq: sqlpath.SearchQuery) -> int | None:
    """The cached total of a browse (a search with no text), or None for a text search.

    A browse total depends only on the filters, so every page and order of one filter, on
    every surface (/api/v1, /v2), shares one cached count."""
    if sq.q is not None or search_index.indexed_now(api):  # (the index counts it itself)
        return None
    filters = dataclasses.replace(sq, limit=0, offset=0, sort=None)
    total, _ = await api.cache.get(("search-total", filters), (GLOBAL,), api.settings.cache_ttl_s,
                                   lambda: api.db.run(sqlpath.count, filters))
    return total


PARSED_SEARCHES_MAX = 10_000


def parsed_once(request: web.Request, surface: str, parse: Callable[[web.Request], Any], api: Api | None = None) -> Any:
    """A search's parsed parameters (with its cache key, for the searches), parsed once per
    raw query string and surface.

    Hot queries arrive as the same raw query string again and again; parsing them (facet
    JSON, version lists) is most of a cache hit's own work. The raw string is the key: two
    encodings of one decoded string may differ in validity. A bad one raises (400) and is not
    remembered; the table is emptied whole when full. ``api``: as for :func:`hit`."""
    key = (surface, request.rel_url.raw_query_string)
    remembered = (request.app[API] if api is None else api).parsed_searches
    parsed = remembered.get(key)
    if parsed is None:
        parsed = parse(request)
        if len(remembered) >= PARSED_SEARCHES_MAX:
            remembered.clear()
        remembered[key] = parsed
    return parsed
