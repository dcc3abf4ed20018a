"""POST /webhooks/github: verify, decode, publish to JetStream, answer 202 only after the PubAck."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import structlog
from aiohttp import web
from nats.js import JetStreamContext

from indexium_contracts import github, ingest
from indexium_platform import logs
from indexium_platform.web import ApiError, header_text, json_response, read_request_body

from .deliveries import DeliveryLog
from .metrics import IngestMetrics
from .settings import Settings
from .signature import verify

SETTINGS = web.AppKey("settings", Settings)
JS = web.AppKey("js", JetStreamContext)
DELIVERIES = web.AppKey("deliveries", DeliveryLog)
METRICS = web.AppKey("ingest_metrics", IngestMetrics)

log = logs.get(__name__)
_MAX_DELIVERY_ID = 128
_MAX_EVENT = 64


async def github_webhook(request: web.Request) -> web.Response:
    settings, metrics = request.app[SETTINGS], request.app[METRICS]
    received_at = datetime.now(UTC)
    event = request.headers.get("X-GitHub-Event", "")
    delivery_id = request.headers.get("X-GitHub-Delivery", "")
    # GitHub signs the bytes it sends and never compresses them: the signature is checked on
    # exactly those bytes, and nothing is inflated for a sender who has not proven the secret.
    body = await read_request_body(request, settings.max_body_bytes, encodings=())

    if not verify(settings.webhook_secrets, body, request.headers.get("X-Hub-Signature-256")):
        metrics.webhooks.labels(event="-", outcome="bad_signature").inc()
        raise ApiError(401, "bad_signature", "X-Hub-Signature-256 is missing or does not match.")
    if not event:
        raise ApiError(400, "missing_event", "X-GitHub-Event header is required.")
    if header_text(request, "X-GitHub-Event", _MAX_EVENT) is None:
        raise ApiError(400, "bad_event", f"X-GitHub-Event must be printable ASCII of at most {_MAX_EVENT} characters.")
    if not delivery_id:
        raise ApiError(400, "missing_delivery", "X-GitHub-Delivery header is required.")
    if header_text(request, "X-GitHub-Delivery", _MAX_DELIVERY_ID) is None:
        raise ApiError(400, "bad_delivery",
                       f"X-GitHub-Delivery must be printable ASCII of at most {_MAX_DELIVERY_ID} characters.")
    structlog.contextvars.bind_contextvars(delivery_id=delivery_id, github_event=event)
    label = event if event in github.WEBHOOK_TYPES else "other"

    try:
        payload = github.decode_webhook(event, body)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        metrics.webhooks.labels(event=label, outcome="malformed").inc()
        raise ApiError(400, "malformed_payload", f"The {event} payload could not be read: {exc}")

    if event == "ping":
        metrics.webhooks.labels(event=label, outcome="pong").inc()
        return json_response({"status": "pong"})
    route = ingest.BY_GITHUB_EVENT.get(event)
    if payload is None or route is None:
        metrics.webhooks.labels(event=label, outcome="ignored").inc()
        return json_response({"status": "ignored", "event": event}, status=202)

    if await request.app[DELIVERIES].seen(delivery_id):
        # A redelivery after JetStream's duplicate window: stored long ago, publish nothing.
        metrics.webhooks.labels(event=label, outcome="duplicate").inc()
        return json_response({"status": "duplicate", "event": event, "delivery": delivery_id}, status=202)
    subject, event_type = route
    first_at = await request.app[DELIVERIES].first_delivered_at(delivery_id)
    if first_at is not None:  # a failed delivery our reconciler had GitHub send again
        received_at = datetime.fromtimestamp(first_at, UTC)
    if isinstance(payload, github.PushWebhook):
        payload = github.manifest_paths_only(payload)
    message = ingest.encoder.encode(
        event_type(delivery_id=delivery_id, received_at=received_at.isoformat(), webhook=payload)
    )
    if len(message) > ingest.STREAM.max_msg_size:
        metrics.webhooks.labels(event=label, outcome="too_large").inc()
        raise ApiError(413, "payload_too_large", "The event is larger than we can queue.")
    try:
        ack = await request.app[JS].publish(
            subject, message, timeout=settings.publish_timeout_s,
            headers={"Nats-Msg-Id": delivery_id},
        )
    except Exception as exc:
        # Never 202 what JetStream did not store: GitHub does not retry by itself, and
        # a 503 shows up as a failed delivery that can be redelivered.
        metrics.webhooks.labels(event=label, outcome="unavailable").inc()
        log.warning("publish_failed", error=str(exc) or type(exc).__name__)
        raise ApiError(503, "queue_unavailable", "The queue is unavailable; please redeliver.",
                       headers={"Retry-After": "5"})
    await request.app[DELIVERIES].remember(delivery_id, ack.seq)
    outcome = "duplicate" if ack.duplicate else "accepted"
    metrics.webhooks.labels(event=label, outcome=outcome).inc()
    return json_response({"status": outcome, "event": event, "delivery": delivery_id}, status=202)


def setup(app: web.Application) -> None:
    app.router.add_post("/webhooks/github", github_webhook)
