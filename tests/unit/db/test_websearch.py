from indexium_search.websearch import defuse


def test_runs_of_negation_become_one():
    assert defuse("-" * 33) == "-"
    assert defuse("sodium " + "-" * 40) == "sodium -"
    assert defuse("- " * 40 + "x") == "- x"
    assert defuse("-!-&-|-(-)-<-x") == "-x"


def test_other_text_is_untouched():
    for q in ("sodium", "fast -slow", '"fabric api" or forge', "x-y", "a - b", "-"):
        assert defuse(q) == q
