"""An API replica starting from the search snapshot (issue 38): the writer's file from NATS's object
store, fetched to the node-local directory once and reused, the mods changed since its position
re-read before the replica serves, and the same answers as a replica that built its index from
PostgreSQL; without a snapshot, the load from PostgreSQL and a log line saying why."""

import nats

from indexium_api.core import search_index
from indexium_api.core.state import API
from indexium_db.pool import connect
from indexium_ops import searchsnapshot

from .test_search_index import FABRIC_120, FORGE_119, following, hits

QUERIES = [{"q": "lanterns"}, {"q": "quokka"}, {"q": "lantrns"}, {"q": "lant"},
           {"q": "lanterns", "game_version": "1.20.1", "loader": "fabric"}, {"sort": "newest"}]


async def _write(database_url, nats_url, directory=None) -> dict:
    conn = await connect(database_url)
    nc = await nats.connect(nats_url)
    try:
        return await searchsnapshot.write_once(conn, nc.jetstream(), directory)
    finally:
        await conn.close()
        await nc.drain()


async def test_a_replica_starts_from_the_snapshot_and_the_changes_since(make_client, nats_url, seed, database_url,
                                                                          tmp_path, capsys):
    for i, name in enumerate(["Cozy Lanterns", "Iron Lanterns", "Tiny Maps"]):
        mod = await seed.mod(f"m{i}", name=name, summary="Lanterns and maps")
        await seed.version(mod, "1.0", [FABRIC_120 if i % 2 else FORGE_119])
    put = await _write(database_url, nats_url)
    assert put["mods"] == 3 and put["bytes"] > 0
    # After the snapshot: a new mod and one hidden (no replica was listening).
    new = await seed.mod("quokka", name="Quokka Lanterns", summary="Lanterns for quokkas")
    await seed.version(new, "1.0", [FABRIC_120])
    await seed.db.execute("UPDATE mods SET listed = false, updated_at = now() WHERE manifest_id = 'm1'")

    env = {"NATS_URL": nats_url, "INDEXIUM_API_SEARCH_SNAPSHOT_DIR": str(tmp_path / "node")}
    client = await make_client(**env)
    live = await following(client)
    assert live.snapshot_digest is not None  # from the snapshot, not PostgreSQL
    assert "quokka" in live.index.by_slug and "m1" not in live.index.by_slug  # the changes since, re-read
    files = list((tmp_path / "node").glob("*.snap"))
    assert [f.stem for f in files] == [live.snapshot_digest]

    built = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT="false")
    from_pg = await following(built)
    assert from_pg.snapshot_digest is None
    for params in QUERIES:
        assert await hits(client, **params) == await hits(built, **params), params

    # A second replica on the node maps the same file (not fetched again).
    again = await make_client(**env)
    assert (await following(again)).snapshot_digest == live.snapshot_digest
    out = capsys.readouterr().out + capsys.readouterr().err
    assert '"fetched": false' in out.replace("'", '"') or "fetched=False" in out


async def test_a_replica_starts_from_a_snapshot_written_from_the_previous_one(make_client, nats_url, seed,
                                                                            database_url, tmp_path):
    """The writer's second write starts from its first (a hole where a mod was hidden, a new mod
    after the rest): a replica maps that file and answers as one built from PostgreSQL."""
    for i, name in enumerate(["Cozy Lanterns", "Iron Lanterns", "Tiny Maps"]):
        mod = await seed.mod(f"m{i}", name=name, summary="Lanterns and maps")
        await seed.version(mod, "1.0", [FABRIC_120 if i % 2 else FORGE_119])
    assert (await _write(database_url, nats_url, tmp_path / "writer"))["source"] == "full"
    new = await seed.mod("quokka", name="Quokka Lanterns", summary="Lanterns for quokkas")
    await seed.version(new, "1.0", [FABRIC_120])
    await seed.db.execute("UPDATE mods SET listed = false, updated_at = now() WHERE manifest_id = 'm1'")
    again = await _write(database_url, nats_url, tmp_path / "writer")
    assert (again["source"], again["caught_up"], again["mods"]) == ("previous", 2, 3)

    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT_DIR=str(tmp_path / "node"))
    live = await following(client)
    assert live.snapshot_digest is not None and len(live.index.entries) == 4  # (m1's ordinal a hole)
    built = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT="false")
    await following(built)
    for params in QUERIES:
        assert await hits(client, **params) == await hits(built, **params), params


async def test_a_serving_replicas_refresh_keeps_its_index_for_the_same_snapshot_and_re_reads_in_small_batches(
        make_client, nats_url, seed, database_url, tmp_path, monkeypatch, capsys):
    """A refresh finding the snapshot its index came from keeps that index and walks no heap (no
    collector pass); a new snapshot is swapped in, settled once, after the changes since it were
    re-read a few at a time (SERVING_REREAD_BATCH: here one a statement)."""
    for i, name in enumerate(["Cozy Lanterns", "Iron Lanterns", "Tiny Maps"]):
        mod = await seed.mod(f"m{i}", name=name, summary="Lanterns and maps")
        await seed.version(mod, "1.0", [FABRIC_120 if i % 2 else FORGE_119])
    await _write(database_url, nats_url)
    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT_DIR=str(tmp_path / "node"))
    live = await following(client)
    first, digest = live.index, live.snapshot_digest
    settles = []
    monkeypatch.setattr(search_index.heap, "settle", lambda full=True: settles.append(full) or 0.0)
    reread = []
    real_reread = search_index.indexed.reread

    async def counted(conn, index, slugs):
        reread.append(list(slugs))
        await real_reread(conn, index, slugs)

    monkeypatch.setattr(search_index.indexed, "reread", counted)
    monkeypatch.setattr(search_index, "SERVING_REREAD_BATCH", 1)
    await live.reload(invalidate=False)
    assert live.index is first and live.snapshot_digest == digest and settles == [] and reread == []

    new = await seed.mod("quokka", name="Quokka Lanterns", summary="Lanterns for quokkas")
    await seed.version(new, "1.0", [FABRIC_120])
    await _write(database_url, nats_url)
    # After the new snapshot: three changes no event announced (this replica is not told of them).
    await seed.db.execute("UPDATE mods SET summary = 'Quokka maps', updated_at = now() WHERE manifest_id IN ('m0', 'm2')")
    await seed.db.execute("UPDATE mods SET listed = false, updated_at = now() WHERE manifest_id = 'm1'")
    capsys.readouterr()
    await live.reload(invalidate=False)
    assert live.index is not first and live.snapshot_digest != digest
    assert settles == [False]  # (the replaced index freed by reference counting: the frozen heap not walked)
    # One statement each, the loop serving between them (a re-read after an event or the periodic
    # catch-up may come too: quokka, written after this replica's start).
    assert all(len(batch) == 1 for batch in reread) and {"m0", "m1", "m2"} <= {b[0] for b in reread}
    assert "m1" not in live.index.by_slug and "quokka" in live.index.by_slug
    out = capsys.readouterr()
    assert "caught_up=3" in out.out + out.err or '"caught_up": 3' in out.out + out.err
    await following(client)
    # A burst of events (a redelivery): re-read one a statement too, in the order they came.
    reread.clear()
    for slug in ("m2", "quokka", "m0"):
        live.changed(slug)
    await following(client)
    assert reread == [["m2"], ["quokka"], ["m0"]]
    built = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT="false")
    await following(built)
    for params in [*QUERIES, {"q": "quokka maps"}]:
        assert await hits(client, **params) == await hits(built, **params), params


async def test_without_a_snapshot_the_replica_builds_from_postgresql_and_says_why(make_client, nats_url, seed,
                                                                                   tmp_path, capsys):
    mod = await seed.mod("m0", name="Cozy Lanterns")
    await seed.version(mod, "1.0", [FABRIC_120])
    client = await make_client(NATS_URL=nats_url, INDEXIUM_API_SEARCH_SNAPSHOT_DIR=str(tmp_path))
    live = await following(client)
    assert live.snapshot_digest is None and "m0" in live.index.by_slug
    assert client.app[API].search_index is live
    out = capsys.readouterr()
    text = out.out + out.err
    assert "search_index_snapshot_unusable" in text and "ObjectNotFoundError" in text
    assert await hits(client, q="cozy") == (["m0"], 1)


async def test_one_fetch_a_node_the_start_s_prefetch_and_a_replica_beside_it_wait_for_it(
        nats_url, seed, database_url, tmp_path, monkeypatch):
    import asyncio
    import fcntl
    import hashlib
    import os

    from indexium_api import prefetch
    from indexium_platform import snapshotfetch as snapshots

    mod = await seed.mod("m0", name="Cozy Lanterns")
    await seed.version(mod, "1.0", [FABRIC_120])
    put = await _write(database_url, nats_url)
    # Two replicas starting together on one node: one fetches, the other waits for its file. The
    # test holds the node's lock until both are waiting on it (else the slower one may connect after
    # the first has finished, find the file and rightly say it reused it), and counts the downloads.
    node = tmp_path / "node"
    node.mkdir()
    real_lock, real_get, at_lock, downloads = snapshots._node_lock, snapshots._get_into, [], []

    def counted_lock(directory):
        at_lock.append(directory)
        return real_lock(directory)

    async def counted_get(js, info, f):
        downloads.append(info.nuid)
        await real_get(js, info, f)

    monkeypatch.setattr(snapshots, "_node_lock", counted_lock)
    monkeypatch.setattr(snapshots, "_get_into", counted_get)
    held = os.open(node / ".fetch.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        both = asyncio.gather(snapshots.fetch(nats_url, node), snapshots.fetch(nats_url, node))
        for _ in range(1000):
            if len(at_lock) == 2:
                break
            await asyncio.sleep(0.01)
        assert len(at_lock) == 2 and not downloads
    finally:
        os.close(held)  # (lets the lock go)
    (a_path, a_fetched), (b_path, b_fetched) = await both
    assert a_path == b_path and a_fetched and b_fetched and len(downloads) == 1
    # (named by the object's SHA-256; the file's own digest of its body is its last 32 bytes)
    body = a_path.read_bytes()
    assert a_path.stem == hashlib.sha256(body).hexdigest() and body[-32:].hex() == put["digest"]
    assert [p.name for p in node.glob("*.snap")] == [a_path.name] and not list(node.glob("*.part"))

    # The API process's prefetch child (prefetch.start, its environment's settings) leaves the
    # file on the node; the replica's own fetch then reuses it.
    other = tmp_path / "other"
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("INDEXIUM_API_SEARCH_SNAPSHOT_DIR", str(other))
    child = prefetch.start()
    assert child is not None and await asyncio.to_thread(child.wait, 60) == 0
    path, fetched = await snapshots.fetch(nats_url, other)
    assert path.name == a_path.name and path.read_bytes() == a_path.read_bytes() and not fetched
    assert len(downloads) == 1  # (the child's download was its own process's)
    # Off when the replica will not start from a snapshot.
    monkeypatch.setenv("INDEXIUM_API_SEARCH_SNAPSHOT", "false")
    assert prefetch.start() is None
