"""A subscription's signing secret, and the signature every delivery carries.

The secret is derived, never stored: ``HMAC-SHA256(INDEXIUM_NOTIFY_SECRET_KEY, "subscription
secret:" || salt)`` with a random 16-byte salt kept in the subscription's row. The API shows
it once, when the subscription is created; the notify role derives it again to sign. A copy of
the database (a backup, a replica) holds only salts: without the operator's key (a Kubernetes
Secret given to the API and the notify role, nothing else) it signs nothing. Changing the key
changes every subscription's secret (docs/notifications.md says how to rotate).

Deliveries are signed as GitHub signs its webhooks: ``X-Indexium-Signature-256: sha256=<hex
HMAC-SHA256(secret, body)>``, the secret's UTF-8 bytes as the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

SALT_BYTES = 16
MIN_KEY_BYTES = 32
PREFIX = "whsec_"


def new_salt() -> bytes:
    return os.urandom(SALT_BYTES)


def secret_for(key: bytes, salt: bytes) -> str:
    digest = hmac.new(key, b"subscription secret:" + bytes(salt), hashlib.sha256).digest()
    return PREFIX + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def signature(secret: str, body: bytes) -> str:
    """The X-Indexium-Signature-256 value of ``body``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    """What a receiver does (docs/notifications.md shows the same in ten lines)."""
    return header is not None and hmac.compare_digest(signature(secret, body), header)
