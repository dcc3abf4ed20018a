from indexium_db.queries.mods import slug_base, slug_candidates


def test_slug_base_is_url_safe_and_bounded():
    assert slug_base("Sodium") == "sodium"
    assert slug_base("my.mod id!") == "my-mod-id"
    assert slug_base("x") == "x-mod"
    assert len(slug_base("a" * 100)) == 64


def test_candidates_are_deterministic_and_distinct():
    c = slug_candidates("sodium", "CaffeineMC", 42)
    assert c == ["sodium", "sodium-caffeinemc", "sodium-42"]
    assert slug_candidates("sodium", "CaffeineMC", 42) == c
    long = slug_candidates("a" * 64, "owner", 123456789)
    assert all(len(s) <= 64 for s in long) and len(set(long)) == 3
