"""Telemetry, read side: a mod's daily active servers and a shields-style servers badge.

GET /api/v1/mods/{slug}/analytics?range=7d|30d|90d and GET /api/v1/badges/{slug}/servers.svg,
both from mod_daily_stats (written hourly by the telemetry aggregator) through this
replica's cache for 5 minutes. "Servers" is always a count of distinct servers on one
complete UTC day; today's partial count is shown apart and never mixed into the series.
"""

from __future__ import annotations

import hashlib
import math
from datetime import UTC, date, datetime, timedelta
from xml.sax.saxutils import escape

from aiohttp import web

from indexium_contracts.telemetry import utc_day
from indexium_db.queries import telemetry as telemetry_q
from indexium_platform.web import ApiError

from indexium_contracts.slugs import SLUG_PATTERN, is_slug
from ..core import apidoc, params
from ..core.respond import Cached, cached, mod_tag, no_mod
from ..core.state import API
from .build import BASE

RANGES = {"7d": 7, "30d": 30, "90d": 90}
TTL_S = 300.0  # stats change at most hourly (the aggregator's run): 5 min keeps a chart at most one run late
ANALYTICS_CACHE_CONTROL = "public, max-age=300"
BADGE_CACHE_CONTROL = "public, max-age=1800"  # the count changes once a day; READMEs refetch it
BADGE_LABEL = "servers"
SVG = "image/svg+xml"


def now() -> datetime:
    return datetime.now(UTC)


def _valid_slug(slug: str) -> bool:
    return is_slug(slug)


async def _analytics(conn, slug: str, days: int, today: date) -> tuple[int, dict]:
    mod = await telemetry_q.mod_for_analytics(conn, slug)
    if mod is None:
        return no_mod(slug)
    last = today - timedelta(days=1)  # the last complete UTC day
    first = last - timedelta(days=days - 1)
    series = await telemetry_q.daily_servers(conn, mod["id"], first, last)
    latest = await telemetry_q.day_stats(conn, mod["id"], last)
    partial = await telemetry_q.day_stats(conn, mod["id"], today)
    return 200, {
        "slug": slug,
        "range": f"{days}d",
        "from": first.isoformat(),
        "to": last.isoformat(),
        "days": [{"day": r["day"].isoformat(), "servers": r["servers"]} for r in series],
        "latest": {"day": last.isoformat(), "servers": latest["servers"] if latest else 0,
                   "breakdown": latest["breakdown"] if latest else {}},
        "today": {"day": today.isoformat(), "servers_so_far": partial["servers"] if partial else 0},
    }


async def get_analytics(request: web.Request) -> web.Response:
    api = request.app[API]
    days = RANGES[params.choice(request, "range", tuple(RANGES), default="30d")]
    slug = request.match_info["slug"]
    today = utc_day(now())
    if not _valid_slug(slug):  # cannot exist: no query, nothing cached
        raise ApiError(404, "not_found", f"No mod with slug '{slug}'.")

    async def compute():
        return await api.db.run(_analytics, slug, days, today)

    # Today's date in the key: the series moves on at midnight without waiting for the TTL.
    return await cached(request, ("analytics", slug, days, today), (mod_tag(slug),), compute,
                        TTL_S, ANALYTICS_CACHE_CONTROL)


# ---- badge ---------------------------------------------------------------------------------

def _char_width(c: str) -> float:
    """Verdana 11px advance widths, close enough for a badge to fit its text."""
    if c in "iljI.,:;!|' ":
        return 3.6
    if c in "mwMW@%":
        return 10.5
    if c.isupper() or c in "#&":
        return 7.6
    return 6.6


def text_width(text: str) -> float:
    return sum(_char_width(c) for c in text)


def compact(n: int) -> str:
    """1234 -> '1.2k', 56789 -> '57k', 1234567 -> '1.2M' (shields' metric style)."""
    for limit, suffix in ((1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")):
        if n >= limit:
            value = n / limit
            return (f"{math.floor(value * 10) / 10:.1f}".rstrip("0").rstrip(".") if value < 10
                    else f"{math.floor(value)}") + suffix
    return str(n)


def render_badge(label: str, value: str, color: str) -> str:
    """A flat shields-style badge; every piece of text is XML-escaped."""
    lw = round(text_width(label) + 10)
    vw = round(text_width(value) + 10)
    width = lw + vw
    lbl, val = escape(label, {'"': "&quot;"}), escape(value, {'"': "&quot;"})
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{lbl}: {val}"><title>{lbl}: {val}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/>'
        '<stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="20" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{lw}" height="20" fill="#555"/>'
        f'<rect x="{lw}" width="{vw}" height="20" fill="{color}"/>'
        f'<rect width="{width}" height="20" fill="url(#s)"/></g>'
        '<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" '
        'text-rendering="geometricPrecision" font-size="11">'
        f'<text x="{lw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{lbl}</text>'
        f'<text x="{lw / 2:.1f}" y="14">{lbl}</text>'
        f'<text x="{lw + vw / 2:.1f}" y="15" fill="#010101" fill-opacity=".3">{val}</text>'
        f'<text x="{lw + vw / 2:.1f}" y="14">{val}</text></g></svg>')


def _svg(status: int, label: str, value: str, color: str) -> Cached:
    body = render_badge(label, value, color).encode()
    return Cached(status, body, '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"', SVG)


async def _badge_count(conn, slug: str, day: date) -> int | None:
    mod = await telemetry_q.mod_for_analytics(conn, slug)
    if mod is None:
        return None
    stats = await telemetry_q.day_stats(conn, mod["id"], day)
    return stats["servers"] if stats else 0


async def get_badge(request: web.Request) -> web.Response:
    api = request.app[API]
    slug = request.match_info["slug"]
    label = params.text(request, "label", max_len=40) or BADGE_LABEL
    day = utc_day(now()) - timedelta(days=1)

    async def compute() -> Cached:
        count = await api.db.run(_badge_count, slug, day) if _valid_slug(slug) else None
        if count is None:  # an image still, so a README shows why
            return _svg(404, label, "unknown mod", "#9f9f9f")
        return _svg(200, label, compact(count), "#4c1" if count else "#9f9f9f")

    return await cached(request, ("badge", slug, label, day), (mod_tag(slug),), compute,
                        TTL_S, BADGE_CACHE_CONTROL)


def _openapi() -> dict:
    slug = {"name": "slug", "in": "path", "required": True, "example": "sodium",
            "schema": {"type": "string", "pattern": SLUG_PATTERN}}
    err = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    retry = {"headers": {"Retry-After": {"schema": {"type": "integer"}, "required": True}}}
    common = {"304": {"description": "Not modified (If-None-Match matched the ETag)."},
              "429": {"description": "Rate limit exceeded.", **err, **retry},
              "503": {"description": "PostgreSQL is unavailable and no cached answer exists.", **err, **retry}}
    return {
        "/mods/{slug}/analytics": {"get": {
            "operationId": "getModAnalytics",
            "summary": "Distinct servers running the mod per complete UTC day, and the latest breakdown",
            "parameters": [slug, {"name": "range", "in": "query", "required": False,
                                  "schema": {"type": "string", "enum": list(RANGES), "default": "30d"}}],
            "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {
                              "$ref": "#/components/schemas/ModAnalytics"}}}},
                          "400": {"description": "range is not 7d, 30d or 90d.", **err},
                          "404": {"description": "No such listed mod.", **err}, **common}}},
        "/badges/{slug}/servers.svg": {"get": {
            "operationId": "getServersBadge",
            "summary": "A badge with the servers seen on the last complete UTC day",
            "parameters": [slug, {"name": "label", "in": "query", "required": False,
                                  "schema": {"type": "string", "maxLength": 40}}],
            "responses": {"200": {"description": "SVG badge", "content": {SVG: {"schema": {"type": "string"}}}},
                          "400": {"description": "label is too long.", **err},
                          "404": {"description": "An 'unknown mod' badge.",
                                  "content": {SVG: {"schema": {"type": "string"}}}}, **common}}},
    }


_SCHEMAS = {"ModAnalytics": {"type": "object", "required": ["slug", "range", "from", "to", "days", "latest", "today"],
                             "properties": {
                                 "slug": {"type": "string"}, "range": {"type": "string", "enum": list(RANGES)},
                                 "from": {"type": "string", "format": "date"},
                                 "to": {"type": "string", "format": "date"},
                                 "days": {"type": "array", "items": {"type": "object", "required": ["day", "servers"],
                                          "properties": {"day": {"type": "string", "format": "date"},
                                                         "servers": {"type": "integer", "minimum": 0}}}},
                                 "latest": {"type": "object"}, "today": {"type": "object"}}}}


def setup(app: web.Application) -> None:
    app.router.add_get(f"{BASE}/mods/{{slug}}/analytics", get_analytics)
    app.router.add_get(f"{BASE}/badges/{{slug}}/servers.svg", get_badge)
    apidoc.register(app, _openapi(), _SCHEMAS)
