"""The Markdown renderer (indexium_content.markdown): GitHub's flavour, repository-relative
links, and a README full of the OWASP filter-evasion payloads of indexium_devstack.xss with
none of them active in the output (read back with an HTML parser, as a browser would)."""

from __future__ import annotations

import html
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings, strategies as st
from markdown_it import MarkdownIt

from indexium_content import markdown, urls
from indexium_devstack import xss

REPO = markdown.Repository("fieldnotes", "harvest-almanac", "trunk")
ALLOWED_TAGS = markdown._TAGS
URL_ATTRIBUTES = {"href", "src", "srcset", "action", "formaction", "xlink:href", "poster", "background",
                  "data", "cite", "ping", "codebase", "dynsrc", "lowsrc"}


class Elements(HTMLParser):
    """Every start tag and its attributes, as a browser's tokenizer reads the output."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag


def assert_inert(output: str) -> None:
    """Nothing in ``output`` can run script, load from a non-http(s) URL or leave our allow-list."""
    for tag, attributes in Elements(output).elements:
        assert tag in ALLOWED_TAGS, (tag, output)
        for name, value in attributes.items():
            assert not name.startswith("on"), (tag, name, output)
            assert name not in ("style", "id", "name", "srcset", "action", "formaction"), (tag, name)
            if name in URL_ATTRIBUTES:
                assert urls.check(value).url == value, (tag, name, value)
        if tag == "input":
            assert attributes.get("type") == "checkbox" and "disabled" in attributes
    lowered = output.lower()
    for word in ("<script", "<style", "<iframe", "<form", "<object", "<embed", "<svg", "<math", "<base", "<meta",
                 "<link"):
        # (as text it is escaped: "&lt;script"; "javascript:" as text is only words)
        assert word not in lowered, (word, output)


def test_a_readme_of_owasp_payloads_renders_inert():
    rendered = markdown.render(xss.hostile_markdown(), REPO, max_chars=10**7)
    assert not rendered.truncated
    assert_inert(rendered.html)
    assert "&lt;script&gt;alert('in a fence')" in rendered.html  # shown as code, not run
    # every image the page will load is an http(s) URL the policy passed
    assert rendered.images and all(urls.check(u).url == u for u in rendered.images)


@pytest.mark.parametrize("payload", xss.REFUSED, ids=lambda p: repr(p)[:60])
def test_no_refused_url_survives_as_a_link_or_image(payload):
    source = f"[x]({payload}) ![y]({payload}) <a href=\"{payload}\">z</a> <img src='{payload}'>\n\n[r]: {payload}\n[w][r]"
    for repository in (None, REPO):
        out = markdown.render(source, repository)
        assert_inert(out.html)
        for tag, attributes in Elements(out.html).elements:
            for name in ("href", "src"):
                if name in attributes:
                    # a repository path, or an http(s) URL linkify found in the text: never the payload
                    assert attributes[name] != payload.strip() and urls.check(attributes[name]).url, (payload, attributes)


def test_github_flavour():
    out = markdown.render(
        "Text ~~gone~~ and www.example.com and https://example.org/x.\n\n"
        "| left | right |\n|:--|--:|\n| a | b |\n\n- [x] done\n- [ ] to do\n", REPO).html
    assert "<s>gone</s>" in out
    assert '<a href="http://www.example.com" rel="nofollow noopener noreferrer ugc">www.example.com</a>' in out
    assert '<a href="https://example.org/x" rel="nofollow noopener noreferrer ugc">' in out
    assert '<th align="left">left</th>' in out and '<td align="right">b</td>' in out and "style" not in out
    assert out.count('type="checkbox"') == 2 and 'checked="checked"' in out and 'class="task-list-item"' in out


def test_relative_links_and_images_resolve_at_the_default_branch():
    repo = markdown.Repository("o", "r", "dev", "docs/README.md")
    out = markdown.render(
        "[setup](setup.md#install) [root](/LICENSE) [up](../CHANGELOG.md) [here](#usage) [home](/)\n"
        "![logo](img/logo.png) <img src=\"/assets/banner.gif\" width=\"300\" height=\"10%\" align=\"center\">\n"
        "![abs](https://img.shields.io/badge/x-y-green.svg)", repo)
    assert 'href="https://github.com/o/r/blob/dev/docs/setup.md#install"' in out.html
    assert 'href="https://github.com/o/r/blob/dev/LICENSE"' in out.html
    assert 'href="https://github.com/o/r/blob/dev/CHANGELOG.md"' in out.html
    assert 'href="https://github.com/o/r/blob/dev/docs/README.md#usage"' in out.html
    assert 'href="https://github.com/o/r"' in out.html
    assert out.images == ("https://raw.githubusercontent.com/o/r/dev/docs/img/logo.png",
                          "https://raw.githubusercontent.com/o/r/dev/assets/banner.gif",
                          "https://img.shields.io/badge/x-y-green.svg")
    assert 'width="300"' in out.html and 'height="10%"' in out.html and 'align="center"' in out.html
    assert 'referrerpolicy="no-referrer"' in out.html and 'loading="lazy"' in out.html
    # a plain-http image is dropped (the page's CSP allows https images only); an http link stays
    http = markdown.render("![x](http://img.example/a.png) [y](http://site.example/)", repo)
    assert http.images == () and "img.example" not in http.html and 'href="http://site.example/"' in http.html
    # without a repository (no base), a path has nowhere to go: dropped
    assert "href" not in markdown.render("[setup](setup.md)").html


def test_headings_move_under_the_pages_h1():
    out = markdown.render("# One\n## Two\n<h1 align=\"center\">Raw</h1>\n\n###### Six", REPO).html
    assert "<h2>One</h2>" in out and "<h3>Two</h3>" in out and '<h2 align="center">Raw</h2>' in out
    assert "<h6>Six</h6>" in out and "<h1" not in out
    assert "<h4>One</h4>" in markdown.render("# One", REPO, heading_shift=3).html
    assert "<h1>One</h1>" in markdown.render("# One", REPO, heading_shift=0).html


def test_a_long_readme_is_cut_between_blocks_with_a_link_to_github():
    source = "\n\n".join(f"Paragraph {i} " + "words " * 40 for i in range(400))
    out = markdown.render(source, REPO, max_chars=4000)
    assert out.truncated and len(out.html) < 4000 + 300
    assert out.html.endswith('<p class="md-more"><a href="https://github.com/fieldnotes/harvest-almanac/blob/trunk/README.md" '
                             'rel="nofollow noopener noreferrer ugc">Read more on GitHub</a></p>')
    assert out.html.count("<p>") == out.html.count("</p>") - 1  # whole paragraphs only (+ the link's)
    assert "Paragraph 0 " in out.html and "Paragraph 399" not in out.html
    assert "Paragraph 399" in out.text or len(out.text) == markdown.PLAIN_MAX_CHARS
    short = markdown.render("Short.", REPO, max_chars=4000)
    assert not short.truncated and "Read more" not in short.html


def test_plain_text_is_what_a_reader_reads():
    text = markdown.plain_text(
        "# Harvest *Almanac*\n\nCrops **grow** `faster`.\n\n```\ngradle build\n```\n\n<div>raw html</div>\n\n"
        "![A field of wheat](x.png) [link text](https://x.io)\n")
    assert text == "Harvest Almanac Crops grow faster. A field of wheat link text"
    assert len(markdown.plain_text("word " * 10_000)) == markdown.PLAIN_MAX_CHARS
    assert markdown.render("a\x00b").text == "a\ufffdb"


# -- the raw Markdown the JSON APIs serve -------------------------------------------------------

def destinations(source: str) -> list[str]:
    """Every link and image destination a Markdown client (markdown-it, its own link check off)
    would follow, raw HTML's URL attributes included. (Without linkify: the bare addresses it
    finds in text are http(s), ftp, mailto or //host, none of which runs script, and they are
    text, not destinations the author wrote.)"""
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False})
    md.validateLink = lambda url: True
    found = []
    for token in md.parse(source):
        for child in [token, *(token.children or ())]:
            for name in ("href", "src"):
                if child.attrGet(name) is not None:
                    found.append(str(child.attrGet(name)))
            if child.type in ("html_inline", "html_block"):
                for _, attributes in Elements(child.content).elements:
                    found += [v or "" for k, v in attributes.items() if k in URL_ATTRIBUTES]
    return found


def assert_neutral(source: str) -> None:
    for destination in destinations(source):
        decoded = html.unescape(destination)
        # A refused destination becomes "#"; text the neutraliser left after it then reads as the rest
        # of a fragment ("#r.text()"): a same-page anchor, which can neither run nor leave the page.
        assert decoded.startswith(("#", "%23")) or decoded == "" or urls.check(decoded).url is not None, (
            destination, source)


@pytest.mark.parametrize("payload", xss.REFUSED, ids=lambda p: repr(p)[:60])
def test_neutralised_release_notes_link_nowhere_the_policy_refuses(payload):
    q = payload.replace('"', "&quot;")
    source = (f"See [the fix]({payload}) and ![shot]({payload}) and [ref][r] <{payload}>\n"
              f'<a href="{q}">raw</a> <img src=\'{payload}\'>\n\n[r]: {payload}\n')
    assert_neutral(markdown.neutralise_links(source))


def test_neutralising_keeps_good_links_and_resolves_repository_paths():
    source = ("[ok](https://example.com/a_(b)) [rel](docs/x.md) ![img](shot.png) [bad](javascript:alert(1))\n"
              "<a href=\"notes.md\">n</a>\n\n[d]: /CHANGELOG.md\n")
    out = markdown.neutralise_links(source, REPO)
    assert "[ok](https://example.com/a_(b))" in out
    assert "[rel](https://github.com/fieldnotes/harvest-almanac/blob/trunk/docs/x.md)" in out
    assert "![img](https://raw.githubusercontent.com/fieldnotes/harvest-almanac/trunk/shot.png)" in out
    assert "[bad](#)" in out
    assert '<a href="https://github.com/fieldnotes/harvest-almanac/blob/trunk/notes.md">' in out
    assert "[d]: https://github.com/fieldnotes/harvest-almanac/blob/trunk/CHANGELOG.md" in out
    assert markdown.neutralise_links("[rel](docs/x.md)") == "[rel](#)"
    plain = "Fixed crops. No links here: 1 < 2, a [bracket] and (parens)."
    assert markdown.neutralise_links(plain) == plain
    assert markdown.neutralise_links("") == "" and markdown.neutralise_links(None) == ""


_PIECES = st.sampled_from(
    ["[", "]", "(", ")", "<", ">", "!", "\"", "'", "`", "\n", " ", "\t", "&#", "x6A;", "&colon;", ":", "/", "\\",
     "javascript", "JaVaScRiPt", "data", "vbscript", "https://ok.example/", "a href=", "img src=", "]: ", "#",
     "onerror=", "alert(1)", "%0a", "*", "_", "~~", "|"])
_HOSTILE = st.one_of(
    st.lists(_PIECES, max_size=30).map("".join),
    st.builds(lambda p, a, b: a + p + b, st.sampled_from(xss.REFUSED),
              st.sampled_from(["[x](", "![x](", "<", "[r]: ", '<a href="', "<img src=", "[x](<"]),
              st.sampled_from([")", ">", "\n", '">x</a>', " x", ""])),
)


@settings(max_examples=600, deadline=None)
@given(_HOSTILE)
def test_fuzz_rendered_links_and_neutralised_markdown(source):
    assert_inert(markdown.render(source, REPO).html)
    assert_inert(markdown.render(source).html)
    assert_neutral(markdown.neutralise_links(source))


def test_the_cap_holds_after_the_sanitizer_adds_rel_to_every_link():
    source = "\n\n".join(" ".join(f"[{i}.{j}](https://e.x/{j})" for j in range(20)) for i in range(100))
    out = markdown.render(source, REPO, max_chars=8000)
    assert out.truncated and len(out.html) <= 8000 + 300
    assert markdown.render("x" * 9000, REPO, max_chars=8000).html.startswith('<p class="md-more">')
