"""The search snapshot's writer (`indexium_ops search-snapshot`, issue 38): from the previous snapshot
in the object store and the changes since when it can, else a full load from PostgreSQL with one
line saying why: no object yet, a damaged file, another format, too many changes, the periodic full
load, or asked. (The incremental file's contents and answers: tests/component/db/test_snapshot.py.)"""

from __future__ import annotations

import random

import nats
import pytest

from indexium_contracts import searchsnapshot as contract
from indexium_db.pool import connect
from indexium_ops import searchsnapshot
from indexium_search import snapshot
from tests.component.db.test_snapshot import _mod


@pytest.fixture
async def writer(database_url, nats_url, tmp_path):
    conn = await connect(database_url)
    nc = await nats.connect(nats_url)
    rng = random.Random(4)
    for i in range(12):
        await _mod(conn, i, rng)

    async def write(**kwargs) -> dict:
        return await searchsnapshot.write_once(conn, nc.jetstream(), tmp_path / "writer", **kwargs)

    write.conn, write.js, write.directory, write.rng = conn, nc.jetstream(), tmp_path / "writer", rng
    try:
        yield write
    finally:
        await conn.close()
        await nc.drain()


async def _change(conn, n: int = 1) -> None:
    slugs = [r[0] for r in await conn.fetch("SELECT slug FROM mods WHERE listed ORDER BY slug LIMIT $1", n)]
    await conn.execute("UPDATE mods SET downloads = downloads + 1, updated_at = now() WHERE slug = ANY($1)", slugs)


def _said(capsys) -> str:
    out = capsys.readouterr()
    return out.out + out.err


async def test_the_first_write_is_a_full_load_then_each_starts_from_the_previous_snapshot(writer, capsys):
    first = await writer()
    assert (first["source"], first["reason"], first["incremental"]) == ("full", "no snapshot in the object store yet", 0)
    said = _said(capsys)
    assert "search_snapshot_full_load" in said and "no snapshot in the object store yet" in said
    # The file put is kept, named as the object store names it: the next write fetches nothing.
    kept = list(writer.directory.glob("*.snap"))
    assert len(kept) == 1 and not list(writer.directory.glob("*.new"))
    await _change(writer.conn, 2)
    await _mod(writer.conn, 40, writer.rng, name="Quokka Lanterns")
    second = await writer()
    assert (second["source"], second["incremental"], second["caught_up"]) == ("previous", 1, 3)
    assert second["mods"] == first["mods"] + 1 and second["updated_at"] > first["updated_at"]
    assert "search_snapshot_full_load" not in _said(capsys)
    (path,) = writer.directory.glob("*.snap")
    assert path != kept[0]
    index, _, meta = snapshot.load(path, verify=True)
    assert index.entries.hit_of(index.by_slug["m040"])["name"] == "Quokka Lanterns"  # (the new mod, re-read)
    assert (meta["incremental"], meta["full_updated_at"], meta["digest"]) == (1, first["updated_at"], second["digest"])
    third = await writer()  # (nothing changed: nothing re-read)
    assert (third["source"], third["incremental"], third["caught_up"]) == ("previous", 2, 0)


@pytest.mark.parametrize("why", ["damaged", "another format"])
async def test_an_unusable_previous_snapshot_means_a_full_load(writer, capsys, why):
    await writer()
    if why == "damaged":  # (the node's copy: the same size, one byte flipped)
        (path,) = writer.directory.glob("*.snap")
        raw = bytearray(path.read_bytes())
        raw[len(snapshot.MAGIC) + 5] ^= 0xFF
        path.write_bytes(bytes(raw))
        reason = "digest mismatch"
    else:  # (an object of another format in the store)
        store = await writer.js.object_store(contract.BUCKET.name)
        await store.put(contract.OBJECT, b"IXSNAP\0\x09" + bytes(100))
        reason = "not a snapshot of this format"
    done = await writer()
    assert done["source"] == "full" and "unusable" in done["reason"] and reason in done["reason"]
    assert reason in _said(capsys)
    assert (await writer())["source"] == "previous"  # (and the next from the file this one put)


async def test_too_many_changes_since_the_previous_snapshot_mean_a_full_load(writer):
    await writer()
    await _change(writer.conn, 3)
    done = await writer(max_changes=2)
    assert done["source"] == "full" and done["reason"] == "3 mods changed since the previous snapshot (more than 2)"
    await _change(writer.conn, 2)
    assert (await writer(max_changes=2))["source"] == "previous"


async def test_every_nth_write_is_a_full_load_and_a_full_one_can_be_asked_for(writer):
    sources = [(d["source"], d["incremental"]) for d in [await writer(full_every=3) for _ in range(5)]]
    assert sources == [("full", 0), ("previous", 1), ("previous", 2), ("full", 0), ("previous", 1)]
    done = await writer(full=True)
    assert (done["source"], done["reason"]) == ("full", "asked (--full)")


async def test_a_write_from_the_previous_snapshot_that_fails_is_followed_by_a_full_load(writer, capsys, monkeypatch):
    await writer()

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the copy")

    monkeypatch.setattr(snapshot, "_write_over", broken)
    done = await writer()
    assert (done["source"], done["reason"]) == ("full", "the write from the previous snapshot failed: RuntimeError")
    assert "search_snapshot_from_previous_failed" in _said(capsys)
    assert (await writer())["source"] == "full"  # (still broken: every write a full one, none missed)


async def test_the_command_keeps_its_snapshot_where_the_stack_says_and_says_how_it_wrote(database_url, nats_url,
                                                                                      tmp_path):
    import asyncio
    import os
    import subprocess
    import sys

    conn = await connect(database_url)
    try:
        await _mod(conn, 1, random.Random(1))
    finally:
        await conn.close()
    env = {**os.environ, "DATABASE_URL": database_url, "NATS_URL": nats_url,
           "INDEXIUM_SEARCH_SNAPSHOT_WRITER_DIR": str(tmp_path / "stack")}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "indexium_ops", "search-snapshot", *args], env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip().splitlines()[-1]

    first = await asyncio.to_thread(run)
    assert "full load: no snapshot in the object store yet" in first
    assert len(list((tmp_path / "stack").glob("*.snap"))) == 1
    second = await asyncio.to_thread(run)
    assert "from the previous snapshot, 0 mods re-read, write 1 since the last full load" in second
    other = tmp_path / "other"  # (--directory wins: a node without the file fetches it)
    third = await asyncio.to_thread(run, "--directory", str(other), "--nice", "3")
    assert "write 2 since the last full load" in third and len(list(other.glob("*.snap"))) == 1
    # --nice: the write's CPU after the services' (make run's 10), from this process's niceness on.
    assert f"niceness {min(19, os.nice(0) + 3)})" in third and f"niceness {os.nice(0)})" in second
    refused = subprocess.run([sys.executable, "-m", "indexium_ops", "search-snapshot", "--nice", "20"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "20 is not in 0-19" in refused.stderr


async def test_a_slug_that_moved_leaves_no_ghost_behind_in_a_write_from_the_previous_snapshot(writer):
    # ownership.take_slug: the id's holder takes the displaced project's slug, which moves to its next
    # candidate; the holder's old slug has no row any more (a catch-up by changed rows never names it).
    await writer()
    holder, displaced = [r[0] for r in await writer.conn.fetch(
        "SELECT slug FROM mods WHERE listed ORDER BY slug LIMIT 2")]
    await writer.conn.execute("UPDATE mods SET slug = 'x-free' WHERE slug = $1", holder)
    await writer.conn.execute("UPDATE mods SET slug = $2, updated_at = now() WHERE slug = $1",
                              displaced, displaced + "-moved")
    await writer.conn.execute("UPDATE mods SET slug = $1, updated_at = now() WHERE slug = 'x-free'", displaced)
    second = await writer()
    assert second["source"] == "previous"
    (path,) = writer.directory.glob("*.snap")
    index, _, _ = snapshot.load(path, verify=True)
    listed = {r[0] for r in await writer.conn.fetch("SELECT slug FROM mods WHERE listed")}
    assert set(index.by_slug) == listed and holder not in index.by_slug
    assert index.entries.hit_of(index.by_slug[displaced + "-moved"]) is not None


async def test_the_days_turn_patches_every_hits_servers_without_a_full_load(writer, capsys):
    # Yesterday's servers (sqlpath.ACTIVE_SERVERS) move for every mod at 00:00 UTC without their
    # rows' updated_at: patched into the file's hits, not re-read, and not counted as changes.
    from indexium_search import sqlpath

    await writer()
    await writer.conn.execute(f"""INSERT INTO mod_daily_stats (mod_id, day, servers)
        SELECT id, {sqlpath.ACTIVE_SERVERS_DAY}, 3 + (abs(hashtext(slug)) % 50) FROM mods WHERE listed""")
    await _change(writer.conn, 1)
    done = await writer(max_changes=2)
    assert (done["source"], done["caught_up"]) == ("previous", 1)
    assert "reread=1 servers_patched=11" in _said(capsys)  # (the 12th re-read: its row changed)
    (path,) = writer.directory.glob("*.snap")
    index, _, _ = snapshot.load(path, verify=True)
    want = dict(await writer.conn.fetch(f"""SELECT m.slug, {sqlpath.ACTIVE_SERVERS_EXPR} FROM mods m
        {sqlpath.ACTIVE_SERVERS_JOIN} WHERE m.listed"""))
    assert {s: index.entries.hit_of(o)["active_servers"] for s, o in index.by_slug.items()} == want
    assert min(want.values()) >= 3
