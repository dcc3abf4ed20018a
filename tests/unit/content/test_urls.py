"""The one URL policy (indexium_content.urls): the OWASP filter-evasion payloads, a browser's
reading of what passes, and a fuzz of both."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from indexium_content import urls
from indexium_devstack import xss

_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_SPECIAL = ("http", "https", "ws", "wss", "ftp", "file")


def as_a_browser_reads(url: str) -> tuple[str | None, str]:
    """(scheme, authority) as the WHATWG URL parser reads an href: C0 controls and spaces
    trimmed at the ends, tab/LF/CR removed anywhere, a backslash a slash in special schemes,
    any run of slashes after a special scheme's colon skipped."""
    s = url.strip(_C0_OR_SPACE)
    s = s.replace("\t", "").replace("\n", "").replace("\r", "")
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", s)
    if m is None:
        return None, ""
    scheme = m[1].lower()
    rest = s[m.end():]
    if scheme not in _SPECIAL:
        return scheme, ""
    rest = rest.replace("\\", "/").lstrip("/")
    return scheme, re.split(r"[/?#]", rest, maxsplit=1)[0]


def assert_safe(original: object, url: str) -> None:
    scheme, authority = as_a_browser_reads(url)
    assert scheme in ("http", "https"), (original, url)
    assert "@" not in authority, (original, url)
    assert authority and url.split("//", 1)[1].startswith(authority), (original, url)  # the host we saw
    assert len(url) <= urls.MAX_LENGTH
    assert not re.search(r'[\x00-\x20\x7f"<>\\^`{|}]', url), (original, url)
    assert urls.check(url) == (url, None)  # what passed passes again, unchanged


@pytest.mark.parametrize("payload", xss.REFUSED, ids=lambda p: repr(p)[:60])
def test_owasp_payloads_are_refused(payload):
    url, reason = urls.check(payload)
    assert url is None and reason in urls.REASONS


@pytest.mark.parametrize("payload", xss.ALLOWED, ids=lambda p: repr(p)[:60])
def test_odd_but_plain_http_urls_pass_as_a_browser_reads_them(payload):
    url, reason = urls.check(payload)
    assert reason is None and url is not None
    assert_safe(payload, url)


@pytest.mark.parametrize("value, reason", [
    (None, urls.NOT_TEXT), (42, urls.NOT_TEXT), (" \t", urls.EMPTY), ("https://x.io/" + "a" * 2048, urls.TOO_LONG),
    ("jav\tascript:alert(1)", urls.FORBIDDEN_CHARACTER), ("javascript:alert(1)", urls.NOT_HTTP),
    ("data:text/html,x", urls.NOT_HTTP), ("//evil.example", urls.NOT_HTTP), ("http:evil.example", urls.NO_HOST),
    ("https://u:p@example.com", urls.CREDENTIALS), ("https://exa%6Dple.com", urls.BAD_HOST),
    ("https://example.com:0", urls.BAD_PORT), ("https://[nope]/", urls.BAD_HOST), ("https://", urls.NO_HOST),
])
def test_reasons(value, reason):
    assert urls.check(value) == (None, reason)


def test_the_cap_is_2048_characters_after_trimming():
    url = "https://example.com/" + "a" * (urls.MAX_LENGTH - len("https://example.com/"))
    assert urls.allowed(url) == url
    assert urls.allowed(" " + url + "\n") == url
    assert urls.allowed(url + "a") is None


def test_scheme_is_lower_cased_and_the_rest_kept():
    assert urls.allowed("HTTPS://Example.COM/Path?Q=1#F") == "https://Example.COM/Path?Q=1#F"


def test_links_keep_named_http_links_and_report_the_rest():
    kept, dropped = urls.links({
        "homepage": "javascript:alert(1)", "Issues": "https://github.com/a/b/issues", "sources": "https://github.com/a/b",
        "<img src=x>": "https://example.com", "discord": "https://discord.gg/x", "email": "mailto:a@b.c", 7: "https://x.io",
    })
    assert kept == {"issues": "https://github.com/a/b/issues", "sources": "https://github.com/a/b",
                    "discord": "https://discord.gg/x"}
    assert dropped == [("homepage", "not_http"), ("<img src=x>", "bad_name"), ("email", "not_http"), ("?", "bad_name")]
    many = {f"link{i}": f"https://example.com/{i}" for i in range(urls.MAX_LINKS + 3)}
    kept, dropped = urls.links(many)
    assert len(kept) == urls.MAX_LINKS and [r for _, r in dropped] == ["too_many"] * 3
    assert urls.links("not a mapping") == ({}, [])
    assert urls.safe_links({"homepage": "https://ok.example"}) == {"homepage": "https://ok.example"}


# Pieces the cheat sheet's payloads are made of, joined at random: schemes in any case, the
# separators browsers repair, references, user information, hosts and the characters around them.
_PIECES = st.sampled_from([
    "javascript", "JaVaScRiPt", "java", "script", "vbscript", "data", "http", "https", "HTTPS", "ftp", ":", "/", "//",
    "\\", "\\\\", "@", "&#", "x6A", "&#58;", "&colon;", ";", "\t", "\n", "\r", "\x00", "\x0b", " ", "\u00a0",
    "\u200b", "\u2028", "\ufeff", "\u00ad", "example.com", "evil.example", "[::1]", ":80", ":99999", "?", "#", "%",
    "%0a", "'", '"', "<", ">", "alert(1)", ".", "a", "user:pass", "text/html,", "base64,",
])
_HOSTILE = st.one_of(
    st.lists(_PIECES, max_size=12).map("".join),
    st.text(max_size=40),
    st.builds(lambda a, b: a + b, st.sampled_from(xss.REFUSED + xss.ALLOWED), st.lists(_PIECES, max_size=4).map("".join)),
    st.builds(lambda a, b: b + a, st.sampled_from(xss.REFUSED + xss.ALLOWED), st.lists(_PIECES, max_size=4).map("".join)),
)


@settings(max_examples=1500, deadline=None)
@given(_HOSTILE)
def test_fuzz_whatever_passes_is_an_http_url_to_the_host_we_saw(value):
    url, reason = urls.check(value)
    if url is None:
        assert reason in urls.REASONS
    else:
        assert_safe(value, url)
