"""GitHub topics onto the category vocabulary (indexium_content.categories)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from indexium_content import categories as cats
from indexium_devstack import xss


def test_the_vocabulary_is_modrinths_mod_categories():
    assert cats.CATEGORIES == (
        "adventure", "cursed", "decoration", "economy", "equipment", "food", "game-mechanics", "library", "magic",
        "management", "minigame", "mobs", "optimization", "social", "storage", "technology", "transportation",
        "utility", "worldgen")


def test_the_synonym_table_is_small_reasoned_and_unambiguous():
    words = [w for w, _, _ in cats._SYNONYM_TABLE]
    assert len(words) == len(set(words)) <= 60
    for word, category, reason in cats._SYNONYM_TABLE:
        assert category in cats.VOCABULARY and reason.strip()
        assert cats.TOPIC.fullmatch(word) and word not in cats.VOCABULARY
        assert word not in cats.LOADERS and word not in cats.GENERIC
    assert not (cats.LOADERS & cats.VOCABULARY) and not (cats.GENERIC & cats.VOCABULARY)


def test_classify_topics():
    topics = ["minecraft", "minecraft-mod", "fabric-mod", "fabric", "forge", "neoforge", "Tech", "storage",
              "performance", "lighting", "shaders", "lighting", "<script>alert('topic')</script>", "a" * 51]
    got = cats.classify(topics)
    assert got.categories == ["technology", "storage", "optimization"]
    assert got.tags == ["lighting", "shaders"]
    assert dict(got.dropped) == {"minecraft": "generic", "minecraft-mod": "generic", "fabric-mod": "loader",
                                 "fabric": "loader", "forge": "loader", "neoforge": "loader",
                                 "<script>alert('topic')</script>": "not_a_topic", "a" * 50: "not_a_topic"}


def test_hostile_topics_never_become_categories_or_markup():
    got = cats.classify(xss.TOPICS)
    assert set(got.categories) <= cats.VOCABULARY
    assert not any(set(t) & set("<>\"'&;: _") for t in got.tags)
    assert "fabric" not in got.categories + got.tags and "minecraft" not in got.tags


def test_tags_are_capped_at_githubs_twenty():
    got = cats.classify([f"topic-{i}" for i in range(25)])
    assert len(got.tags) == cats.MAX_TAGS and [r for _, r in got.dropped] == ["too_many"] * 5


def test_category_of_filter_values_and_serving_guards():
    assert cats.category_of("Technology ") == "technology" and cats.category_of("tech") == "technology"
    assert cats.category_of("fabric") is None and cats.category_of("<b>") is None and cats.category_of(3) is None
    # Serving keeps exact vocabulary names only: a row written before the vocabulary shows
    # (and is found by) only what every path agrees on.
    assert cats.only_categories(["tech", "storage", "<script>", "fabric", "storage", None]) == ["storage"]
    assert cats.only_tags(["lighting", "<b>x</b>", "lighting", "Upper"] + [f"t{i}" for i in range(30)])[:2] == [
        "lighting", "t0"]
    assert len(cats.only_tags([f"t{i}" for i in range(30)])) == cats.MAX_TAGS


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=60), st.sampled_from(xss.TOPICS + cats.CATEGORIES
                                                                  + tuple(cats.LOADERS) + tuple(cats.SYNONYMS))),
                max_size=40))
def test_fuzz_classify(topics):
    got = cats.classify(topics)
    assert set(got.categories) <= cats.VOCABULARY and len(got.categories) == len(set(got.categories))
    assert all(cats.TOPIC.fullmatch(t) for t in got.tags) and len(got.tags) <= cats.MAX_TAGS
    assert not (set(got.tags) & (cats.LOADERS | cats.GENERIC | cats.VOCABULARY | set(cats.SYNONYMS)))
    assert cats.only_categories(got.categories) == got.categories and cats.only_tags(got.tags) == got.tags
