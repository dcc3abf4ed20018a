"""/v2 query parameters in Modrinth's forms: JSON arrays in a string (``ids=["a","b"]``,
``loaders=["fabric"]``), booleans as true/false, and search facets (``[["categories:forge"]]``).
A bad one is a 400 naming it, as on /api/v1."""

from __future__ import annotations

import re

import msgspec
from aiohttp import web

from indexium_search import facets as facets_q
from indexium_search.facets import Facet

from ..core import params

# ids=[...] of a bulk GET: launchers ask for a whole modpack's projects or versions at once (hundreds);
# 1,000 of the longest keys fit in the request line the platform reads (web.MAX_REQUEST_LINE).
MAX_IDS = 1000
MAX_GROUPS = 20
_strings = msgspec.json.Decoder(list[str])
_groups = msgspec.json.Decoder(list[list[str] | str])
_FACET = re.compile(r"^\s*([a-z_]+)\s*(!=|>=|<=|:|=|>|<)\s*(.*?)\s*$", re.S)
KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # a public id or a slug; anything else cannot exist


def json_strings(request: web.Request, name: str, *, max_values: int = MAX_IDS, max_len: int = 64) -> list[str] | None:
    raw = params.text(request, name, max_len=max_values * (max_len + 4) + 2)
    if raw is None:
        return None
    try:
        values = _strings.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise params.bad(name, 'must be a JSON array of strings, e.g. ["fabric"]') from None
    if len(values) > max_values:
        raise params.bad(name, f"may hold at most {max_values} values")
    return list(dict.fromkeys(params.clean(name, v.strip(), max_len) for v in values if v.strip()))


def boolean(request: web.Request, name: str, default: bool | None) -> bool | None:
    raw = params.text(request, name, max_len=5)
    if raw is None:
        return default
    if raw not in ("true", "false"):
        raise params.bad(name, "must be true or false")
    return raw == "true"


def _facet(text: str) -> Facet:
    m = _FACET.match(params.clean("facets", text, 200))
    if m is None:
        raise params.bad("facets", f"entry {text[:40]!r} is not 'type:value'")
    field, op, value = m.groups()
    allowed = facets_q.FIELDS.get(field)
    if allowed is None:
        raise params.bad("facets", f"type {field!r} is not one of: {', '.join(facets_q.FIELDS)}")
    if op not in allowed:
        raise params.bad("facets", f"type {field!r} takes only the operators {' '.join(allowed)}")
    if not value:
        raise params.bad("facets", f"entry {text[:40]!r} has no value")
    if field in facets_q.NUMERIC:
        if not (value.isascii() and value.lstrip("-").isdigit() and len(value) < 19):
            raise params.bad("facets", f"type {field!r} takes an integer")
        return Facet(field, op, int(value))
    return Facet(field, op, value)


def facet_groups(request: web.Request) -> tuple[tuple[Facet, ...], ...]:
    """Outer list AND, inner list OR; a bare string stands for a group of one, as labrinth reads it."""
    raw = params.text(request, "facets", max_len=4000)
    if raw is None:
        return ()
    try:
        decoded = _groups.decode(raw)
    except (msgspec.ValidationError, msgspec.DecodeError):
        raise params.bad("facets", 'must be a JSON array of arrays of strings, e.g. [["categories:forge"]]') from None
    if len(decoded) > MAX_GROUPS:
        raise params.bad("facets", f"may hold at most {MAX_GROUPS} groups")
    groups = []
    for group in decoded:
        entries = [group] if isinstance(group, str) else group
        if len(entries) > params.MAX_VALUES:
            raise params.bad("facets", f"groups may hold at most {params.MAX_VALUES} entries")
        groups.append(tuple(dict.fromkeys(_facet(e) for e in entries)))
    return tuple(g for g in groups if g)


def _is(group, field: str, loaders: bool | None = None) -> bool:
    return all(f.field == field and f.op in (":", "=")
               and (loaders is None or (f.value in facets_q.LOADERS) == loaders) for f in group)


def split_per_file(groups) -> tuple[tuple[str, ...], tuple[str, ...], tuple]:
    """(loaders, game_versions, the other groups). The first group of loaders only and the first
    of game versions only go to search's own filter, which holds them on one file: a mod with
    Forge on 1.19.2 and Fabric on 1.20.1 does not match Forge + 1.20.1 (Modrinth's index would)."""
    loaders = versions = None
    rest = []
    for g in groups:
        if loaders is None and _is(g, "categories", loaders=True):
            loaders = tuple(str(f.value) for f in g)
        elif versions is None and _is(g, "versions"):
            versions = tuple(str(f.value) for f in g)
        else:
            rest.append(g)
    return loaders or (), versions or (), tuple(rest)
