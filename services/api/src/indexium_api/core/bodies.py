"""Strict JSON bodies of the API's POST routes (lookups, players' tools, subscriptions): unknown
fields and wrong types are a 400 naming the field. ``read`` is the one reader: each route's
msgspec.Struct, a decoder made once per struct."""

from __future__ import annotations

import functools

import msgspec
from aiohttp import web

from indexium_platform.web import ApiError, read_request_body


class ByHashes(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    hashes: list[str]
    algorithm: str | None = None


class UpdateCheck(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    hashes: list[str]
    algorithm: str | None = None
    loaders: list[str] = []
    game_versions: list[str] = []
    version_types: list[str] = []


@functools.cache
def _decoder(cls: type[msgspec.Struct]) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(cls)


async def read(request: web.Request, cls: type[msgspec.Struct], limit: int | None = None):
    """``limit``: bytes (413 beyond them); default the app's client_max_size."""
    raw = await read_request_body(request, limit)
    try:
        return _decoder(cls).decode(raw)
    except msgspec.ValidationError as exc:
        # msgspec names the field: "Expected `array`, got `str` - at `$.hashes`"
        raise ApiError(400, "invalid_body", f"Invalid request body: {exc}.") from None
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body must be a JSON object.") from None
