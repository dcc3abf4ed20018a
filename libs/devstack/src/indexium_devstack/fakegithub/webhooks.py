"""Webhook deliveries like GitHub's Hookshot: signing, sending, recording, redelivering."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any

import aiohttp

from .models import Delivery, State

USER_AGENT = "GitHub-Hookshot/7d2f8a1"


def sign(body: bytes, secret: str | bytes) -> str:
    """``X-Hub-Signature-256`` value: ``sha256=`` + hex HMAC-SHA256 of the raw body."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def sign_sha1(body: bytes, secret: str | bytes) -> str:
    """Legacy ``X-Hub-Signature`` (GitHub still sends it alongside the SHA-256 one)."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha1=" + hmac.new(key, body, hashlib.sha1).hexdigest()


def encode_payload(payload: Any) -> bytes:
    if isinstance(payload, (bytes, bytearray)):
        return bytes(payload)
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def webhook_headers(
    event: str,
    body: bytes,
    secret: str | bytes | None,
    guid: str,
    hook_id: int,
    app_id: int | None = None,
) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": guid,
        "X-GitHub-Hook-ID": str(hook_id),
    }
    if app_id:
        headers["X-GitHub-Hook-Installation-Target-Type"] = "integration"
        headers["X-GitHub-Hook-Installation-Target-ID"] = str(app_id)
    if secret:
        headers["X-Hub-Signature"] = sign_sha1(body, secret)
        headers["X-Hub-Signature-256"] = sign(body, secret)
    return headers


def _ids(body: bytes) -> tuple[str | None, int | None, int | None]:
    try:
        data = json.loads(body)
    except ValueError:
        return None, None, None
    if not isinstance(data, dict):
        return None, None, None
    action = data.get("action") if isinstance(data.get("action"), str) else None
    inst = data.get("installation") if isinstance(data.get("installation"), dict) else {}
    repo = data.get("repository") if isinstance(data.get("repository"), dict) else {}
    return action, inst.get("id"), repo.get("id")


def new_delivery(
    state: State,
    event: str,
    body: bytes,
    status_code: int,
    *,
    guid: str | None = None,
    redelivery: bool = False,
    delivered_at: float | None = None,
    duration: float = 0.0,
    url: str | None = None,
) -> Delivery:
    action, inst_id, repo_id = _ids(body)
    d = Delivery(
        id=state.next_delivery_id(),
        guid=guid or str(uuid.uuid4()),
        event=event,
        action=action,
        body=body,
        status_code=status_code,
        delivered_at=state.clock() if delivered_at is None else delivered_at,
        duration=duration,
        redelivery=redelivery,
        installation_id=inst_id,
        repository_id=repo_id,
        url=url,
    )
    state.deliveries.append(d)
    return d


async def deliver(
    session: aiohttp.ClientSession,
    state: State,
    url: str,
    event: str,
    body: bytes,
    secret: str | bytes | None,
    *,
    guid: str | None = None,
    hook_id: int,
    app_id: int | None = None,
    redelivery: bool = False,
    timeout: float = 10.0,
) -> Delivery:
    """POST one delivery and record it (status_code 0 when the receiver was unreachable)."""
    guid = guid or str(uuid.uuid4())
    headers = webhook_headers(event, body, secret, guid, hook_id, app_id)
    started = time.monotonic()
    status, resp_headers, resp_body = 0, {}, ""
    try:
        async with session.post(
            url, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout)
        ) as resp:
            status = resp.status
            resp_headers = dict(resp.headers)
            resp_body = (await resp.read())[:4096].decode("utf-8", "replace")
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        resp_body = f"{type(exc).__name__}: {exc}"
    d = new_delivery(
        state,
        event,
        body,
        status,
        guid=guid,
        redelivery=redelivery,
        duration=round(time.monotonic() - started, 3),
        url=url,
    )
    d.request_headers = headers
    d.response_headers = resp_headers
    d.response_body = resp_body
    return d


def delivery_summary(d: Delivery) -> dict:
    """An item of ``GET /app/hook/deliveries``."""
    from .models import iso

    return {
        "id": d.id,
        "guid": d.guid,
        "delivered_at": iso(d.delivered_at),
        "redelivery": d.redelivery,
        "duration": d.duration,
        "status": d.status,
        "status_code": d.status_code,
        "event": d.event,
        "action": d.action,
        "installation_id": d.installation_id,
        "repository_id": d.repository_id,
        "throttled_at": None,
    }


def delivery_detail(d: Delivery) -> dict:
    """``GET /app/hook/deliveries/{id}``."""
    try:
        payload = json.loads(d.body)
    except ValueError:
        payload = d.body.decode("utf-8", "replace")
    out = delivery_summary(d)
    out["url"] = d.url or ""
    out["request"] = {"headers": dict(d.request_headers), "payload": payload}
    out["response"] = {"headers": dict(d.response_headers), "payload": d.response_body}
    return out
