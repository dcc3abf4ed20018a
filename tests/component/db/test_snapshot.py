"""The snapshot's contract (issue 38): a replica started from a snapshot plus the changes since its
position answers every search exactly like a replica that built its index from PostgreSQL.

A generated catalogue (shared words, facets per file, READMEs, hidden versions, one-word and
non-ASCII names); a snapshot written by one index; then changes after it (a mod hidden, one
renamed, a README rewritten, a version hidden, downloads moved, a new mod); a replica from the
snapshot catching up (``indexed.changed_after`` from the snapshot's position, then re-reads)
against an index loaded from PostgreSQL now. Whole answers compared (every row's every column,
and the total) for many queries: names, prefixes, typos, README words, per-file filters, facets,
browse orders, offsets; pages from memory and re-checked by PostgreSQL both.
"""

from __future__ import annotations

import asyncio
import gc
import random
import weakref
from datetime import UTC, datetime, timedelta
from itertools import groupby

import pytest
from pyroaring import BitMap

from indexium_search import searchindex, snapshot
from indexium_db.pool import connect
from indexium_db.queries import mods as mods_q
from indexium_search import sqlpath
from indexium_search import facets as facets_q, indexed
from indexium_db.queries import versions as versions_q
from indexium_search.searchindex import HIT_KEYS, Lexicon

T0 = datetime(2025, 1, 1, tzinfo=UTC)
ADJ = ["Better", "Simple", "Magic", "Iron", "Cozy", "Lazy", "Dark", "Tiny", "Ёлочные"]
NOUN = ["Furnaces", "Chests", "Lanterns", "Storage", "Biomes", "Magic", "Rendering", "Maps"]
SUMMARY = ["Adds new furnaces and smelting recipes", "Portable storage for players", "Faster chunk rendering",
           "Мод добавляет новые сундуки", "Magic spells and wands", "The best of the rest"]
PAIRS = [(["fabric"], ["1.20.1"]), (["forge"], ["1.19.2"]), (["neoforge", "forge"], ["1.21.1"]),
         (["quilt", "fabric"], ["1.20.1", "1.20.4"])]
READMES = ["Numbats and wallabies roam these lanterns.", "Marsupial magic for furnaces, see https://x.org/a 1.20.1",
           "Works on Bukkit/Spigot/Paper. Coal/Charcoal smelting.", "Iron numbat storage; dark rendering."]
QUERIES = ["magic", "Magic Storage", "iron chests", "furn", "lazy lant", "dark", "numbats", "wallaby", "marsupial",
           "spigot", "charcoal", "сундуки", "ёлочные", "the rest", "smelting recipes", "magik storage", "furnacs",
           "lantrns", "irn chests", "bettr maps", "quokka", "quokka lights", "tiny bi", "cozylan", "m017", "ma",
           "storage magic lanterns", "olga", "renderng"]
_F = facets_q.Facet
FILTERS = [{}, {"game_versions": ("1.20.1",)}, {"loaders": ("fabric",)},
           {"game_versions": ("1.19.2", "1.21.1"), "loaders": ("forge", "quilt")},  # per-file pairs
           {"environment": "client"}, {"categories": ("magic",)},
           {"facets": ((_F("categories", ":", "fabric"), _F("categories", ":", "magic")),)},
           {"facets": ((_F("categories", "!=", "storage"),),)},
           {"facets": ((_F("project_type", ":", "mod"),), (_F("versions", ":", "1.20.4"),))}]


async def _mod(conn, i: int, rng: random.Random, name: str | None = None) -> None:
    name = name or " ".join((rng.choice(ADJ), rng.choice(NOUN)))
    if i % 17 == 0:
        name = rng.choice(NOUN)
    await mods_q.upsert_author(conn, 10 + i, f"owner{i}")
    card = mods_q.Card(name=name, summary=rng.choice(SUMMARY), description="", authors=[f"Author{i % 5}"],
                       licenses=["MIT"], links={}, environment=rng.choice(["client", "server", "both"]))
    mod = await mods_q.create(conn, github_repo_id=10 + i, repo_full_name=f"owner{i}/m{i}", owner_id=10 + i,
                              owner_login=f"owner{i}", manifest_id=f"m{i:03d}", default_branch="main",
                              categories=rng.sample(["utility", "magic", "storage", "library"], rng.randint(0, 2)),
                              card=card)
    for v, files in enumerate([rng.sample(PAIRS, rng.randint(1, 2)) for _ in range(rng.randint(1, 2))]):
        vid = await versions_q.upsert_version(
            conn, mod_id=mod["id"], version_number=f"1.{v}", github_release_id=1000 * i + v, tag_name=f"1.{v}",
            name=f"1.{v}", changelog="", version_type="release",
            published_at=T0 + timedelta(days=rng.randint(0, 3), hours=v), status="public",
            game_versions=sorted({g for f in files for g in f[1]}), loaders=sorted({lo for f in files for lo in f[0]}))
        await versions_q.replace_files(conn, vid, [versions_q.FileRow(
            github_asset_id=100_000 * i + 10 * v + k, filename=f"m{i}-{v}-{k}.jar", url=f"https://x/m{i}-{v}-{k}.jar",
            size=1, content_type=None, github_digest=None, sidecar_url=None, loaders=f[0], game_versions=f[1],
            manifests=[], is_primary=k == 0, download_count=rng.choice([0, 5, 5, 40, 300, 7000]))
            for k, f in enumerate(files)])
    await mods_q.refresh_rollup(conn, mod["id"])
    if i % 3 == 1:
        await mods_q.set_readme(conn, mod["id"], READMES[i % len(READMES)])


async def _hide_a_version(conn, slug: str) -> None:
    """Its newest version hidden (the facets and dates it brought go with it), as the indexer does."""
    mod_id = await conn.fetchval("SELECT id FROM mods WHERE slug = $1", slug)
    await conn.execute("UPDATE mod_versions SET hidden = true WHERE id = (SELECT id FROM mod_versions"
                       " WHERE mod_id = $1 ORDER BY published_at DESC LIMIT 1)", mod_id)
    await mods_q.refresh_rollup(conn, mod_id)


async def _changes_after_the_snapshot(conn, rng: random.Random) -> None:
    slugs = [r[0] for r in await conn.fetch("SELECT slug FROM mods WHERE listed ORDER BY slug")]
    await conn.execute("UPDATE mods SET listed = false, updated_at = now() WHERE slug = $1", slugs[3])
    await conn.execute("UPDATE mods SET name = 'Quokka Lights', updated_at = now() WHERE slug = $1", slugs[5])
    mod_id = await conn.fetchval("SELECT id FROM mods WHERE slug = $1", slugs[7])
    await mods_q.set_readme(conn, mod_id, "Quokka marsupial lanterns, nothing of what it said before.")
    for slug in slugs[10:16]:
        await _hide_a_version(conn, slug)
    await conn.execute("UPDATE version_files SET download_count = download_count + 50000 WHERE version_id IN"
                       " (SELECT v.id FROM mod_versions v JOIN mods m ON m.id = v.mod_id WHERE m.slug = $1)", slugs[20])
    await mods_q.refresh_rollup(conn, await conn.fetchval("SELECT id FROM mods WHERE slug = $1", slugs[20]))
    await _mod(conn, 500, rng, name="Quokka Storage")


def _queries():
    rng = random.Random(5)
    out = []
    for q in QUERIES + [None]:
        for filters in FILTERS:
            sort = rng.choice([None, None, "relevance", "updated", "newest", "downloads", "name"])
            offset = rng.choice([0, 0, 0, 3])
            out.append(sqlpath.SearchQuery(q, sort=sort, offset=offset, limit=7, **filters))
    return out


async def _answers(conn, index, lexicon, recheck: bool) -> list:
    index.recheck = recheck
    out = []
    for sq in _queries():
        rows, total = await indexed.search(conn, sq, index=index, lexicon=lexicon, corrections=sqlpath.Corrections())
        out.append((sq, [{k: r[k] for k in HIT_KEYS} for r in rows], total))
    return out


async def _catalogue(conn, n: int, seed: int) -> random.Random:
    """``n`` generated mods; the generator, for the changes made after them."""
    rng = random.Random(seed)
    for i in range(n):
        await _mod(conn, i, rng)
    return rng


async def _loaded(conn) -> tuple:
    """The index loaded from PostgreSQL now, and its lexicon prewarmed (as a replica's)."""
    index = await indexed.load(conn)
    lexicon = Lexicon()
    await indexed.prewarm(conn, lexicon, index)
    return index, lexicon


async def _assert_same_answers(conn, ours: tuple, theirs: tuple) -> None:
    """Two (index, lexicon) give the same whole answer to every query, pages from memory and
    re-checked by PostgreSQL, and most queries find something."""
    for recheck in (False, True):
        got = await _answers(conn, *ours, recheck)
        want = await _answers(conn, *theirs, recheck)
        for (sq, rows, total), (_, want_rows, want_total) in zip(got, want):
            assert (rows, total) == (want_rows, want_total), sq
    assert sum(1 for _, rows, _ in got if rows) > 150


@pytest.mark.parametrize("postings_kept", ["as many as read", "a few bytes"])
def test_a_replica_from_a_snapshot_plus_changes_answers_as_one_built_from_postgresql(database_url, tmp_path,
                                                                                    monkeypatch, postings_kept):
    # Every prefix union from the laid postings (the C union over the file's arrays), not only
    # those of 8 lexemes or more: this catalogue is small.
    monkeypatch.setattr(searchindex, "LAID_MIN_SETS", 1)
    if postings_kept == "a few bytes":  # (the postings read let go at nearly every read, unions forgotten with them)
        monkeypatch.setattr(snapshot, "POSTINGS_READ_MAX", 64)

    async def run():
        conn = await connect(database_url)
        try:
            rng = await _catalogue(conn, 90, seed=3)
            written, lexicon = await _loaded(conn)
            path = tmp_path / "index.snap"
            digest = snapshot.write(written, lexicon, path, updated_at=written.position, stream_seq=7)
            await asyncio.sleep(0.01)
            await _changes_after_the_snapshot(conn, rng)

            index, learned, meta = snapshot.load(path, verify=True)
            assert meta["digest"] == digest and meta["updated_at"] == written.position and meta["stream_seq"] == 7
            assert learned._tokens == lexicon._tokens and learned._prefix == lexicon._prefix
            # Searches before the changes are read: postings read, prefix unions remembered (kept
            # exact by the re-reads below, or forgotten with the postings let go); the file's
            # pages unmapped (read again as they are needed).
            await _answers(conn, index, learned, False)
            # Ranking read what it needs of each candidate from the columns (Ranking), and the
            # pages their ids and hits: a whole Entry (its filter keys a string each) is built
            # only for a mod with abbreviations, whose score those decide. (Without the C module
            # ranking is searchindex.relevance's, over whole entries.)
            if searchindex._fastsearch is not None:
                abbreviated = BitMap.union(*(bm for key, bm in index.filters.items() if key.startswith("ab:")))
                assert len(index.entries._ranking) > 50 and set(index.entries._kept) <= set(abbreviated)
            index.snapshot.release_pages()
            stale = await indexed.changed_after(conn, index, meta["updated_at"], margin_s=1.0)
            assert len(stale) >= 10  # the hidden, renamed, rewritten, re-rolled and new mods
            await indexed.reread(conn, index, stale)
            if postings_kept == "a few bytes":
                assert index.readme.budget.evictions > 100

            await _assert_same_answers(conn, (index, learned), await _loaded(conn))
            # Replaced by a refresh: the index, its tables and the file's mapping go with their last
            # reference, no collector pass needed (a cycle kept them until heap.settle's full pass).
            mapping = weakref.ref(index.snapshot)
            gc.disable()
            try:
                del index, learned
                assert mapping() is None
            finally:
                gc.enable()
        finally:
            await conn.close()

    asyncio.run(run())


def test_a_snapshot_holds_the_index_as_written_and_follows_changes_as_the_index_does(database_url, tmp_path):
    """The same index from PostgreSQL, once as loaded and once through a snapshot, each given the
    same re-reads: the same answers with the same bounded candidates (ordinals as the writer's)."""
    async def run():
        conn = await connect(database_url)
        try:
            rng = await _catalogue(conn, 60, seed=9)
            loaded = await indexed.load(conn)
            path = tmp_path / "index.snap"
            snapshot.write(loaded, Lexicon(), path, updated_at=loaded.position)
            index, _, meta = snapshot.load(path)
            await _changes_after_the_snapshot(conn, rng)
            stale = await indexed.changed_after(conn, index, meta["updated_at"], margin_s=1.0)
            await indexed.reread(conn, index, stale)
            await indexed.reread(conn, loaded, stale)
            for sq in _queries():
                a = await indexed.search(conn, sq, index=index, lexicon=Lexicon(), rank_all=2, per_source=1)
                b = await indexed.search(conn, sq, index=loaded, lexicon=Lexicon(), rank_all=2, per_source=1)
                assert ([{k: r[k] for k in HIT_KEYS} for r in a[0]], a[1]) == (
                    [{k: r[k] for k in HIT_KEYS} for r in b[0]], b[1]), sq
            assert index.position == loaded.position
        finally:
            await conn.close()

    asyncio.run(run())


@pytest.mark.parametrize("damage", ["truncated", "flipped", "format"])
def test_a_damaged_snapshot_is_unusable(database_url, tmp_path, damage):
    async def run():
        conn = await connect(database_url)
        try:
            await _mod(conn, 1, random.Random(1))
            index = await indexed.load(conn)
        finally:
            await conn.close()
        return index

    index = asyncio.run(run())
    path = tmp_path / "index.snap"
    snapshot.write(index, Lexicon(), path, updated_at=index.position)
    raw = bytearray(path.read_bytes())
    if damage == "truncated":
        raw = raw[: len(raw) // 2]
    elif damage == "flipped":
        raw[len(snapshot.MAGIC) + 3] ^= 0xFF
    else:
        raw[: len(snapshot.MAGIC)] = b"IXSNAP\0\x09"
    path.write_bytes(bytes(raw))
    with pytest.raises(snapshot.Unusable):
        snapshot.load(path, verify=True)


async def _more_changes(conn, rng: random.Random) -> None:
    """A second round after an incremental snapshot: one hidden mod listed again, a README emptied,
    a README given to a mod without one, a new mod with new words and a README, one renamed back."""
    slugs = [r[0] for r in await conn.fetch("SELECT slug FROM mods ORDER BY slug")]
    await conn.execute("UPDATE mods SET listed = true, updated_at = now() WHERE slug = $1", slugs[3])
    with_readme = await conn.fetch("SELECT id FROM mods WHERE readme_text <> '' ORDER BY slug LIMIT 2")
    await mods_q.set_readme(conn, with_readme[0]["id"], "")
    without = await conn.fetchval("SELECT id FROM mods WHERE coalesce(readme_text, '') = '' ORDER BY slug DESC LIMIT 1")
    await mods_q.set_readme(conn, without, "Wombat burrows under the furnaces; numbats visit.")
    await _mod(conn, 501, rng, name="Wombat Burrows")
    await conn.execute("UPDATE mods SET name = 'Cozy Chests', updated_at = now() WHERE slug = $1", slugs[5])


async def _servers_move(conn, generation: int) -> None:
    """Yesterday's active servers of a few mods move (telemetry's aggregate: mods.updated_at does not)."""
    slugs = [r[0] for r in await conn.fetch("SELECT slug FROM mods WHERE listed ORDER BY slug")]
    for slug in slugs[30:33] if generation == 1 else slugs[31:35]:
        await conn.execute(
            f"""INSERT INTO mod_daily_stats (mod_id, day, servers) SELECT id, {sqlpath.ACTIVE_SERVERS_DAY}, $2
                FROM mods WHERE slug = $1 ON CONFLICT (mod_id, day) DO UPDATE SET servers = EXCLUDED.servers""",
            slug, 7 * generation)


def _contents(path) -> dict:
    """What a snapshot file says, by slug rather than by ordinal: every mod's columns and hit, each
    table's keys and the slugs of its posting, the laid postings (checked against the postings),
    the sorted views as slugs, the catalogue words and the lexicon."""
    index, lexicon, meta = snapshot.load(path, verify=True)
    slug = {o: index.entries[o].slug for o in index.listed}
    mods = {}
    for o in index.listed:
        e = index.entries[o]
        mods[e.slug] = (e.id, e.name, e.downloads, e.updated, e.created, e.changed, e.readme,
                        tuple(zip(e.keys[:e.lexemes], e.terms)), sorted(e.keys[e.lexemes:]), sorted(e.heavy),
                        index.entries.hit_of(o))
    tables = {}
    for name in ("postings", "heavy", "filters", "readme"):
        table = getattr(index, name)
        # (a key whose posting holds no mod shows as []: a full load has none; weight A's None: none)
        tables[name] = {k: sorted(slug[o] for o in bm) for k in table if (bm := table.get(k)) is not None}
    snap = index.snapshot
    if meta["laid"]:
        vocabulary = snap.strings("vocabulary")
        for heavy, table in ((0, index.postings), (1, index.heavy)):
            flat, offsets = snap.col(f"laid.{heavy}"), snap.col(f"laid.{heavy}.offsets")
            for i, k in enumerate(vocabulary):
                assert list(flat[offsets[i]:offsets[i + 1]]) == list(table.get(k) or ()), (heavy, k)
    # (names in order, each name's mods as a set: equal names are in ordinal order, popularity's
    # at a full load, the first load's in a snapshot written from another; every other view ends
    # in the slug)
    names = [(n, sorted(slug[o] for o in group)) for n, group in groupby(index._names, key=index.name_of.__getitem__)]
    views = {"names": names} | {s: [slug[o] for o in v] for s, v in index._orders.items()}
    return {"mods": mods, "tables": tables, "views": views, "words": sorted(index.words._words),
            "tokens": lexicon._tokens, "prefix": lexicon._prefix, "mods_meta": meta["mods"],
            "facts": (meta["ordered"], meta["words_exact"])}


@pytest.mark.parametrize("postings_kept", ["as many as read", "a few bytes"])
def test_a_snapshot_written_from_the_previous_one_answers_as_one_written_from_a_full_load(database_url, tmp_path,
                                                                                          monkeypatch, postings_kept):
    """The writer's incremental write (indexium_ops.searchsnapshot.from_file: the previous file
    mapped, the changes since re-read, the new file written from it, unchanged bytes copied),
    twice in a row, against a snapshot written from a full load at the same moment: the same
    contents mod by mod and key by key (no posting left that holds no mod), and the same answer to
    every search of the contract above, pages from memory and re-checked."""
    from indexium_ops import searchsnapshot

    monkeypatch.setattr(searchindex, "LAID_MIN_SETS", 1)
    if postings_kept == "a few bytes":  # (and the old file's pages let go every few bytes written)
        monkeypatch.setattr(snapshot, "POSTINGS_READ_MAX", 64)
        monkeypatch.setattr(snapshot, "RELEASE_EVERY", 256)

    async def full_snapshot(conn, path):
        index, lexicon = await _loaded(conn)
        snapshot.write(index, lexicon, path, updated_at=index.position)

    async def run():
        conn = await connect(database_url)
        try:
            rng = await _catalogue(conn, 90, seed=3)
            previous = tmp_path / "0.snap"
            await full_snapshot(conn, previous)
            for generation, changes in enumerate((_changes_after_the_snapshot, _more_changes), 1):
                await asyncio.sleep(0.01)
                await changes(conn, rng)
                await _servers_move(conn, generation)
                built, why = await searchsnapshot.from_file(conn, previous, max_changes=100, full_every=0)
                assert why is None
                index, lexicon, position, caught_up, meta = built
                assert caught_up >= 5 and meta["incremental"] == generation
                assert len(index.entries._servers) >= 3  # (_servers_move's: patched hits, not re-read)
                await _answers(conn, index, Lexicon(), False)  # (searches before the write: postings read)
                incremental = tmp_path / f"{generation}.snap"
                snapshot.write(index, lexicon, incremental, updated_at=position, meta=meta)
                assert index.snapshot.sections["postings"] != ()  # (the old file, still mapped, is what was copied)
                full = tmp_path / f"{generation}-full.snap"
                await full_snapshot(conn, full)

                ours, theirs = _contents(incremental), _contents(full)
                for part in ours:
                    assert ours[part] == theirs[part], part
                a, _, a_meta = snapshot.load(incremental, verify=True)
                b, b_lexicon, _ = snapshot.load(full)
                assert a_meta["incremental"] == generation and a_meta["updated_at"] == position
                assert len(a.entries) > len(b.entries)  # (holes and new mods last: ordinals are the first load's)
                await _assert_same_answers(conn, (a, lexicon), (b, b_lexicon))
                previous = incremental
        finally:
            await conn.close()

    asyncio.run(run())
