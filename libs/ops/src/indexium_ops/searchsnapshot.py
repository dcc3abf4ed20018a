"""The search snapshot's writer (``python -m indexium_ops search-snapshot``): one process writes
the snapshot file (``indexium_search.snapshot``) and puts it into JetStream's object store
(``indexium_contracts.searchsnapshot``), where every API replica fetches it at start.

**From the previous snapshot** (docs/api.md, "Replica start: the snapshot"), as a replica starts:
the current object fetched into the writer's directory (``indexium_platform.snapshotfetch``; kept
there with the file this writer put last, so a writer on the same node fetches nothing), mapped
(``snapshot.load``, its digest checked), the mods written after its position less
``indexed.CATCH_UP_MARGIN_S`` re-read (``indexed.changed_after``, ``indexed.reread``) with the slugs no
listed mod has any more (_gone: a slug moved by ``take_slug``), the hits whose active servers alone
moved patched (_servers_moved: telemetry's, without ``updated_at``, every mod's at the day's turn:
neither re-read nor counted against ``max_changes``), the lexicon
prewarmed from the old one (only words it lacks asked), and the new file written from that index
(``snapshot.write`` copies every unchanged mod's columns and posting from the old file): a
replica's memory (~150 MB at 100,000 mods) instead of a full load's (~900 MB), seconds instead of
minutes. **A full load** (``indexed.load``, ``prewarm``, as a replica used to) instead, with one
``search_snapshot_full_load`` line saying why, when: ``--full`` asks; there is no object yet; the
object cannot be read (damaged, another format) or fetched; the catch-up or the write from it
failed (a line of its own too: never stuck on one snapshot); more than ``max_changes`` mods changed
since it (MAX_CHANGES: each re-read mod is ~0.7 ms and ~5 KB, so past ~20,000 the re-reads near a
full load's time and the full load gives back popularity order); or ``full_every`` writes came
since the last full one (FULL_EVERY): ordinals stay in the popularity order of the last full
load (a re-read mod keeps its ordinal, a new one goes last, a removed one leaves a hole), which
only decides which of a broad query's matches are ranked (``indexed``'s bounded candidates), so
drift is bounded but not left to grow forever. The snapshot's meta says which: ``incremental`` (writes
since the last full one, 0 for a full one) and ``full_updated_at`` (that full load's position).

One writer, on a schedule: a Kubernetes CronJob (``deploy/``, every 10 minutes, never two at once)
or ``--every SECONDS`` as a long-running process (``schedule``: compose, ``make run``), which can
also write after a batch of catalogue changes (``--after-changes N``). Not a replica: its full
load (~100-300 s and ~900 MB at 100,000 mods on a loaded machine) stays off every request path.
The long-running scheduler only counts events and waits: each write is a process of its own
(``python -m indexium_ops search-snapshot``), so the memory a write takes goes back to the system
when it ends instead of staying in a scheduler that is idle most of the time.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

from indexium_contracts import searchsnapshot, versions
from indexium_platform import logs, natsutil, snapshotfetch
from indexium_search import indexed, searchindex, snapshot, sqlpath
from indexium_search.searchindex import Lexicon

log = logs.get(__name__)
# More mods changed since the previous snapshot than this: a full load. Measured at 100,000 mods
# (bench/api/writer.py, quiet machine): a write re-reading 0 / 5,000 / 10,000 / 20,000 mods took
# 3.1 / 7.6 / 10.6 / 17.1 s and 136 / 180 / 216 / 252 MB, a full load 30 s and ~950 MB: each re-read
# ~0.7 ms and ~5 KB. Past 20,000 the re-reads' time nears a full load's (~40,000 would equal it)
# and a fifth of the catalogue sits out of popularity order: the full load renumbers it.
MAX_CHANGES = 20_000
# Every this many writes one is a full load (the others from the previous snapshot): at the
# CronJob's 10 minutes, one a day. 0: only for the other reasons.
FULL_EVERY = 144
# Mods re-read a statement: fewer than a replica's (indexed.REREAD_BATCH), the file's pages a
# batch reads let go after each (~1 ms a statement more on the same network).
REREAD_BATCH = 100


def default_directory() -> Path:
    """Where the writer keeps the snapshot it starts from (and writes the next one)."""
    return Path(tempfile.gettempdir()) / "indexium-search-snapshot-writer"


async def write_once(conn, js, directory: Path | None = None, *, full: bool = False,
                     max_changes: int = MAX_CHANGES, full_every: int = FULL_EVERY) -> dict:
    """Write the snapshot (from the previous one, else a full load: see the module doc) and put it;
    what was put (mods, bytes, digest, position, seconds, source, caught_up, reason)."""
    started = time.monotonic()
    directory = Path(directory) if directory is not None else default_directory()
    directory.mkdir(parents=True, exist_ok=True)
    try:
        stream_seq = (await js.stream_info(versions.STREAM.name)).state.last_seq
    except Exception:  # (the position's stream sequence is for operators: never a reason not to write)
        stream_seq = 0
    built, reason = (None, "asked (--full)") if full else await _from_previous(conn, js, directory, max_changes,
                                                                                full_every)
    if built is not None:
        try:
            return await _put(js, directory, *built, stream_seq=stream_seq, started=started, reason=None)
        except Exception as exc:  # (never stuck on one: a full load writes what a replica can start from)
            log.warning("search_snapshot_from_previous_failed", error=type(exc).__name__, detail=str(exc)[:200])
            built, reason = None, f"the write from the previous snapshot failed: {type(exc).__name__}"
    log.info("search_snapshot_full_load", reason=reason)
    gc.collect()  # (a previous snapshot's index given up: its objects gone before the load)
    index = await indexed.load(conn)
    lexicon = Lexicon()
    await indexed.prewarm(conn, lexicon, index)
    return await _put(js, directory, index, lexicon, index.position, None,
                      {"incremental": 0, "full_updated_at": index.position},
                      stream_seq=stream_seq, started=started, reason=reason)


async def _put(js, directory: Path, index, lexicon, position: int, caught_up: int | None, meta: dict, *,
               stream_seq: int, started: float, reason: str | None) -> dict:
    """Write the file, put it, keep it in ``directory`` under the object's digest; what was put."""
    path = directory / f".search-index.{os.getpid()}.new"
    try:
        digest = await asyncio.to_thread(snapshot.write, index, lexicon, path, updated_at=position,
                                         stream_seq=stream_seq, meta=meta)
        store = await js.object_store(searchsnapshot.BUCKET.name)
        with open(path, "rb") as f:
            info = await store.put(searchsnapshot.OBJECT, f)
        # Kept as the object the next write (or a fetch on this node) finds: named by its digest.
        kept = directory / f"{snapshotfetch.object_digest(info.digest)}{snapshotfetch.SUFFIX}"
        os.replace(path, kept)
        snapshotfetch.remove_others(directory, kept)
    finally:
        path.unlink(missing_ok=True)
    return {"mods": len(index), "bytes": info.size, "digest": digest, "updated_at": position,
            "stream_seq": stream_seq, "seconds": round(time.monotonic() - started, 2),
            "source": "full" if caught_up is None else "previous", "caught_up": caught_up,
            "incremental": meta["incremental"], "reason": reason}


async def _from_previous(conn, js, directory: Path, max_changes: int, full_every: int):
    """((index, lexicon, position, caught_up, meta), None) from the previous snapshot brought up to
    date, or (None, why not)."""
    try:
        path, _ = await snapshotfetch.fetch_with(js, directory)
    except snapshotfetch.NoSnapshot:
        return None, "no snapshot in the object store yet"
    except Exception as exc:
        return None, f"the previous snapshot could not be fetched: {type(exc).__name__} {str(exc)[:200]}"
    try:
        return await from_file(conn, path, max_changes=max_changes, full_every=full_every)
    except Exception as exc:  # (PostgreSQL away fails the full load too; anything else: not stuck on it)
        log.warning("search_snapshot_from_previous_failed", error=type(exc).__name__, detail=str(exc)[:200])
        return None, f"the catch-up from the previous snapshot failed: {type(exc).__name__}"


async def _listed(conn) -> dict[str, int]:
    """Every listed mod's slug with its hit's ``active_servers`` now (sqlpath's expression): one read
    for both comparisons below (~100,000 rows of two columns at 100,000 mods)."""
    rows = await conn.fetch(f"SELECT m.slug, {sqlpath.ACTIVE_SERVERS_EXPR} AS servers FROM mods m"
                            f" {sqlpath.ACTIVE_SERVERS_JOIN} WHERE m.listed")
    return {r["slug"]: r["servers"] for r in rows}


def _servers_moved(index, listed: dict[str, int], already: set[str]) -> dict[int, int]:
    """Listed mods not re-read whose hit's ``active_servers`` (yesterday's telemetry,
    sqlpath.ACTIVE_SERVERS: it moves without ``mods.updated_at``, every mod's at the day's turn) is
    not the snapshot's, as ordinal -> servers now: patched into the file's hit
    (``Entries.set_servers``) rather than re-read, so a page from memory shows what a full load's
    would and the day's turn is no full load. Every hit decoded from the file (~0.5 s at 100,000
    mods), its pages let go as it goes."""
    entries, out = index.entries, {}
    for i, o in enumerate(index.listed):
        slug = entries._slugs[o]
        if slug not in already:
            hit = entries.hit_of(o)
            if hit is not None and hit.get("active_servers", 0) != (servers := listed.get(slug, 0)):
                out[o] = servers
        if i % 10_000 == 9_999:
            index.snapshot.release_pages()
    return out


def _gone(index, listed: dict[str, int], already: set[str]) -> list[str]:
    """Slugs the snapshot holds that no listed mod has now: a slug that moved away
    (``ownership.take_slug``: the holder's old slug has no row left, so no changed row names it)
    or a row gone. Re-read, they are dropped: else the write carries a ghost entry until the next
    full load."""
    return [slug for slug in index.by_slug if slug not in listed and slug not in already]


async def from_file(conn, path: Path, *, max_changes: int = MAX_CHANGES, full_every: int = FULL_EVERY):
    """The index of the snapshot file at ``path`` brought up to date from PostgreSQL, as
    ((index, lexicon, position, caught_up, meta for the next file), None), or (None, why a full
    load instead); an unusable file is removed (fetched again next time)."""
    try:
        index, known, meta = await asyncio.to_thread(snapshot.load, path, verify=True)
    except (snapshot.Unusable, OSError, ValueError, KeyError) as exc:
        path.unlink(missing_ok=True)  # (fetched again next time)
        return None, f"the previous snapshot is unusable: {type(exc).__name__} {str(exc)[:200]}"
    done = meta.get("incremental", 0)
    if full_every and done + 1 >= full_every:
        return None, f"{done} writes from a previous snapshot since the last full load (full every {full_every})"
    # The new position: this statement's transaction began before every read below (as a load's).
    position = searchindex.micros(await conn.fetchval("SELECT transaction_timestamp()"))
    slugs = await indexed.changed_after(conn, index, meta["updated_at"], indexed.CATCH_UP_MARGIN_S)
    listed = await _listed(conn)
    servers = _servers_moved(index, listed, set(slugs))
    slugs += _gone(index, listed, set(slugs))
    del listed
    # (the file's pages the comparison and each batch read let go, as a replica does every 0.5 s: a
    # batch of 500 mods re-read mapped ~60 MB of the file at 100,000 mods, the postings it changed)
    index.snapshot.release_pages()
    if len(slugs) > max_changes:
        return None, f"{len(slugs)} mods changed since the previous snapshot (more than {max_changes})"
    for o, n in servers.items():  # (not re-read: the file's hit with its count, however many)
        index.entries.set_servers(o, n)
    for batch in indexed.batches(slugs, REREAD_BATCH):
        await indexed.reread(conn, index, batch)
        index.snapshot.release_pages()
    # Every catalogue word, as a full load reads them (a re-read adds its own mod's; a word of a
    # mod never listed would be missing).
    index.words.update([r[0] for r in await conn.fetch("SELECT word FROM search_words")])
    lexicon = Lexicon()
    await indexed.prewarm(conn, lexicon, index, known=known)
    log.info("search_snapshot_caught_up", reread=len(slugs), servers_patched=len(servers))
    return (index, lexicon, position, len(slugs),
            {"incremental": done + 1, "full_updated_at": meta.get("full_updated_at", meta["updated_at"])}), None


async def schedule(nats_url: str, *, every_s: float, after_changes: int = 0, min_interval_s: float = 60.0,
                   write_first: bool = True, write_args: tuple[str, ...] = ()) -> None:
    """Write now (``write_first``; else wait first, as after a write just made), then again every ``every_s``, or sooner once ``after_changes`` catalogue events
    (the VERSIONS stream's subjects, as the API's invalidation hears them) came since the last write
    began and ``min_interval_s`` passed since then. Each write a child process (given ``write_args``:
    the writer's own options). Runs until cancelled."""
    changes = 0
    nc = None
    if after_changes:
        nc = await natsutil.connect(nats_url, name="indexium-search-snapshot-schedule")

        async def heard(_msg) -> None:
            nonlocal changes
            changes += 1

        await nc.subscribe(f"{versions.SUBJECT_PREFIX}.>", cb=heard)
    # SIGTERM (a stop) ends the scheduler and the write under way with it.
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    child = None
    try:
        write = write_first
        while True:
            began = time.monotonic()
            changes = 0
            if write:
                child = await asyncio.create_subprocess_exec(sys.executable, "-m", "indexium_ops", "search-snapshot",
                                                             *write_args, env=os.environ.copy())
                code = await child.wait()
                if code != 0:
                    log.warning("search_snapshot_write_failed", exit_code=code)
            write = True
            while True:
                waited = time.monotonic() - began
                if waited >= every_s:
                    break
                if after_changes and changes >= after_changes and waited >= min_interval_s:
                    log.info("search_snapshot_after_changes", events=changes)
                    break
                await asyncio.sleep(1.0)
    except asyncio.CancelledError:
        pass
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        if child is not None and child.returncode is None:
            child.kill()
            await child.wait()
        if nc is not None:
            await nc.drain()
