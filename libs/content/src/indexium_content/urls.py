"""The one URL policy: which URLs from GitHub, a manifest or a README we store, serve or render.

A URL passes only if it is an absolute ``http`` or ``https`` URL with a host and no
credentials, at most :data:`MAX_LENGTH` characters, and written so that every reader sees the
same URL: the WHATWG URL parser browsers use quietly *removes* tabs and newlines anywhere,
strips control characters at the ends, reads a backslash as a slash and ``http:evil`` as
``http://evil``, so a string that looks harmless to one parser can be a ``javascript:`` URL
or another host to the next. We refuse every such spelling instead of repairing it:

* leading and trailing C0 controls and spaces are trimmed (every parser does that);
* then any control character, space, Unicode space or format character (zero-width,
  bidirectional overrides), and the ASCII characters RFC 3986 never allows in a URL
  (``" < > \\ ^ ` { | }``) refuse the URL: no parser can turn it into something else;
* the scheme is read as RFC 3986 writes it (letter first, then ``[a-z0-9+.-]``), compared
  without case, and must be ``http`` or ``https``; ``data:``, ``vbscript:``, ``javascript:``
  and relative or protocol-relative (``//host``) URLs are refused;
* ``//`` must follow the scheme, then a host: a name of letters (any script), digits, ``-``
  and ``_`` labels, or an IPv6 literal in brackets, with an optional numeric port; a
  ``user:password@`` part is refused wherever it hides (an ``@`` before the path).

The URL that passes is returned as written, its scheme lower-cased. Entities such as
``&#x6A;`` are not decoded: we never decode them, and the templates escape ``&``, so a
browser shows them as text. Written here rather than with ``urllib.parse``, which accepts
``https:\\\\evil`` or ``java\\tscript:`` as other URLs than a browser does, and rather than a
URL library: what we need is a refusal rule, not a parser.

Callers: the indexer when it writes a card (``modcard``, logging each refusal once), the
manifest parsers (``indexium_jar.manifests._common``), and the API when it serves or renders a
stored link (``links``), so a row stored before this policy is safe too. A Markdown renderer
calls :func:`check` for every link and image it renders.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Mapping
from typing import NamedTuple

# 2,048 characters: the longest URL every browser, proxy and search engine is known to handle
# (the sitemap protocol's limit; Internet Explorer stopped at 2,083). A homepage or issue
# tracker is a few dozen; anything longer is a payload, and it would be stored per mod and
# repeated in every answer that carries the card.
MAX_LENGTH = 2048
SCHEMES = frozenset({"http", "https"})
# A card's links: at most this many, each named like ``homepage`` or ``issues`` (manifests
# such as fabric.mod.json let an author name a contact anything).
MAX_LINKS = 16
LINK_NAME = re.compile(r"[a-z][a-z0-9_-]{0,31}")

# Why a URL was refused: a fixed set, fit for a log field or a metric label.
NOT_TEXT = "not_text"
EMPTY = "empty"
TOO_LONG = "too_long"
FORBIDDEN_CHARACTER = "forbidden_character"
NOT_HTTP = "not_http"
NO_HOST = "no_host"
CREDENTIALS = "credentials"
BAD_HOST = "bad_host"
BAD_PORT = "bad_port"
REASONS = (NOT_TEXT, EMPTY, TOO_LONG, FORBIDDEN_CHARACTER, NOT_HTTP, NO_HOST, CREDENTIALS, BAD_HOST, BAD_PORT)

# What every URL parser strips from both ends (WHATWG: C0 control or space).
_ENDS = "".join(map(chr, range(0x21)))
# ASCII that refuses a URL anywhere: controls, space, DEL and what RFC 3986 never allows.
_FORBIDDEN_ASCII = re.compile(r'[\x00-\x20\x7f"<>\\^`{|}]')
# Unicode categories that refuse a URL: controls (C1 included), format characters (zero
# width, bidirectional overrides), surrogates, private use, unassigned, and every space.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_END_OF_AUTHORITY = re.compile(r"[/?#]")
_PORT = re.compile(r"[0-9]{1,5}")
_HOST_MAX = 253


class Verdict(NamedTuple):
    """``url``: the URL to store or show (None when refused); ``reason``: why not (one of
    :data:`REASONS`), None when it passed."""

    url: str | None
    reason: str | None


def check(value: object) -> Verdict:
    """The policy's answer for one value (anything: a manifest field may be a number)."""
    if not isinstance(value, str):
        return Verdict(None, NOT_TEXT)
    text = value.strip(_ENDS)
    if not text:
        return Verdict(None, EMPTY)
    if len(text) > MAX_LENGTH:
        return Verdict(None, TOO_LONG)
    if _FORBIDDEN_ASCII.search(text) or (not text.isascii() and _forbidden_unicode(text)):
        return Verdict(None, FORBIDDEN_CHARACTER)
    scheme = _SCHEME.match(text)
    if scheme is None or scheme[1].lower() not in SCHEMES:
        return Verdict(None, NOT_HTTP)
    rest = text[scheme.end():]
    if not rest.startswith("//"):
        return Verdict(None, NO_HOST)  # http:evil.com (a browser reads http://evil.com)
    end = _END_OF_AUTHORITY.search(rest, 2)
    authority = rest[2:end.start() if end else len(rest)]
    if "@" in authority:
        return Verdict(None, CREDENTIALS)
    reason = _authority_problem(authority)
    if reason is not None:
        return Verdict(None, reason)
    return Verdict(scheme[1].lower() + ":" + rest, None)


def allowed(value: object) -> str | None:
    """The URL to use, or None: :func:`check` for a caller that needs no reason."""
    return check(value).url


def links(mapping: object) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """A card's links (name -> URL) as they may be stored and shown, and what was dropped as
    (name, reason) pairs. Names are lower-cased and must look like ``homepage``; at most
    :data:`MAX_LINKS` are kept, in their order."""
    kept: dict[str, str] = {}
    dropped: list[tuple[str, str]] = []
    if not isinstance(mapping, Mapping):
        return kept, dropped
    for key, value in mapping.items():
        name = key.strip().lower() if isinstance(key, str) else ""
        if not LINK_NAME.fullmatch(name):
            dropped.append((name[:32] or "?", "bad_name"))
            continue
        if len(kept) >= MAX_LINKS and name not in kept:
            dropped.append((name, "too_many"))
            continue
        url, reason = check(value)
        if url is None:
            dropped.append((name, reason))
        else:
            kept[name] = url
    return kept, dropped


def safe_links(mapping: object) -> dict[str, str]:
    """:func:`links` without the report: what a serving path shows of a stored card."""
    return links(mapping)[0]


def _forbidden_unicode(text: str) -> bool:
    category = unicodedata.category
    return any(not ch.isascii() and category(ch) in _FORBIDDEN_CATEGORIES for ch in text)


def _authority_problem(authority: str) -> str | None:
    """None for ``host[:port]`` as the policy takes it, else the reason."""
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return BAD_HOST
        try:
            ipaddress.IPv6Address(authority[1:close])
        except ValueError:
            return BAD_HOST
        after = authority[close + 1:]
        if not after:
            return None
        return _port_problem(after[1:]) if after.startswith(":") else BAD_HOST
    host, colon, port = authority.partition(":")
    if not host:
        return NO_HOST
    if colon and (problem := _port_problem(port)) is not None:
        return problem
    if len(host) > _HOST_MAX:
        return BAD_HOST
    labels = host[:-1].split(".") if host.endswith(".") else host.split(".")
    for label in labels:
        if not label or len(label) > 63 or not all(ch.isalnum() or ch in "-_" for ch in label):
            return BAD_HOST
    return None


def _port_problem(port: str) -> str | None:
    return None if _PORT.fullmatch(port) and 0 < int(port) <= 65535 else BAD_PORT
