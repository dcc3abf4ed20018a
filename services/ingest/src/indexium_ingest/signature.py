"""GitHub's X-Hub-Signature-256: HMAC-SHA256 of the raw body, compared in constant time."""

from __future__ import annotations

import hashlib
import hmac


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secrets: tuple[str, ...], body: bytes, header: str | None) -> bool:
    if not header or not header.startswith("sha256=") or not header.isascii():
        return False  # (compare_digest takes only ASCII text; a signature is hex anyway)
    # Check every secret (no early exit) so timing does not tell which one matched.
    ok = False
    for secret in secrets:
        ok |= hmac.compare_digest(sign(secret, body), header)
    return ok
