"""Typed settings decoded once from the environment at start-up.

A service declares a frozen msgspec Struct whose field *names* are the
environment variable names (``msgspec.field(name="NATS_URL")``). ``load`` decodes
every field on its own so that one start-up error names every bad variable, not
just the first. Nothing else in the code base reads ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

T = TypeVar("T", bound=msgspec.Struct)

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class SettingsError(Exception):
    """Raised at start-up; the message names every missing or malformed variable."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid configuration:\n  " + "\n  ".join(problems))


def _coerce(raw: str, annotation: Any) -> Any:
    """Turn an environment string into something msgspec.convert can check."""
    if annotation is bool:
        lowered = raw.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError("expected true/false")
    origin = getattr(annotation, "__origin__", None)
    if annotation in (tuple[str, ...], list[str]) or origin in (tuple, list):
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def load(cls: type[T], environ: Mapping[str, str] | None = None) -> T:
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    problems: list[str] = []
    for field in msgspec.structs.fields(cls):
        name = field.encode_name
        if name not in env:
            if field.required:
                problems.append(f"{name}: required but not set")
            continue
        raw = env[name]
        try:
            value = msgspec.convert(_coerce(raw, field.type), field.type, strict=False)
        except (ValueError, msgspec.ValidationError) as exc:
            problems.append(f"{name}: {exc} (got {raw!r})")
            continue
        values[name] = value
    if problems:
        raise SettingsError(problems)
    try:
        settings = msgspec.convert(values, cls, strict=False)
    except msgspec.ValidationError as exc:  # cross-field checks in __post_init__
        raise SettingsError([str(exc)]) from exc
    return settings


class Common(msgspec.Struct, frozen=True, kw_only=True):
    """Variables every service reads."""

    nats_url: str = msgspec.field(default="nats://127.0.0.1:4222", name="NATS_URL")
    database_url: str = msgspec.field(
        default="postgresql://postgres@127.0.0.1:5432/indexium", name="DATABASE_URL"
    )
    log_format: str = msgspec.field(default="auto", name="INDEXIUM_LOG_FORMAT")  # auto|json|console
    log_level: str = msgspec.field(default="info", name="INDEXIUM_LOG_LEVEL")
    # Seconds a SIGTERM'd service may spend finishing in-flight work (k8s grace period is 30 s).
    shutdown_grace_s: float = msgspec.field(default=20.0, name="INDEXIUM_SHUTDOWN_GRACE_SECONDS")
    host: str = msgspec.field(default="0.0.0.0", name="HOST")
    # Seconds a connection may go without delivering a complete request head: from when it
    # opens, and again from the end of each response (aiohttp's keep-alive timer, which bytes
    # of a partial head do not extend, so it bounds idle and slow-header clients alike).
    # Longer than ingress-nginx's upstream keep-alive (60 s), so the proxy never reuses a
    # connection we are closing (a POST lost that way is a 502).
    http_keepalive_timeout_s: float = msgspec.field(default=75.0, name="INDEXIUM_HTTP_KEEPALIVE_TIMEOUT_SECONDS")
    # Seconds a request body may take to arrive in full (read_request_body): GitHub gives a
    # webhook delivery 10 s in all; a launcher's POST is a few KB.
    http_body_timeout_s: float = msgspec.field(default=30.0, name="INDEXIUM_HTTP_BODY_TIMEOUT_SECONDS")

    def __post_init__(self) -> None:
        if self.log_format not in ("auto", "json", "console"):
            raise ValueError("INDEXIUM_LOG_FORMAT must be auto, json or console")
        if self.shutdown_grace_s <= 0:
            raise ValueError("INDEXIUM_SHUTDOWN_GRACE_SECONDS must be positive")
        if self.http_keepalive_timeout_s <= 0:
            raise ValueError("INDEXIUM_HTTP_KEEPALIVE_TIMEOUT_SECONDS must be positive")
        if self.http_body_timeout_s <= 0:
            raise ValueError("INDEXIUM_HTTP_BODY_TIMEOUT_SECONDS must be positive")
