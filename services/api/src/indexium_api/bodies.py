"""Strict JSON bodies of the POST lookups: unknown fields and wrong types are a 400 naming the field."""

from __future__ import annotations

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


_decoders = {cls: msgspec.json.Decoder(cls) for cls in (ByHashes, UpdateCheck)}


async def read(request: web.Request, cls: type[msgspec.Struct]):
    raw = await read_request_body(request)  # bounded by the app's client_max_size (413 beyond it)
    try:
        return _decoders[cls].decode(raw)
    except msgspec.ValidationError as exc:
        # msgspec names the field: "Expected `array`, got `str` - at `$.hashes`"
        raise ApiError(400, "invalid_body", f"Invalid request body: {exc}.") from None
    except msgspec.DecodeError:
        raise ApiError(400, "invalid_body", "The request body must be a JSON object.") from None
