"""Atom documents (RFC 4287) from plain values: a pure function, no I/O.

Everything in an entry came from a release or a manifest, so the writer assumes every string
is hostile: ElementTree escapes ``& < >`` in text and quotes in attributes (so ``]]>`` and
``<script>`` are text), and :func:`xml_text` first drops what XML 1.0 cannot carry at all
(control characters other than tab and newlines, lone surrogates, U+FFFE/U+FFFF), which
ElementTree would write as they are and leave a document no parser accepts. HTML content
(``type="html"``) is the sanitizer's output, carried as escaped text, never as markup of
ours. Links are written only when the caller's URL passed the one URL policy (``feeds.py``);
an entry without one simply has no such link.

Written with the standard library's ElementTree rather than a feed library: what is needed is
a few elements in a fixed order and correct escaping, which it gives, and feed libraries
(feedgen) bring lxml for it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime

NAMESPACE = "http://www.w3.org/2005/Atom"
CONTENT_TYPE = "application/atom+xml; charset=utf-8"
# Characters XML 1.0 does not allow in a document (its Char production), C1 controls included
# as "discouraged" ones a reader may refuse.
_NOT_XML = re.compile("[^\t\n\r\u0020-\u007e\u00a0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def xml_text(value: object, limit: int | None = None) -> str:
    """``value`` as text an XML document can carry: characters XML forbids dropped, at most
    ``limit`` characters (an ellipsis ends a shortened one)."""
    text = _NOT_XML.sub("", "" if value is None else str(value))
    if limit is not None and len(text) > limit:
        text = text[: max(0, limit - 1)].rstrip() + "…"
    return text


def timestamp(value: datetime | None) -> str:
    """RFC 3339, in UTC, to the second (what Atom's date constructs take)."""
    value = value or EPOCH
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Link:
    href: str
    rel: str = "alternate"
    type: str | None = None
    title: str | None = None
    length: int | None = None


@dataclass(frozen=True)
class Category:
    term: str
    scheme: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    updated: datetime | None
    published: datetime | None = None
    authors: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    categories: tuple[Category, ...] = ()
    summary: str = ""
    content: str = ""
    content_type: str = "text"  # "text", or "html": sanitized HTML carried as escaped text


@dataclass(frozen=True)
class Feed:
    id: str
    title: str
    updated: datetime | None
    links: tuple[Link, ...] = ()
    subtitle: str = ""
    entries: tuple[Entry, ...] = field(default=())
    generator: str = "Indexium"
    # The feed's author, which RFC 4287 requires of every entry that names none of its own.
    authors: tuple[str, ...] = ("Indexium",)


TITLE_CHARS = 512
SUMMARY_CHARS = 2000


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: str | None) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_text(v, 2048) for k, v in attrs.items() if v is not None})
    if text is not None:
        el.text = text
    return el


def _links(parent: ET.Element, links: tuple[Link, ...]) -> None:
    for link in links:
        _el(parent, "link", href=link.href, rel=link.rel, type=link.type,
            title=xml_text(link.title, TITLE_CHARS) if link.title else None,
            length=str(link.length) if link.length is not None else None)


def render(feed: Feed) -> bytes:
    """The feed as a UTF-8 Atom document."""
    root = ET.Element("feed", {"xmlns": NAMESPACE})
    _el(root, "id", xml_text(feed.id, 2048))
    _el(root, "title", xml_text(feed.title, TITLE_CHARS), type="text")
    if feed.subtitle:
        _el(root, "subtitle", xml_text(feed.subtitle, SUMMARY_CHARS), type="text")
    _el(root, "updated", timestamp(feed.updated))
    _el(root, "generator", xml_text(feed.generator, 64))
    for name in feed.authors:
        _el(_el(root, "author"), "name", xml_text(name, 256))
    _links(root, feed.links)
    for entry in feed.entries:
        e = _el(root, "entry")
        _el(e, "id", xml_text(entry.id, 2048))
        _el(e, "title", xml_text(entry.title, TITLE_CHARS), type="text")
        _el(e, "updated", timestamp(entry.updated or entry.published))
        if entry.published is not None:
            _el(e, "published", timestamp(entry.published))
        for name in entry.authors:
            _el(_el(e, "author"), "name", xml_text(name, 256))
        _links(e, entry.links)
        for c in entry.categories:
            _el(e, "category", term=xml_text(c.term, 256), scheme=c.scheme,
                label=xml_text(c.label, 256) if c.label else None)
        if entry.summary:
            _el(e, "summary", xml_text(entry.summary, SUMMARY_CHARS), type="text")
        if entry.content:
            _el(e, "content", xml_text(entry.content), type=entry.content_type)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True)
