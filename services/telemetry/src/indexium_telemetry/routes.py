"""POST /api/v1/analytics/submit: validate, resolve mods, hash, cap new ids, rate-limit, publish, 202.

The client address is read once, by ``newservers.ClientNetwork``, and only becomes the
bytes of its networks (/24 and /16, or /64, /48 and /32), which ``NewServerCap`` HMACs under
an hourly key in memory. Nothing logs it: the platform's canonical request line has none, and neither does any
line, metric, event or row written on this path.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from aiohttp import web
from nats.js import JetStreamContext

from indexium_contracts import telemetry
from indexium_platform import logs
from indexium_platform.web import ApiError, json_response

from .body import read_ping_body
from .catalogue import ModCatalogue
from .jspub import JetStreamPublisher
from .metrics import TelemetryMetrics
from .newservers import ClientNetwork, NewServerCap
from .protocol import InvalidPing, decode_ping, java_major
from .ratelimit import RateLimited, RateLimiter
from .salt import DailySalt
from .settings import Settings

SUBMIT_PATH = "/api/v1/analytics/submit"
# What we ask of clients (docs/telemetry.md): every 30 minutes, i.e. twice the window.
RECOMMENDED_INTERVAL_S = 1800

SETTINGS = web.AppKey("settings", Settings)
METRICS = web.AppKey("telemetry_metrics", TelemetryMetrics)
JS = web.AppKey("js", JetStreamContext)
PUBLISHER = web.AppKey("publisher", JetStreamPublisher)
SALT = web.AppKey("salt", DailySalt)
LIMITER = web.AppKey("limiter", RateLimiter)
CATALOGUE = web.AppKey("catalogue", ModCatalogue)
NETWORK = web.AppKey("client_network", ClientNetwork)
NEW_SERVERS = web.AppKey("new_servers", NewServerCap)

log = logs.get(__name__)
_OUTCOME_BY_CODE = {"payload_too_large": "too_large", "unsupported_encoding": "unsupported_encoding",
                    "unsupported_media_type": "unsupported_encoding", "bad_gzip": "bad_gzip",
                    "request_timeout": "timed_out"}


def _unavailable(what: str) -> ApiError:
    return ApiError(503, "unavailable", f"{what} is unavailable; please retry later.",
                    headers={"Retry-After": "60"})


async def submit(request: web.Request) -> web.Response:
    app = request.app
    settings, metrics = app[SETTINGS], app[METRICS]
    try:
        body = await read_ping_body(request, settings.max_body_bytes)
    except ApiError as exc:
        metrics.ping_outcome[_OUTCOME_BY_CODE.get(exc.code, "invalid")].inc()
        raise
    try:
        ping = decode_ping(body)
    except InvalidPing as exc:
        metrics.ping_outcome["invalid"].inc()
        raise ApiError(400, "invalid_ping", str(exc)) from None

    catalogue = app[CATALOGUE]
    if not catalogue.loaded:
        metrics.ping_outcome["unavailable"].inc()
        raise _unavailable("The mod catalogue")
    mods, unknown = catalogue.resolve_all(ping.mods)
    if unknown:  # (a prometheus inc takes a lock: not for nothing)
        metrics.unknown_mods.inc(unknown)
    if not mods:
        # Nothing we could count: not queued, and the server's window stays open.
        metrics.ping_outcome["ignored"].inc()
        return json_response({"status": "ignored", "counted": 0, "unknown": unknown})

    try:
        received_at, server_hash = await app[SALT].hash_now(ping.server_uuid)
    except Exception as exc:
        metrics.salt_errors.inc()
        metrics.ping_outcome["unavailable"].inc()
        log.warning("salt_unavailable", error=str(exc) or type(exc).__name__)
        raise _unavailable("Telemetry") from None

    wait = app[NEW_SERVERS].admit(
        app[NETWORK].networks(request.remote, request.headers.get("X-Forwarded-For")), server_hash)
    if wait:
        metrics.ping_outcome["new_server_capped"].inc()
        raise ApiError(429, "rate_limited",
                       f"Too many new servers from one network this hour (at most "
                       f"{settings.new_servers_per_prefix_hour}); servers already seen are not affected.",
                       headers={"Retry-After": str(wait)})

    limiter = app[LIMITER]
    try:
        key = await limiter.acquire(server_hash, received_at)
    except RateLimited as exc:
        metrics.ping_outcome["rate_limited"].inc()
        raise ApiError(429, "rate_limited",
                       f"One ping per server every {settings.rate_limit_s} seconds.",
                       headers={"Retry-After": str(exc.retry_after_s)}) from None
    except Exception as exc:
        metrics.ping_outcome["unavailable"].inc()
        log.warning("rate_limit_unavailable", error=str(exc) or type(exc).__name__)
        raise _unavailable("Telemetry") from None

    ping_id = uuid.uuid4()
    event = telemetry.PingAccepted(
        ping_id=ping_id, received_at=received_at.isoformat(), server_hash=server_hash,
        mods=[telemetry.ModUse(mod_id, version) for mod_id, version in mods],
        game_version=ping.game_version, loader=ping.loader,
        java_version=java_major(ping.java_version), os=ping.os, arch=ping.arch,
        core_count=ping.core_count, player_count=ping.player_count, online_mode=ping.online_mode,
    )
    try:
        # Its own PubAck, within INDEXIUM_TELEMETRY_PUBLISH_TIMEOUT_SECONDS, before the 202.
        await app[PUBLISHER].publish(telemetry.PING, telemetry.encoder.encode(event),
                                     {"Nats-Msg-Id": ping_id.hex})
    except Exception as exc:
        # Never 202 what JetStream did not store; reopen the window so the retry is not a 429.
        with contextlib.suppress(Exception):
            await asyncio.shield(limiter.release(key))
        metrics.ping_outcome["unavailable"].inc()
        log.warning("publish_failed", error=str(exc) or type(exc).__name__)
        raise _unavailable("The queue") from None
    metrics.ping_outcome["accepted"].inc()
    metrics.counted_mods.inc(len(mods))
    return json_response({"status": "accepted", "counted": len(mods), "unknown": unknown,
                          "next_ping_in_s": RECOMMENDED_INTERVAL_S}, status=202)


def setup(app: web.Application) -> None:
    app.router.add_post(SUBMIT_PATH, submit)
