"""The catalogue's maps as events change them between two whole re-reads (pure; no I/O)."""

from __future__ import annotations

import uuid

from indexium_telemetry.catalogue import Entry, ModCatalogue
from indexium_telemetry.protocol import ModEntry

A, B, C = (uuid.UUID(int=i) for i in (1, 2, 3))


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _known(cat: ModCatalogue, **named) -> uuid.UUID | None:
    return cat.resolve(ModEntry(**named))


def test_an_event_during_a_reread_survives_the_swap():
    clock = Clock()
    cat = ModCatalogue(clock)
    cat.replace([{"id": A, "slug": "alpha"}], [{"manifest_id": "alpha", "id": A}], started=clock.now)
    started = clock.now = 200.0  # a re-read begins; its snapshot predates B's commit
    clock.now = 201.0
    cat.apply(Entry(B, "beta", ("beta", "beta_forge")))
    clock.now = 202.0
    cat.replace([{"id": A, "slug": "alpha"}], [{"manifest_id": "alpha", "id": A}], started=started)
    assert _known(cat, slug="beta") == B and _known(cat, manifest_id="BETA_forge") == B
    assert _known(cat, mod_id=B) == B and len(cat) == 2
    # The next re-read began after the event: it has B itself; the event is let go.
    clock.now = 300.0
    cat.replace([{"id": A, "slug": "alpha"}], [], started=clock.now)
    assert _known(cat, slug="beta") is None


def test_a_newcomer_takes_no_id_another_mod_holds_and_a_hidden_mod_lets_its_ids_go():
    cat = ModCatalogue(Clock())
    cat.replace([{"id": A, "slug": "sodium"}], [{"manifest_id": "sodium", "id": A}])
    cat.apply(Entry(B, "sodium-copy", ("sodium", "copy_extra")))
    assert _known(cat, manifest_id="sodium") == A  # the holder keeps it until the next re-read
    assert _known(cat, manifest_id="copy_extra") == B
    cat.apply(Entry(A, None))  # sodium hidden
    assert _known(cat, slug="sodium") is None and _known(cat, mod_id=A) is None
    assert _known(cat, manifest_id="sodium") is None  # B gets it at the next re-read, in order
    # A version of B hidden: the ids only its jars named go with it.
    cat.apply(Entry(B, "sodium-copy", ("sodium",)))
    assert _known(cat, manifest_id="copy_extra") is None and _known(cat, manifest_id="sodium") == B
    cat.apply(Entry(C, None))  # a mod nobody knew, gone: nothing happens
    assert len(cat) == 1


def test_a_rebuild_keeps_the_ownership_order_and_an_event_lets_go_of_the_ids_it_read():
    """The maps a whole re-read builds (the old ones dropped first) resolve as before: an exact
    id first, then case-folded in the claims' ownership order; an event later lets go of what
    the re-read gave the mod (its ids held as a tuple since)."""
    rows = [{"id": A, "slug": "alpha"}, {"id": B, "slug": "beta"}]
    claims = [{"manifest_id": "MyMod", "id": A}, {"manifest_id": "mymod", "id": B},
              {"manifest_id": "alpha_extra", "id": A}]
    cat = ModCatalogue(Clock())
    for _ in range(2):  # a second re-read over the first gives the same answers
        assert cat.replace(rows, claims) == 2
        assert _known(cat, manifest_id="mymod") == B and _known(cat, manifest_id="MyMod") == A
        assert _known(cat, manifest_id="MYMOD") == A  # case-folded: the first claim in order
        assert _known(cat, manifest_id="ALPHA_EXTRA") == A and _known(cat, slug="beta") == B
    cat.apply(Entry(A, "alpha", ("alpha_extra",)))  # A's version naming MyMod hidden
    assert _known(cat, manifest_id="MyMod") is None and _known(cat, manifest_id="MYMOD") is None
    assert _known(cat, manifest_id="mymod") == B and _known(cat, manifest_id="alpha_extra") == A
    cat.apply(Entry(A, None))  # A hidden: nothing resolves to it
    assert _known(cat, manifest_id="alpha_extra") is None and _known(cat, mod_id=A) is None
    assert len(cat) == 1
