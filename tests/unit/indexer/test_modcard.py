"""The mod card's rules, one set for both writers: the release role (whole card from a jar
manifest) and the GitHub role (the fields the repository owns, from a source manifest)."""

from __future__ import annotations

import json

import msgspec
from structlog.testing import capture_logs

from indexium_contracts import github
from indexium_indexer.github.probe import source_record
from indexium_indexer.modcard import SUMMARY_MAX, card_fields, release_card, summary_of
from indexium_jar.model import ModRecord


def _repo(**kw) -> github.Repository:
    base = {"id": 1, "name": "lumen", "full_name": "alice/lumen", "owner": {"id": 2, "login": "alice"},
            "html_url": "https://github.com/alice/lumen", "description": "Lights for Minecraft.",
            "topics": ["lighting"], "homepage": None}
    return msgspec.convert({**base, **kw}, github.Repository)


def _record(**kw) -> ModRecord:
    base = {"loader": "fabric", "manifest_path": "fabric.mod.json", "mod_id": "lumen", "version": "1.0"}
    return msgspec.convert({**base, **kw}, ModRecord)


def test_card_from_a_source_manifest_skips_build_templates():
    record = source_record("src/main/resources/fabric.mod.json", json.dumps({
        "schemaVersion": 1, "id": "lumen", "version": "${version}", "name": "Lumen",
        "description": "Dynamic lights.\n\nLong text.", "contact": {"issues": "https://example.org/issues"},
    }).encode())
    assert record is not None and record.mod_id == "lumen"
    fields = card_fields(_repo(homepage="https://lumen.example"), record,
                         {"issues": "https://old.example", "wiki": "https://wiki.example"})
    assert fields.name == "Lumen" and fields.summary == "Dynamic lights."
    assert fields.links == {"issues": "https://example.org/issues", "wiki": "https://wiki.example",
                            "homepage": "https://lumen.example", "sources": "https://github.com/alice/lumen"}
    assert fields.topics == ["lighting"]

    templated = source_record("src/main/resources/fabric.mod.json", json.dumps({
        "schemaVersion": 1, "id": "lumen", "version": "${version}", "name": "${mod_name}",
        "description": "${mod_description}"}).encode())
    fields = card_fields(_repo(), templated, {})
    assert fields.name is None  # keep the name the jar gave
    assert fields.summary == "Lights for Minecraft."  # the repository's description instead
    assert card_fields(_repo(description=None), None, {}).summary is None


def test_summary_is_the_first_paragraph_cut_to_the_limit():
    assert summary_of("  First line\nstill first.\n\nSecond.") == "First line still first."
    cut = summary_of("x" * 500)
    assert len(cut) == SUMMARY_MAX == 240 and cut.endswith("…")


def test_a_release_card_from_an_unfilled_template_is_named_by_the_mod_id():
    # A jar built without filling its template shows the same placeholders a source manifest does.
    card = release_card(_record(name="${mod_name}", description="{{description}}"), _repo())
    assert card.name == "lumen"
    assert card.summary == "Lights for Minecraft." and card.description == "Lights for Minecraft."


def test_the_repository_gives_sources_and_homepage_for_both_writers():
    # A manifest in an old jar may name the repository before a rename; the repository is
    # where the mod is indexed from.
    record = _record(name="Lumen", links={"sources": "https://github.com/alice/old-name",
                                          "homepage": "https://old.example", "issues": "https://i.example"})
    repo = _repo(homepage="https://lumen.example")
    expected = {"sources": "https://github.com/alice/lumen", "homepage": "https://lumen.example",
                "issues": "https://i.example"}
    assert release_card(record, repo).links == expected
    assert card_fields(repo, record, {}).links == expected
    # Without a repository homepage the manifest's stays.
    assert release_card(record, _repo()).links["homepage"] == "https://old.example"


def test_nul_is_dropped_from_every_card_text_for_both_writers():
    record = _record(name="Lu\x00men", description="Dyn\x00amic.", authors=[{"name": "al\x00ice"}],
                     links={"issues": "https://i.example/\x00"})
    card = release_card(record, _repo())
    assert (card.name, card.summary, card.description, card.authors) == ("Lumen", "Dynamic.", "Dynamic.", ["alice"])
    fields = card_fields(_repo(), record, {})
    assert (fields.name, fields.summary) == ("Lumen", "Dynamic.")
    assert fields.links["issues"] == "https://i.example/"


def test_a_name_is_cut_to_what_mods_name_holds():
    assert release_card(_record(name="n" * 300), _repo()).name == "n" * 128


def test_every_link_passes_the_url_policy_and_a_refusal_is_logged_once():
    # The webhook's repository.homepage was copied unchecked: javascript: became the mod page's
    # Homepage link, and an operator's click approved every held version (issue 33).
    record = _record(links={"homepage": "https://manifest.example", "issues": "https://example.org/i"})
    with capture_logs() as logged:
        fields = card_fields(
            _repo(homepage="javascript:fetch('/review')", html_url="https://github.com/alice/lumen"), record,
            {"wiki": "jav\tascript:alert(1)", "discord": "https://discord.gg/x", "donate": "https://u:p@pay.example"})
    assert fields.links == {"discord": "https://discord.gg/x", "homepage": "https://manifest.example",
                            "issues": "https://example.org/i", "sources": "https://github.com/alice/lumen"}
    refused = [(e["link"], e["source"], e["reason"]) for e in logged if e["event"] == "url_refused"]
    assert refused == [("wiki", "stored", "forbidden_character"), ("donate", "stored", "credentials"),
                       ("homepage", "repository", "not_http")]
    assert all("javascript" not in str(e) for e in logged)  # the URL itself is never logged
    for homepage in ("JaVaScRiPt:alert(1)", " data:text/html,<script>alert(1)</script>", "//evil.example",
                     "https:\\\\evil.example", "vbscript:msgbox(1)", "http://user@evil.example"):
        assert "homepage" not in card_fields(_repo(homepage=homepage), None).links
        assert "homepage" not in release_card(_record(), _repo(homepage=homepage)).links
