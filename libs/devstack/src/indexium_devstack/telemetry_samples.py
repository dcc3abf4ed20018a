"""Sample pings and accepted-ping events for tests, the benchmark and local demos.

The mods they name are written by ``indexium_db.queries.samples``.
"""

from __future__ import annotations

import gzip
import uuid
from typing import Any

import msgspec

from indexium_contracts import telemetry


def ping(server_uuid: uuid.UUID | str | None = None, mods: list[dict] | None = None,
         **overrides: Any) -> dict:
    body = {
        "protocol": 1,
        "server_uuid": str(server_uuid or uuid.uuid4()),
        "mods": mods if mods is not None else [{"slug": "sodium", "version": "0.5.8"}],
        "game_version": "1.20.1",
        "loader": "fabric",
        "java_version": "21.0.2",
        "os": "linux",
        "arch": "x86_64",
        "core_count": 8,
        "player_count": 3,
        "online_mode": True,
    }
    body.update(overrides)
    return {k: v for k, v in body.items() if v is not ...}  # `...` removes a field


def encode(body: dict, *, gzipped: bool = False) -> bytes:
    raw = msgspec.json.encode(body)
    return gzip.compress(raw) if gzipped else raw


def event(*, server: int | bytes, mods: list[tuple[uuid.UUID, str | None]], received_at: str,
          game_version: str = "1.20.1", loader: str = "fabric", java_version: str = "21",
          os: str = "linux", arch: str = "x86_64", ping_id: uuid.UUID | None = None):
    """A PingAccepted as the HTTP handler would publish it (``server`` stands for its hash)."""
    server_hash = server if isinstance(server, bytes) else server.to_bytes(32, "big")
    return telemetry.PingAccepted(
        ping_id=ping_id or uuid.uuid4(), received_at=received_at, server_hash=server_hash,
        mods=[telemetry.ModUse(m, v) for m, v in mods], game_version=game_version, loader=loader,
        java_version=java_version, os=os, arch=arch, core_count=4)
