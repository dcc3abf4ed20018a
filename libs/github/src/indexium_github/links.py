"""RFC 8288 ``Link`` headers as GitHub sends them: ``<url>; rel="next", <url>; rel="last"``."""

from __future__ import annotations

import re

_LINK = re.compile(r'<([^>]*)>\s*((?:;\s*[^,;]+)*)')
_REL = re.compile(r'rel="?([^";]+)"?')


def parse_links(header: str | None) -> dict[str, str]:
    """rel -> URL for every link in the header (several rels in one link are all kept)."""
    out: dict[str, str] = {}
    for url, params in _LINK.findall(header or ""):
        for rel_value in _REL.findall(params):
            for rel in rel_value.split():
                out.setdefault(rel, url)
    return out


def next_link(header: str | None) -> str | None:
    return parse_links(header).get("next")
