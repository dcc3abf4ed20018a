"""indexed.exact_union: when the index's matches of a query's parts (a phrase as all its
lexemes anywhere) are exactly PostgreSQL's."""

from indexium_search.indexed import exact_union
from indexium_search.searchindex import Part


def test_a_phrase_part_is_exact_only_when_an_exact_part_covers_it():
    phrase = Part((("olga", "s"), ("magic",)))  # simple's 'olga' <-> 's' & 'magic'
    assert exact_union([Part((("olga",),))])
    assert not exact_union([phrase])
    assert exact_union([Part((("olga",), ("magic",))), phrase])  # english's 'olga' & 'magic'
    assert not exact_union([Part((("olga",), ("magi",))), phrase])  # a stem not among its lexemes
    # a prefix part covers it when its prefix starts one of the phrase part's lexemes
    assert exact_union([Part((("olga",), ("s",), ("ma",)), prefix=True), phrase])
    assert not exact_union([Part((("olga",), ("s",), ("mu",)), prefix=True), phrase])
    # and a phrase part's own prefix word can carry it
    typed = Part((("olga", "s"), ("magic",)), prefix=True)
    assert exact_union([Part((("olga",), ("s",), ("mag",)), prefix=True), typed])
    assert not exact_union([Part((("olga",), ("s",), ("magicka",)), prefix=True), typed])
    assert not exact_union([Part((("olga",), ("magic",))), typed])  # 'magic' itself may be absent
