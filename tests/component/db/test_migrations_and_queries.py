"""Migrations and query modules on a real PostgreSQL."""

import uuid
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from indexium_db import migrate
from indexium_db.queries import catalog as catalog_q, mods as mods_q, versions as versions_q
from indexium_search import sqlpath

CARD = mods_q.Card(name="Sodium", summary="Fast rendering", description="Fast rendering\n\nMore.",
                 authors=["JellySquid"], licenses=["LGPL-3.0"], links={}, environment="client")


async def test_migrations_are_recorded_and_rerunning_is_a_no_op(db):
    assert await migrate.migrate(db) == []
    names = [r["version"] for r in await db.fetch("SELECT version FROM schema_migrations ORDER BY 1")]
    assert names == [v for v, _ in migrate.available()]


async def make_mod(db, repo_id=1, manifest_id="sodium", owner="caffeine", card=CARD):
    await mods_q.upsert_author(db, 100 + repo_id, owner)
    return await mods_q.create(db, github_repo_id=repo_id, repo_full_name=f"{owner}/{manifest_id}",
                             owner_id=100 + repo_id, owner_login=owner, manifest_id=manifest_id,
                             default_branch="main", categories=["optimization"], card=card)


async def add_version(db, mod_id, number, files, *, status="public", published=None, release_id=None):
    vid = await versions_q.upsert_version(
        db, mod_id=mod_id, version_number=number, github_release_id=release_id or hash(number) % 10**9,
        tag_name=number, name=number, changelog="", version_type="release",
        published_at=published or datetime.now(UTC), status=status,
        game_versions=sorted({g for f in files for g in f[1]}), loaders=sorted({l for f in files for l in f[0]}))
    rows = [versions_q.FileRow(github_asset_id=i + 1, filename=f"f{i}.jar", url=f"https://x/f{i}.jar", size=10,
                             content_type=None, github_digest=None, sidecar_url=None, loaders=list(f[0]),
                             game_versions=list(f[1]), manifests=[], is_primary=i == 0, download_count=5)
            for i, f in enumerate(files)]
    await versions_q.replace_files(db, vid, rows)
    await mods_q.refresh_rollup(db, mod_id)
    return vid


async def test_slug_collision_gets_a_deterministic_suffix(db):
    a = await make_mod(db, 1, "sodium", "caffeine")
    b = await make_mod(db, 2, "sodium", "fork")
    c = await make_mod(db, 3, "sodium", "fork")
    assert (a["slug"], b["slug"], c["slug"]) == ("sodium", "sodium-fork", "sodium-3")


async def test_version_upsert_is_idempotent(db):
    mod = await make_mod(db)
    v1 = await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"])])
    v2 = await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"])])
    assert v1 == v2
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 1
    assert await db.fetchval("SELECT count(*) FROM version_files") == 1


async def test_save_version_says_whether_it_created_the_row(db):
    """The release job skips the file DELETE and the hold look-up only for a created row; a
    second save of the same version (here even in the same transaction) is no creation."""
    mod = await make_mod(db)
    kw = dict(mod_id=mod["id"], version_number="1.0", github_release_id=7, tag_name="1.0", name="1.0",
              changelog="", version_type="release", published_at=datetime.now(UTC), status="public",
              game_versions=["1.20.1"], loaders=["fabric"])
    first, created, visible = await versions_q.save_version(db, **kw)
    again, created_again, visible_again = await versions_q.save_version(db, **{**kw, "name": "renamed"})
    assert (first, created) == (again, True) and created_again is False
    assert visible is visible_again is True
    assert await db.fetchval("SELECT name FROM mod_versions WHERE id = $1", first) == "renamed"
    await versions_q.hide_release(db, 1, 7, "release deleted")
    assert await versions_q.is_visible(db, first) is False
    *_, visible_published_again = await versions_q.save_version(db, **kw)  # re-indexing un-hides
    pending = await versions_q.save_version(db, **{**kw, "version_number": "2.0", "status": "pending_scan"})
    assert visible_published_again is True and pending[1:] == (True, False)


async def test_replace_files_drops_files_that_left_the_release(db):
    mod = await make_mod(db)
    vid = await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"]), (["fabric"], ["1.20.1"])])
    row = versions_q.FileRow(github_asset_id=1, filename="f0.jar", url="https://x/f0.jar", size=10, content_type=None,
                             github_digest=None, sidecar_url=None, loaders=["fabric"], game_versions=["1.20.1"],
                             manifests=[], is_primary=True, download_count=5)
    await versions_q.replace_files(db, vid, [row])  # asset 2 left the release
    assert await db.fetchval("SELECT count(*) FROM version_files WHERE version_id = $1", vid) == 1


async def test_facets_must_hold_on_one_file(db):
    mod = await make_mod(db)
    await add_version(db, mod["id"], "1.0", [(["forge"], ["1.19.2"]), (["fabric"], ["1.20.1"])])
    search = lambda gv, loader: sqlpath.search(db, sqlpath.SearchQuery(None, gv, loader, 10, 0))
    assert (await search("1.20.1", "fabric"))[1] == 1
    assert (await search("1.19.2", "forge"))[1] == 1
    assert (await search("1.20.1", "forge"))[1] == 0  # the mod has both, but on different files


async def test_hidden_and_unscanned_versions_are_not_public(db):
    mod = await make_mod(db)
    await add_version(db, mod["id"], "0.9", [(["fabric"], ["1.20.1"])], status="pending_scan")
    assert await catalog_q.mod_by_slug(db, "sodium") is None
    await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"])], release_id=77)
    assert (await catalog_q.mod_by_slug(db, "sodium"))["latest_version"] == "1.0"
    assert [v["version_number"] for v in await catalog_q.versions_of(db, mod["id"])] == ["1.0"]
    hidden = await versions_q.hide_release(db, 1, 77, "release deleted")
    await mods_q.refresh_rollup(db, mod["id"])
    assert [h["version_number"] for h in hidden] == ["1.0"]
    assert await catalog_q.mod_by_slug(db, "sodium") is None
    assert await db.fetchval("SELECT count(*) FROM mod_versions") == 2  # kept, not deleted


async def test_full_text_search_english_russian_and_names(db):
    await add_version(db, (await make_mod(db, 1, "sodium"))["id"], "1.0", [(["fabric"], ["1.20.1"])])
    ru = mods_q.Card(name="Хранилище", summary="Мод добавляет новые сундуки", description="",
                   authors=["Ivan"], licenses=[], links={}, environment="both")
    await add_version(db, (await make_mod(db, 2, "storage", card=ru))["id"], "1.0", [(["forge"], ["1.20.1"])])
    search = lambda q: sqlpath.search(db, sqlpath.SearchQuery(q, None, None, 10, 0))
    assert [r["slug"] for r in (await search("rendering"))[0]] == ["sodium"]  # english stem of "rendering"
    assert [r["slug"] for r in (await search("render"))[0]] == ["sodium"]
    assert [r["slug"] for r in (await search("сундук"))[0]] == ["storage"]  # russian stem
    assert [r["slug"] for r in (await search("Sodium"))[0]] == ["sodium"]
    assert (await search("nothing-like-this"))[1] == 0
    rows, total = await sqlpath.search(db, sqlpath.SearchQuery(None, None, None, 1, 5))
    assert rows == [] and total == 2  # honest total past the end


async def test_quarantined_version_stays_quarantined_on_reindex(db):
    mod = await make_mod(db)
    vid = await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"])], status="quarantined")
    await add_version(db, mod["id"], "1.0", [(["fabric"], ["1.20.1"])], status="public")
    assert await db.fetchval("SELECT status FROM mod_versions WHERE id = $1", vid) == "quarantined"


async def test_update_card_writes_the_fields_given_and_says_whether_anything_changed(db):
    mod = await make_mod(db)
    assert await mods_q.update_card(db, mod["id"], name="Sodium 2", summary="Faster", links={"sources": "s"},
                                  categories=["rendering", "performance", "fabric"])
    row = await db.fetchrow("SELECT * FROM mods WHERE id = $1", mod["id"])
    # The topics as the vocabulary's categories and plain tags; the loader dropped.
    assert (row["name"], row["summary"], row["links"], row["categories"], row["tags"]) == (
        "Sodium 2", "Faster", {"sources": "s"}, ["optimization"], ["rendering"])
    # Fields not given are kept.
    assert (row["description"], row["authors"], row["licenses"], row["environment"]) == (
        CARD.description, CARD.authors, CARD.licenses, CARD.environment)
    # The same values again: nothing changed, and the row is left as it was.
    assert not await mods_q.update_card(db, mod["id"], name="Sodium 2", summary="Faster", links={"sources": "s"})
    assert await db.fetchval("SELECT updated_at FROM mods WHERE id = $1", mod["id"]) == row["updated_at"]
    # The whole card (the release indexer's write); the name is cut to what the column holds.
    assert await mods_q.update_card(db, mod["id"], name="n" * 200, summary="", description="d", authors=["a"],
                                  licenses=["MIT"], links={}, environment="server")
    row = await db.fetchrow("SELECT * FROM mods WHERE id = $1", mod["id"])
    assert (row["name"], row["summary"], row["description"], row["authors"], row["licenses"], row["links"],
            row["environment"]) == ("n" * 128, "", "d", ["a"], ["MIT"], {}, "server")


async def test_a_new_or_changed_icon_moves_the_mods_updated_at_and_the_same_one_does_not(db):
    """has_icon is part of a search hit: replicas and the snapshot writer re-read only mods whose
    row was written after a position, so an icon that comes or changes must move updated_at."""
    mod = await make_mod(db)
    await db.execute("UPDATE mods SET updated_at = now() - interval '1 day' WHERE id = $1", mod["id"])
    before = await db.fetchval("SELECT updated_at FROM mods WHERE id = $1", mod["id"])
    await mods_q.upsert_icon(db, mod["id"], "image/png", b"\x89PNG1", "e1")
    first = await db.fetchval("SELECT updated_at FROM mods WHERE id = $1", mod["id"])
    assert first > before
    await db.execute("UPDATE mods SET updated_at = $2 WHERE id = $1", mod["id"], before)
    await mods_q.upsert_icon(db, mod["id"], "image/png", b"\x89PNG1", "e1")  # the same icon again
    assert await db.fetchval("SELECT updated_at FROM mods WHERE id = $1", mod["id"]) == before
    await mods_q.upsert_icon(db, mod["id"], "image/png", b"\x89PNG2", "e2")  # a changed one
    assert await db.fetchval("SELECT updated_at FROM mods WHERE id = $1", mod["id"]) > before
    assert await db.fetchval("SELECT etag FROM mod_icons WHERE mod_id = $1", mod["id"]) == "e2"


async def test_update_repository_follows_renames_and_transfers_keeping_the_slug(db):
    mod = await make_mod(db, repo_id=7)
    assert await mods_q.update_repository(db, 7, full_name="caffeine/sodium-renamed", default_branch=None)
    row = await db.fetchrow("SELECT * FROM mods WHERE id = $1", mod["id"])
    assert (row["repo_full_name"], row["default_branch"], row["categories"], row["author_github_id"]) == (
        "caffeine/sodium-renamed", "main", ["optimization"], 107)
    # A transfer: the new owner becomes an author row; topics replace the categories.
    assert await mods_q.update_repository(db, 7, full_name="newowner/sodium", default_branch="dev",
                                        categories=["performance", "shaders", "<b>x</b>"], owner_id=999,
                                        owner_login="newowner")
    row = await db.fetchrow("SELECT * FROM mods WHERE id = $1", mod["id"])
    assert (row["slug"], row["repo_full_name"], row["default_branch"], row["categories"], row["tags"],
            row["author_github_id"]) == (mod["slug"], "newowner/sodium", "dev", ["optimization"], ["shaders"], 999)
    assert await db.fetchval("SELECT login FROM authors WHERE github_id = 999") == "newowner"
    assert not await mods_q.update_repository(db, 12345, full_name="x/y", default_branch=None)  # no such mod


async def test_the_trigger_adds_exactly_the_words_mod_search_words_names(db):
    card = mods_q.Card(name="Quokka Lanterns of Ys", summary="Glowing quokkas, 2x brighter", description="",
                       authors=["someone"], licenses=["MIT"], links={}, environment="both")
    words = set(await db.fetchval("SELECT mod_search_words($1, $2)", card.name, card.summary))
    assert words == {"quokka", "lanterns", "glowing", "quokkas", "brighter"}  # 3-40 chars, 'simple' words
    assert not words & {r[0] for r in await db.fetch("SELECT word FROM search_words")}
    await make_mod(db, 7, "quokka", "marsupial", card=card)
    assert words <= {r[0] for r in await db.fetch("SELECT word FROM search_words")}


async def test_0020_classifies_the_topics_stored_as_categories_before_it(db):
    """Rows written before 0020 held every topic as a category; the migration leaves the
    vocabulary's (synonyms mapped, as indexium_content.categories does) and the other
    topic-shaped words as tags."""
    from indexium_content import categories as vocabulary  # noqa: PLC0415

    topics = ["<script>alert('topic')</script>", "fabric", "minecraft-mod", "Tech", "storage", "performance",
              "lighting", "shaders", "technology", "lighting", "two words"] + [f"t{i}" for i in range(25)]
    mod = await make_mod(db)
    await db.execute("ALTER TABLE mods DROP COLUMN tags")  # the table as it was before 0020
    await db.execute("UPDATE mods SET categories = $2 WHERE id = $1", mod["id"], topics)
    (sql,) = [text for name, text in migrate.available() if name == "0020_topics_as_categories"]
    await db.execute(sql)
    row = await db.fetchrow("SELECT categories, tags FROM mods WHERE id = $1", mod["id"])
    expected = vocabulary.classify(topics)
    assert (row["categories"], row["tags"]) == (expected.categories, expected.tags)
    assert row["categories"] == ["technology", "storage", "optimization"] and len(row["tags"]) == 20
