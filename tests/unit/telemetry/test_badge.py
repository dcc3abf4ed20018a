"""The servers badge: number formatting and well-formed, escaped SVG (pure)."""

import xml.etree.ElementTree as ET

import pytest

from indexium_api.v1.analytics import compact, render_badge, text_width


@pytest.mark.parametrize("n,text", [(0, "0"), (7, "7"), (999, "999"), (1000, "1k"), (1234, "1.2k"),
                                    (9999, "9.9k"), (10_000, "10k"), (56_789, "56k"), (999_999, "999k"),
                                    (1_250_000, "1.2M"), (3_000_000_000, "3B")])
def test_compact(n, text):
    assert compact(n) == text


@pytest.mark.parametrize("label", ["servers", "<script>", 'a"b', "a&b", "x'y", "ünïcødé"])
def test_badge_is_well_formed_xml_whatever_the_label(label):
    root = ET.fromstring(render_badge(label, "12k", "#4c1"))
    texts = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts == [label, label, "12k", "12k"]


def test_wider_text_makes_a_wider_badge():
    narrow = ET.fromstring(render_badge("servers", "1", "#4c1"))
    wide = ET.fromstring(render_badge("servers", "100000", "#4c1"))
    assert int(wide.get("width")) > int(narrow.get("width"))
    assert text_width("mmm") > text_width("iii")
