"""indexium_api.core.markup: release notes rendered once per text (a bounded LRU keyed by a digest),
raw changelogs neutralised, the README's stored HTML as served."""

from __future__ import annotations

from indexium_api.core import markup
from indexium_content import markdown


def test_notes_are_rendered_once_per_text_and_the_cache_is_bounded(monkeypatch):
    calls = []
    real = markup._render_notes
    monkeypatch.setattr(markup, "_render_notes", lambda *a: calls.append(a) or real(*a))
    monkeypatch.setattr(markup, "NOTES_CACHE", 3)
    monkeypatch.setattr(markup, "_rendered", type(markup._rendered)())
    repo = markdown.Repository("o", "r", "main", "")
    first = markup.notes("## Fixed\n\n- [x](javascript:alert(1)) crash", repo, "v1")
    assert markup.notes("## Fixed\n\n- [x](javascript:alert(1)) crash", repo, "v1") is first and len(calls) == 1
    assert "<h4>Fixed</h4>" in first and "href=\"javascript" not in first
    for i in range(5):
        markup.notes(f"note {i}", repo, "v1")
    assert len(markup._rendered) == 3
    assert markup.notes("", repo, "v1") == "" and markup.notes(None, repo, "v1") == ""


def test_a_long_note_links_to_its_release_past_the_cap():
    repo = markdown.Repository("o", "r", "main", "")
    html = markup.notes("\n\n".join("word " * 200 for _ in range(40)), repo, "v 2.0")
    assert html.endswith('<a href="https://github.com/o/r/releases/tag/v%202.0" rel="nofollow noopener noreferrer ugc">'
                         "Read more on GitHub</a></p>")
    assert len(html) <= markdown.NOTES_MAX_HTML + 200


def test_changelogs_for_the_json_apis_and_the_readme_row():
    assert markup.changelog("[a](javascript:alert(1)) [b](https://ok.example/)") == "[a](#) [b](https://ok.example/)"
    assert markup.changelog(None) is None
    assert markup.readme_html({"readme_html": "<p>x</p>"}) == "<p>x</p>"
    assert markup.readme_html({"readme_html": ""}) is None and markup.readme_html({}) is None
    assert markup.repository({"repo_full_name": "o/r", "default_branch": "dev"}) == markdown.Repository("o", "r", "dev", "")
    assert markup.repository({"repo_full_name": ""}) is None
