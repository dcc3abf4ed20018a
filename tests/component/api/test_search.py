"""GET /api/v1/mods on a real PostgreSQL: text search, facets per file, filters, sorts, validation."""

FABRIC_120 = (["fabric"], ["1.20.1"])


async def slugs(client, pairs=None, **query) -> list[str]:
    resp = await client.get("/api/v1/mods", params=pairs if pairs is not None else query)
    assert resp.status == 200, await resp.text()
    return [h["slug"] for h in (await resp.json())["hits"]]


async def test_hit_shape_and_paging(client, seed):
    for i in range(5):
        m = await seed.mod(f"mod{i}", summary="A mod", categories=["utility"])
        await seed.version(m, "1.0", [FABRIC_120], published=seed.T0 + seed.days(i))
    resp = await client.get("/api/v1/mods", params={"limit": "2", "offset": "1"})
    body = await resp.json()
    assert resp.status == 200 and body["total"] == 5 and (body["limit"], body["offset"]) == (2, 1)
    assert [h["slug"] for h in body["hits"]] == ["mod3", "mod2"]  # default without q: updated
    hit = body["hits"][0]
    assert hit["loaders"] == ["fabric"] and hit["game_versions"] == ["1.20.1"] and hit["latest_version"] == "1.0"
    assert hit["environment"] == "both" and hit["active_servers"] == 0 and hit["downloads"] == 5
    assert hit["updated_at"] == "2025-01-04T00:00:00Z" and hit["icon_url"] is None
    past = await (await client.get("/api/v1/mods", params={"offset": "50"})).json()
    assert past["hits"] == [] and past["total"] == 5  # an honest total past the end


async def test_facets_hold_on_one_file(client, seed):
    split = await seed.mod("split")  # forge on 1.19.2, fabric on 1.20.1: different files
    await seed.version(split, "1.0", [(["forge"], ["1.19.2"]), (["fabric"], ["1.20.1"])])
    both = await seed.mod("both")
    await seed.version(both, "1.0", [(["forge", "neoforge"], ["1.20.1"])])
    assert await slugs(client, game_version="1.20.1", loader="forge") == ["both"]
    assert sorted(await slugs(client, game_version="1.20.1", loader="fabric")) == ["split"]
    assert sorted(await slugs(client, game_version="1.20.1")) == ["both", "split"]
    assert sorted(await slugs(client, loader="forge")) == ["both", "split"]
    # Repeated values are alternatives within the facet, still per file.
    assert sorted(await slugs(client, [("game_version", "1.19.2"), ("game_version", "1.20.1"),
                                       ("loader", "forge")])) == ["both", "split"]


async def test_facets_ignore_versions_that_are_not_public(client, seed):
    m = await seed.mod("scanning")
    await seed.version(m, "1.0", [FABRIC_120])
    v2 = await seed.version(m, "2.0", [(["forge"], ["1.21"])])
    await seed.set_status(m, v2, "quarantined")
    assert await slugs(client, loader="forge") == []
    assert await slugs(client, game_version="1.21", loader="forge") == []
    assert await slugs(client, game_version="1.20.1", loader="fabric") == ["scanning"]


async def test_mods_without_a_public_version_are_not_listed(client, seed):
    pending = await seed.mod("pending")
    await seed.version(pending, "1.0", [FABRIC_120], status="pending_scan")
    quarantined = await seed.mod("quarantined")
    await seed.version(quarantined, "1.0", [FABRIC_120], status="quarantined")
    visible = await seed.mod("visible")
    await seed.version(visible, "1.0", [FABRIC_120])
    assert await slugs(client) == ["visible"]
    assert await slugs(client, q="pending") == []


async def test_full_text_english_russian_prefix_and_typos(client, seed):
    sodium = await seed.mod("sodium", name="Sodium", summary="Modern rendering engine", authors=["JellySquid"])
    await seed.version(sodium, "1.0", [FABRIC_120])
    chests = await seed.mod("storage", name="Хранилище", summary="Мод добавляет новые сундуки")
    await seed.version(chests, "1.0", [FABRIC_120])
    journey = await seed.mod("journeymap", name="JourneyMap", summary="Real-time mapping in game")
    await seed.version(journey, "1.0", [FABRIC_120])
    assert await slugs(client, q="renders") == ["sodium"]  # english stemming
    assert await slugs(client, q="сундук") == ["storage"]  # russian stemming
    assert await slugs(client, q="jellysquid") == ["sodium"]  # authors
    assert await slugs(client, q="sod") == ["sodium"]  # as-you-type prefix
    assert await slugs(client, q="journ") == ["journeymap"]
    assert await slugs(client, q="sodium r") == ["sodium"]  # a 1-letter word being typed is left out
    assert await slugs(client, q="sodim") == ["sodium"]  # typo: trigram fallback
    assert await slugs(client, q="jurneymap") == ["journeymap"]
    assert await slugs(client, q="renderng engne") == ["sodium"]  # words corrected, then full text
    assert await slugs(client, q="zzzzzz") == []


async def test_relevance_puts_exact_names_first(client, seed):
    extra = await seed.mod("sodium-extra", name="Sodium Extra", summary="More options for sodium")
    await seed.version(extra, "1.0", [FABRIC_120], downloads=1000)
    sodium = await seed.mod("sodium", name="Sodium", summary="Rendering")
    await seed.version(sodium, "1.0", [FABRIC_120], downloads=10)
    assert await slugs(client, q="sodium") == ["sodium", "sodium-extra"]


async def test_sorts(client, seed, db):
    a = await seed.mod("alpha", name="Alpha")
    await seed.version(a, "1.0", [FABRIC_120], published=seed.T0 + seed.days(3), downloads=10)
    b = await seed.mod("beta", name="beta")
    await seed.version(b, "1.0", [FABRIC_120], published=seed.T0 + seed.days(1), downloads=300)
    c = await seed.mod("gamma", name="Gamma")
    await seed.version(c, "1.0", [FABRIC_120], published=seed.T0 + seed.days(2), downloads=20)
    await db.execute("UPDATE mods SET created_at = $2 WHERE slug = $1", "alpha", seed.T0)
    await db.execute("UPDATE mods SET created_at = $2 WHERE slug = $1", "beta", seed.T0 + seed.days(9))
    await db.execute("UPDATE mods SET created_at = $2 WHERE slug = $1", "gamma", seed.T0 + seed.days(5))
    # Servers on the last complete UTC day count; today's partial day does not.
    await db.execute(
        """INSERT INTO mod_daily_stats (mod_id, day, servers) VALUES
           ($1, (now() AT TIME ZONE 'UTC')::date - 1, 7), ($2, (now() AT TIME ZONE 'UTC')::date - 1, 3),
           ($2, (now() AT TIME ZONE 'UTC')::date, 999)""", c["id"], a["id"])
    assert await slugs(client, sort="updated") == ["alpha", "gamma", "beta"]
    assert await slugs(client, sort="newest") == ["beta", "gamma", "alpha"]
    assert await slugs(client, sort="downloads") == ["beta", "gamma", "alpha"]
    assert await slugs(client, sort="name") == ["alpha", "beta", "gamma"]  # case-insensitive
    assert await slugs(client, sort="active_servers") == ["gamma", "alpha", "beta"]
    hits = (await (await client.get("/api/v1/mods", params={"sort": "active_servers"})).json())["hits"]
    assert [h["active_servers"] for h in hits] == [7, 3, 0]
    assert await slugs(client, sort="relevance") == ["beta", "gamma", "alpha"]  # no q: popularity


async def test_environment_category_and_author_filters(client, seed):
    # The repository's topics: "tech" means technology, "camera" stays a tag, "fabric" is a loader.
    client_mod = await seed.mod("zoom", environment="client", categories=["utility", "camera", "tech", "fabric"],
                                authors=["Ann Example"], owner="ann")
    await seed.version(client_mod, "1.0", [FABRIC_120])
    server_mod = await seed.mod("backups", environment="server", categories=["utility"], owner="bob")
    await seed.version(server_mod, "1.0", [FABRIC_120])
    both = await seed.mod("lib", environment="both", categories=["library"], authors=["Ann Example", "Cy"])
    await seed.version(both, "1.0", [FABRIC_120])
    assert sorted(await slugs(client, environment="client")) == ["lib", "zoom"]
    assert sorted(await slugs(client, environment="server")) == ["backups", "lib"]
    assert sorted(await slugs(client, category="utility")) == ["backups", "zoom"]
    assert await slugs(client, [("category", "utility"), ("category", "technology")]) == ["zoom"]
    assert await slugs(client, category="Tech, utility") == ["zoom"]  # a synonym means its category
    card = await (await client.get("/api/v1/mods/zoom")).json()
    assert (card["categories"], card["tags"]) == (["utility", "technology"], ["camera"])
    assert sorted(await slugs(client, author="ann example")) == ["lib", "zoom"]  # manifest author
    assert await slugs(client, author="BOB") == ["backups"]  # repository owner login


BAD = [
    ({"limit": "101"}, "limit"), ({"limit": "0"}, "limit"), ({"limit": "ten"}, "limit"),
    ({"offset": "-1"}, "offset"), ({"offset": "10001"}, "offset"), ({"sort": "popular"}, "sort"),
    ({"environment": "both"}, "environment"), ({"q": "x" * 201}, "q"), ({"q": "a\x00b"}, "q"),
    ([("q", "a"), ("q", "b")], "q"), ({"limit": "9" * 40}, "limit"), ({"author": "a" * 65}, "author"),
    ([("loader", "x")] * 21, "loader"), ({"game_version": "1" * 65}, "game_version"), ({"sort": ""}, "sort"),
    # a topic is never a category: filtering by one is a 400 naming the categories, not an empty page
    ({"category": "camera"}, "category"), ({"category": "<script>alert('topic')</script>"}, "category"),
    ({"category": "fabric"}, "category"),
]


async def test_bad_parameters_are_a_400_naming_them(client):
    for query, name in BAD:
        resp = await client.get("/api/v1/mods", params=query)
        assert resp.status == 400, query
        body = await resp.json()
        assert body["error"] == "invalid_parameter" and f"'{name}'" in body["description"], (query, body)


async def test_odd_but_valid_queries_never_fail(client, seed):
    m = await seed.mod("thing")
    await seed.version(m, "1.0", [FABRIC_120])
    for q in ['"unterminated', "a | b", "!!!", "-", "or", "':*", "\\", "% _", "🙂", "a & (b", "  "]:
        resp = await client.get("/api/v1/mods", params={"q": q})
        assert resp.status == 200, (q, await resp.text())


async def test_runs_of_dashes_are_a_search_not_a_500(client, seed):
    # websearch_to_tsquery reads each pending '-' as a NOT on a 32-deep stack.
    m = await seed.mod("sodium", summary="Fast rendering")
    await seed.version(m, "1.0", [FABRIC_120])
    for q in ("-" * 33, "-" * 200, "sodium " + "-" * 40, "- " * 40 + "sodium"):
        resp = await client.get("/api/v1/mods", params={"q": q})
        assert resp.status == 200, (q, await resp.text())
    assert await slugs(client, q="sodium " + "-" * 40) == ["sodium"]


async def test_a_broad_query_ranks_bounded_candidates_and_keeps_names_first(client, seed, db):
    from indexium_search import sqlpath

    # 8 matches of "magic"; with broad_matches=5 the query counts as broad and only the 3 most
    # downloaded matches (broad_candidates) plus names starting with "magic" are ranked.
    exact = await seed.mod("magic", name="Magic", summary="Spells")
    await seed.version(exact, "1.0", [FABRIC_120], downloads=1)
    prefix = await seed.mod("magic-pets", name="Magic Pets", summary="Pets")
    await seed.version(prefix, "1.0", [FABRIC_120], downloads=2)
    for i, downloads in enumerate([5000, 4000, 3000, 20, 10]):
        m = await seed.mod(f"other{i}", name=f"Other {i}", summary="Adds magic wands")
        await seed.version(m, "1.0", [FABRIC_120], downloads=downloads)
    named = await seed.mod("dark-magic", name="Dark Magic", summary="Curses")  # name match, unpopular
    await seed.version(named, "1.0", [FABRIC_120], downloads=3)
    sq = sqlpath.SearchQuery("magic", limit=3)
    rows, total = await sqlpath.search(db, sq, broad_matches=5, broad_candidates=3)
    assert [r["slug"] for r in rows] == ["magic", "magic-pets", "other0"]  # exact, prefix, then rank
    assert total >= 6  # an estimate once broad, never below what was seen
    everything, _ = await sqlpath.search(db, sqlpath.SearchQuery("magic", limit=10), broad_matches=5,
                                         broad_candidates=10)
    assert {r["slug"] for r in everything} >= {"magic", "magic-pets", "dark-magic", "other0", "other4"}
    # The trade: with 3 candidates, an unpopular mod naming the word mid-name is not ranked.
    page, _ = await sqlpath.search(db, sqlpath.SearchQuery("magic", limit=3), broad_matches=5, broad_candidates=3)
    assert "dark-magic" not in [r["slug"] for r in page]
    # A page past the candidates ranks every match, with the exact total.
    deep, deep_total = await sqlpath.search(db, sqlpath.SearchQuery("magic", limit=3, offset=3),
                                            broad_matches=5, broad_candidates=3)
    assert deep_total == 8 and len(deep) == 3
    # Not broad (the defaults): every match ranked, exact total.
    rows, total = await sqlpath.search(db, sqlpath.SearchQuery("magic", limit=3))
    assert total == 8 and [r["slug"] for r in rows] == ["magic", "magic-pets", "dark-magic"]


async def test_typos_corrected_by_word_similarity_and_remembered(seed, db):
    from indexium_search import sqlpath

    cozy = await seed.mod("cozy-lanterns", name="Cozy Lanterns", summary="Warm lights")
    await seed.version(cozy, "1.0", [FABRIC_120])
    other = await seed.mod("copper", name="Copper Pipes", summary="Pipes")
    await seed.version(other, "1.0", [FABRIC_120])
    corrections = sqlpath.Corrections()
    # "coy" is too far from "cozy" as a whole word (similarity 0.29) but 0.5 by word similarity:
    # corrected, then answered by full text (the name scan is not needed). "copper" is as
    # word-similar (0.5); ties go to the more similar whole word.
    rows, total = await sqlpath.search(db, sqlpath.SearchQuery("coy"), corrections=corrections)
    assert [r["slug"] for r in rows] == ["cozy-lanterns"] and total == 1
    assert corrections.get("coy") == (True, "cozy")
    await db.execute("DELETE FROM search_words WHERE word = 'cozy'")  # the memory answers now
    rows, _ = await sqlpath.search(db, sqlpath.SearchQuery("coy"), corrections=corrections)
    assert [r["slug"] for r in rows] == ["cozy-lanterns"]
    small = sqlpath.Corrections(max_words=2)
    for w in ("a1", "b1", "c1"):
        small.put(w, None)
    assert len(small) == 1  # bounded: cleared when full


async def test_a_letter_dropped_or_swapped_too_far_for_trigrams_is_corrected_one_edit_away(client, seed, db):
    """A short word with a letter dropped ("reux") or two letters swapped ("irno") shares too
    few trigrams with its word for either measure (similarity 0.375 / 0.25, word similarity
    0.4): the word one edit away corrects it, and full text answers, not the name scan, which
    found nothing at all for "reux". The trade pinned: a word two edits away ("rdx") is not
    corrected, and of several words one edit away the most similar wins ("bots": "boats" over
    "bits")."""
    from indexium_search import trigram
    from indexium_search import sqlpath

    for slug, name, summary in [("redux", "Better Redux", "Classic textures, redone"),
                                ("iron", "Iron Doors", "Doors of iron"), ("boats", "Fast Boats", "Quick boats"),
                                ("bits", "Bits and Bobs", "Little things")]:
        m = await seed.mod(slug, name=name, summary=summary)
        await seed.version(m, "1.0", [FABRIC_120])
    assert trigram.similarity("reux", "redux") < sqlpath.CORRECTION_SIMILARITY
    assert trigram.word_similarity("reux", "redux") < sqlpath.FUZZY_WORD_SIMILARITY
    assert await slugs(client, q="Reux") == ["redux"]
    assert await slugs(client, q="irno doors") == ["iron"]
    assert await slugs(client, q="bots") == ["boats"]
    assert await slugs(client, q="rdx") == []
    corrections = sqlpath.Corrections()
    rows, total = await sqlpath.search(db, sqlpath.SearchQuery("reux"), corrections=corrections)
    assert [r["slug"] for r in rows] == ["redux"] and total == 1
    assert corrections.get("reux") == (True, "redux") and corrections.get("rdx") == (False, None)


async def _readme(db, mod, text: str) -> None:
    from indexium_db.queries import mods as mods_q

    assert await mods_q.set_readme(db, mod["id"], text)


async def test_a_word_only_in_a_readme_finds_the_mod_below_name_and_summary_matches(client, seed, db):
    named = await seed.mod("quokka-lamps", name="Quokka Lamps", summary="Lights")
    await seed.version(named, "1.0", [FABRIC_120], downloads=5)
    summed = await seed.mod("marsupials", name="Marsupials", summary="Adds the quokka and friends")
    await seed.version(summed, "1.0", [FABRIC_120], downloads=5)
    readme = await seed.mod("outback", name="Outback", summary="Australian biomes")
    await seed.version(readme, "1.0", [FABRIC_120], downloads=10_000_000)  # popular, yet below
    await _readme(db, readme, "# Outback\n\nWombats, a quokka colony and kangaroos roam the new biomes.")
    assert await slugs(client, q="quokka") == ["quokka-lamps", "marsupials", "outback"]
    assert await slugs(client, q="wombat") == ["outback"]  # English stemming, as the summary's
    assert await slugs(client, q="kangaroos roam") == ["outback"]  # every word, in the README alone
    assert await slugs(client, q="outback kangaroo") == ["outback"]  # the name's and the README's words


async def test_set_readme_bounds_the_text_and_reports_a_change(seed, db):
    from indexium_db.queries import mods as mods_q

    m = await seed.mod("long-readme")
    assert await mods_q.set_readme(db, m["id"], "a\x00b " + "x" * 20_000)
    stored = await db.fetchval("SELECT readme_text FROM mods WHERE id = $1", m["id"])
    assert len(stored) == mods_q.README_MAX_CHARS and stored.startswith("ab ")
    assert not await mods_q.set_readme(db, m["id"], "a\x00b " + "x" * 20_000)  # unchanged
    # No numbers, addresses or overlong words among its lexemes: what every replica holds.
    assert await mods_q.set_readme(db, m["id"], "See https://example.org/x for 1.20.1 and " + "y" * 50 + " quokkas")
    assert await db.fetchval("SELECT tsvector_to_array(readme_vector) FROM mods WHERE id = $1",
                             m["id"]) == ["quokka", "see"]


async def test_names_written_together_and_words_joined_by_a_slash_are_indexed(client, seed, db):
    """Found by full text, at once: no typo correction and no name scan needed (both used to
    rescue some of these, slower and with noise: "spigot" was corrected to the catalogue word
    'bukkit/spigot/paper')."""
    from indexium_search import sqlpath

    for slug, name, summary in [("mrs", "MoreRefinedStorage", "Storage addon"),
                                ("boathud", "BoatHud", "Shows your speed"),
                                ("create2", "Create2", "Rotation"),
                                ("plugins", "Server Tools", "Runs on Bukkit/Spigot/Paper"),
                                ("fuel", "Fuel Tweaks", "Coal/Charcoal burn longer")]:
        m = await seed.mod(slug, name=name, summary=summary)
        await seed.version(m, "1.0", [FABRIC_120])
    for q, expected in [("refined storage", ["mrs"]), ("MoreRefinedStorage", ["mrs"]), ("boat hud", ["boathud"]),
                        ("hud", ["boathud"]), ("create", ["create2"]), ("spigot", ["plugins"]),
                        ("paper", ["plugins"]), ("charcoal", ["fuel"]), ("bukkit/spigot/paper", ["plugins"])]:
        corrections = sqlpath.Corrections()
        rows, total = await sqlpath.search(db, sqlpath.SearchQuery(q), corrections=corrections)
        assert ([r["slug"] for r in rows], total) == (expected, 1), q
        assert len(corrections) == 0, q  # (full text answered: no word was looked up)
        assert await slugs(client, q=q) == expected


async def test_an_abbreviation_of_the_name_or_the_manifest_id_finds_the_mod_first(client, seed, db):
    jei = await seed.mod("jei", name="Just Enough Items", summary="Item and recipe viewing")
    await seed.version(jei, "1.0", [FABRIC_120], downloads=50)
    addon = await seed.mod("jei-addons", name="JEI Addons", summary="More for JEI")  # starts with the query
    await seed.version(addon, "1.0", [FABRIC_120], downloads=5000)
    ae2 = await seed.mod("appliedenergistics2", name="Applied Energistics 2", summary="Storage networks")
    await seed.version(ae2, "1.0", [FABRIC_120], downloads=50)
    ae2stuff = await seed.mod("ae2stuff", name="AE2 Stuff", summary="Extensions for Applied Energistics 2")
    await seed.version(ae2stuff, "1.0", [FABRIC_120], downloads=5000)
    rei = await seed.mod("just_rei", name="Roughly Enough Items", summary="Recipe viewer")
    await seed.version(rei, "1.0", [FABRIC_120], downloads=50)
    assert (await slugs(client, q="jei"))[:2] == ["jei", "jei-addons"]
    assert (await slugs(client, q="AE2"))[:2] == ["appliedenergistics2", "ae2stuff"]
    assert await slugs(client, q="rei") == ["just_rei"]
    assert await slugs(client, q="just_rei") == ["just_rei"]  # the manifest id is one too
    assert await db.fetchval("SELECT abbreviations FROM mods WHERE slug = 'appliedenergistics2'") == [
        "ae2", "appliedenergistics2"]


async def test_a_query_no_mod_holds_whole_ranks_the_mods_holding_some_of_its_words(client, seed):
    kibe = await seed.mod("kibe", name="Kibe", summary="Miscellaneous features")
    await seed.version(kibe, "1.0", [FABRIC_120], downloads=5)
    for i in range(3):
        m = await seed.mod(f"utilities{i}", name=f"Fabric Utilities {i}", summary="Utilities")
        await seed.version(m, "1.0", [FABRIC_120], downloads=5000)
    resp = await client.get("/api/v1/mods", params={"q": "Kibe Utilities"})
    body = await resp.json()
    # The rarer word weighs more: Kibe first; the total counts every mod holding either word.
    assert [h["slug"] for h in body["hits"]][0] == "kibe" and body["total"] == 4
    assert (await slugs(client, q="kibe utilties"))[0] == "kibe"  # a typo corrected first
    assert "kibe" not in await slugs(client, q='"kibe utilities"')  # websearch syntax: as written
