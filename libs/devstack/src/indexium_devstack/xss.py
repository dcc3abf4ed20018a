"""Hostile URL and text payloads for the tests of the URL policy, the category vocabulary and
the rendered pages, after the families of the OWASP XSS Filter Evasion Cheat Sheet
(cheatsheets/XSS_Filter_Evasion_Cheat_Sheet.md of OWASP/CheatSheetSeries): mixed case,
decimal and hexadecimal character references with and without semicolons and padding,
embedded tab, newline, carriage return and NUL, leading spaces and meta characters,
``vbscript:``, ``livescript:`` and ``data:``, protocol-relative and backslash forms, user
information before a host, and the URL-string evasions (encoded, dotted, DWORD, hex, octal
hosts). Written for our inputs: a value that lands in ``href``/``src`` (``REFUSED``, and the
http URLs in ``ALLOWED`` that a filter of the cheat sheet's kind would have refused), and
topics that would be markup in a category list (``TOPICS``).
"""

from __future__ import annotations

SCRIPT = "alert('XSS')"
# A scheme every payload below must never reach a browser as.
DANGEROUS_SCHEMES = ("javascript", "vbscript", "livescript", "data", "file", "blob", "about")

_JS = "javascript:" + SCRIPT


def _decimal(text: str, pad: int = 0, semicolon: bool = True) -> str:
    return "".join(f"&#{ord(c):0{pad}d}{';' if semicolon else ''}" for c in text)


def _hex(text: str, semicolon: bool = True, upper: bool = False) -> str:
    return "".join(f"&#{'X' if upper else 'x'}{ord(c):X}{';' if semicolon else ''}" for c in text)


REFUSED: tuple[str, ...] = (
    # the javascript: directive, plainly and in mixed case
    _JS, "JaVaScRiPt:" + SCRIPT, "JAVASCRIPT:" + SCRIPT,
    "javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/\"/+/onmouseover=1/+/[*/[]/+alert(42);//'>",
    "javascript:alert(String.fromCharCode(88,83,83))",
    "javascript:document.location='http://www.google.com/'",
    "javascript://%0aalert(1)", "javascript://example.com/%0Aalert(1)",
    "javascript:fetch('/review').then(r=>r.text())",
    # character references: decimal, padded without semicolons, hexadecimal without semicolons
    _decimal(_JS), _decimal(_JS, pad=7, semicolon=False), _hex(_JS, semicolon=False), _hex(_JS, upper=True),
    "jav&#x09;ascript:" + SCRIPT, "jav&#x0A;ascript:" + SCRIPT, "jav&#x0D;ascript:" + SCRIPT,
    "&#x6A;avascript:" + SCRIPT, "javascript&#58;" + SCRIPT, "javascript&colon;" + SCRIPT,
    # embedded tab, newline, carriage return, NUL, soft hyphen; spaces and meta characters before
    "jav\tascript:" + SCRIPT, "jav\nascript:" + SCRIPT, "jav\rascript:" + SCRIPT, "java\x00script:" + SCRIPT,
    "java\u00adscript:" + SCRIPT, " \x0e  javascript:" + SCRIPT, "\x01\x02javascript:" + SCRIPT,
    "\u00a0javascript:" + SCRIPT, "\u2028javascript:" + SCRIPT, "\ufeffjavascript:" + SCRIPT,
    "javascript\t:" + SCRIPT, "java\u200bscript:" + SCRIPT,
    # other script schemes, and data:
    "vbscript:msgbox(\"XSS\")", "VBScript:msgbox(1)", "livescript:[code]",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K",
    "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciPjxzY3JpcHQ+YWxlcnQoMSk8L3NjcmlwdD48L3N2Zz4=",
    "DATA:text/html,<script>alert(1)</script>", "file:///etc/passwd", "blob:https://example.com/x",
    "about:blank", "ftp://example.com/", "mailto:someone@example.com", "irc://irc.esper.net/mods",
    # protocol-relative, backslashes, relative paths and a scheme without slashes
    "//www.google.com/", "//google", "\\\\evil.example\\x", "/\\evil.example", "https:\\\\evil.example",
    "https:/\\evil.example", "http:\\/evil.example", "http:evil.example", "https:/evil.example",
    "https:///evil.example", "/review", "review", "#", "?x=1", "",
    # user information before the host (the "feeling lucky" family) and a port that is not one
    "http://ha.ckers.org@google", "https://user:pass@example.com/", "https://example.com@evil.example/",
    "https://evil.example%40example.com@evil.example", "http://google:ha.ckers.org",
    "https://example.com:99999/", "https://example.com:-1/",
    # whitespace and encodings inside the URL (the "mixed encoding" family)
    "h \ntt  p://6\t6.000146.0x7.147/", "http://%77%77%77%2E%67%6F%6F%67%6C%65%2E%63%6F%6D",
    "https://exa mple.com/", "https://example.com/a b", "https://example.com/\"onmouseover=\"alert(1)",
    "https://example.com/<script>", "https://example.com/`x`", "https://example.com/{x}",
    "https://example.com/a|b", "https://example.com/^", "https://exam\u200eple.com/",
    "https://example.com\uff0fevil.example/", "https://example\u3002com/",
    # too long
    "https://example.com/" + "a" * 2100,
)

# http(s) URLs the policy keeps: odd, but a browser reads each as the same http(s) URL.
ALLOWED: tuple[str, ...] = (
    "https://example.com/", "HTTPS://EXAMPLE.COM/", "hTtP://example.com/a?b=c#d",
    "http://66.102.7.147/", "http://1113982867/", "http://0x42.0x0000066.0x7.0x93/",
    "http://0102.0146.0007.00000223/", "http://www.google.com./", "http://www.google.com/ogle.com/",
    "https://example.com/?q=&#x6A;avascript:alert(1)", "https://example.com/#javascript:alert(1)",
    "https://medium.com/@author/post", "https://[::1]:8443/x", "https://bücher.example/",
    "https://example.com:443/", " https://example.com/trimmed\n", "https://example.com/'quoted'",
)

# Topics a webhook may carry: none may become a category, and a tag is only a plain word.
TOPICS: tuple[str, ...] = (
    "<script>alert('topic')</script>", "<img src=x onerror=alert(1)>", "\"><svg/onload=alert(1)>",
    "javascript:alert(1)", "&lt;script&gt;", "fabric", "forge", "neoforge", "quilt", "minecraft",
    "minecraft-mod", "fabric-mod", "STORAGE ", "tech", "performance", "a" * 51, "-leading-hyphen",
    "under_score", "ünïcode", "two words", "",
)
