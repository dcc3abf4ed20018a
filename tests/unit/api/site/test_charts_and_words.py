"""Pure pieces of the site: the SVG chart, breakdown bars, and findings in an author's words."""

from __future__ import annotations

import re

from indexium_api.site import charts
from indexium_api.site.dashboard import describe_finding, repository_state


def test_chart_scales_to_a_round_top_and_escapes_text():
    svg = charts.servers_chart([("2026-11-01", 0), ("2026-11-02", 37), ("2026-11-03", 12)], title="<servers> & co")
    assert svg.startswith("<svg") and 'role="img"' in svg
    assert "<title id=\"chart-t\">&lt;servers&gt; &amp; co</title>" in svg
    assert ">50</text>" in svg  # 37 -> an axis up to 50
    points = re.search(r'<polyline points="([^"]+)"', svg).group(1).split()
    assert len(points) == 3
    ys = [float(p.split(",")[1]) for p in points]
    assert ys[0] > ys[2] > ys[1]  # 0 at the bottom, 37 highest


def test_chart_of_nothing_is_empty_and_of_zeros_is_flat():
    assert charts.servers_chart([], title="t") == ""
    assert ">1</text>" in charts.servers_chart([("2026-11-01", 0)], title="t")


def test_bars_are_sorted_shares():
    rows = charts.bars([("fabric", 1), ("forge", 3)])
    assert [(r["label"], r["pct"]) for r in rows] == [("forge", 75.0), ("fabric", 25.0)]


def test_findings_read_as_sentences():
    text = describe_finding({"rule": "process_builder", "location": "static_init"})
    assert text == ("This version starts another program on the player's computer (ProcessBuilder) in a static "
                    "initialiser (runs as soon as the class loads).")
    assert describe_finding({"rule": "brand_new_rule", "location": "elsewhere"}) == "This version brand new rule."


def test_repository_states_say_why_not():
    assert repository_state({"private": True}, None)[0] == "private"
    assert repository_state({}, None)[0] == "unknown"
    base = {"mod_id": None, "deleted": False, "removed": False, "private": False, "skip_reason": "no manifest",
            "state": "skipped", "hidden": False, "listed": False, "hidden_reason": None}
    assert repository_state({}, base) == ("not-a-mod", "Not a mod: no manifest.")
    assert repository_state({}, {**base, "removed": True})[0] == "removed"
    assert repository_state({}, {**base, "mod_id": 1, "hidden": True, "hidden_reason": "github: private"})[1] == \
        "A mod here, hidden: private."


def test_a_dead_lettered_check_again_is_listed_under_its_repository():
    """A catch-up request carries no webhook: its dead letter is shown, not a crash."""
    from datetime import datetime, timezone

    from indexium_api.site.dashboard import _dead_letters_by_repo
    from indexium_contracts import ingest

    event = ingest.CatchUpRequested(delivery_id="catch-up:7:ab", received_at="2026-12-01T00:00:00Z",
                                    github_repo_id=7, installation_id=3, requested_by="someone")
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    payload = ingest.encoder.encode(event)
    assert ingest.about_message(payload) == (7, None)  # what the job ledger records with it: no release
    assert ingest.about_message(b"not msgpack") == (None, None)
    rows = [{"github_repo_id": 7, "tag_name": None, "category": "permanent", "error": "gone", "created_at": at,
             "open_total": 3}]
    assert _dead_letters_by_repo(rows) == ({7: [{"tag": None, "category": "permanent", "error": "gone", "at": at}]},
                                           {7: 2})
