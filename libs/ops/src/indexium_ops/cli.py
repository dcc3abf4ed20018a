"""Operator CLI: the setup step, dead letters, quarantine, the GitHub App's state, skipped
assets and the Minecraft version table (``python -m indexium_ops --help``).

Every command connects through :func:`_database` / :func:`_nats`: a server it cannot reach is
one line naming it (:class:`Unreachable`), never a traceback. Beside ``make run`` with no
``DATABASE_URL`` given it uses the running local stack's servers (``localstack``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg
import msgspec
from nats import errors as nats_errors

from indexium_contracts import ingest
from indexium_db import migrate
from indexium_db import review
from indexium_db.queries import deadletters as deadletters_q
from indexium_db.queries import ownership as ownership_q
from indexium_db.queries import scan as scan_q
from indexium_db.queries import skips as skips_q
from indexium_db.queries import versions as versions_q
from indexium_db.queries import github as github_q
from indexium_platform import natsutil
from indexium_platform.settings import Common, SettingsError, load

from . import localstack, searchsnapshot


class Settings(Common, frozen=True, kw_only=True):
    # 3 in production (a NATS cluster), 1 locally.
    stream_replicas: int = msgspec.field(default=1, name="INDEXIUM_STREAM_REPLICAS")
    # Where the search snapshot's writer keeps the snapshot it starts from ("": <temp dir>/
    # indexium-search-snapshot-writer; --directory wins): a stack's own, where several share a machine.
    search_snapshot_writer_dir: str = msgspec.field(default="", name="INDEXIUM_SEARCH_SNAPSHOT_WRITER_DIR")


class Unreachable(Exception):
    """A server a command needs could not be reached; the message names it and says why."""


def _where(url: str) -> str:
    """host:port/database of a URL, without its credentials."""
    parts = urlsplit(url)
    return f"{parts.hostname or '?'}:{parts.port or '-'}{parts.path if parts.path not in ('', '/') else ''}"


def _why(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return "no answer in time"
    return (str(exc).splitlines() or [type(exc).__name__])[0] or type(exc).__name__


_HINT = "set DATABASE_URL and NATS_URL, or run it beside `make run`"


async def _database(settings: Settings) -> asyncpg.Connection:
    try:
        return await asyncpg.connect(settings.database_url, timeout=10)
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise Unreachable(f"cannot reach PostgreSQL at {_where(settings.database_url)}: {_why(exc)} ({_HINT})") from None


async def _nats(settings: Settings, name: str = "indexium-ops"):
    try:
        return await natsutil.connect(settings.nats_url, name=name, reconnect=False)
    except (OSError, asyncio.TimeoutError, nats_errors.Error) as exc:
        raise Unreachable(f"cannot reach NATS at {', '.join(map(_where, settings.nats_url.split(',')))}:"
                          f" {_why(exc)} ({_HINT})") from None


async def setup(settings: Settings) -> list[str]:
    """Apply migrations and create/update streams and consumers. Safe to run concurrently."""
    done = []
    conn = await _database(settings)
    try:
        applied = await migrate.migrate(conn)
        done.append(f"migrations applied: {', '.join(applied) or 'none pending'}")
        if attributed := await attribute_dead_letters(conn):
            done.append(f"dead letters attributed to their repository: {attributed}")
    finally:
        await conn.close()
    nc = await _nats(settings, "indexium-setup")
    try:
        natsutil.require_per_message_ttl(nc)
        done += await natsutil.ensure_all(nc.jetstream(), replicas=settings.stream_replicas)
    finally:
        await nc.drain()
    return done


async def attribute_dead_letters(conn: asyncpg.Connection) -> int:
    """Open INGEST dead letters from before ``dead_letters.github_repo_id`` (0013) or
    ``tag_name`` (0018) get the repository and the release tag their message is about, as the
    ledger now records them; how many. Idempotent: a row about no one repository or release
    (an installation's event, a catch-up) keeps its NULL and is read again at the next setup,
    which the open queue's size bounds."""
    n = 0
    for row in await deadletters_q.unattributed_open(conn, f"{ingest.SUBJECT_PREFIX}."):
        repo_id, tag = ingest.about_message(bytes(row["payload"]))
        if (row["github_repo_id"] is None and repo_id is not None) or (row["tag_name"] is None and tag is not None):
            await deadletters_q.set_about(conn, row["id"], repo_id, tag)
            n += 1
    return n


async def dead_letters(settings: Settings, args: argparse.Namespace) -> None:
    conn = await _database(settings)
    try:
        if args.action == "list":
            rows = await deadletters_q.list_open(conn, limit=args.limit)
            for r in rows:
                print(f"{r['id']}\t{r['created_at']:%Y-%m-%d %H:%M:%S}\t{r['consumer']}\t{r['category']}"
                      f"\tattempts={r['attempts']}\t{r['error'][:120]}")
            print(f"{len(rows)} open dead letter(s)")
        elif args.action == "replay":
            nc = await _nats(settings)
            js = nc.jetstream()
            try:
                for dl_id in args.ids:
                    row = await deadletters_q.get(conn, dl_id)
                    if row is None:
                        print(f"{dl_id}: no such dead letter", file=sys.stderr)
                        continue
                    # Through the normal path: the original bytes on the original subject. A new
                    # Nats-Msg-Id so JetStream's duplicate window does not swallow the replay.
                    await js.publish(row["subject"], bytes(row["payload"]),
                                     headers={"Nats-Msg-Id": f"replay:{dl_id}:{row['msg_id']}"})
                    await deadletters_q.mark_replayed(conn, dl_id)
                    print(f"{dl_id}: replayed to {row['subject']}")
            finally:
                await nc.drain()
        elif args.action == "purge":
            n = await deadletters_q.purge(conn, replayed_only=not args.all)
            print(f"{n} dead letter(s) purged")
    finally:
        await conn.close()


async def github(settings: Settings, args: argparse.Namespace) -> None:
    """The GitHub App's state: installations, registrations, backfills, reconciliation passes."""
    conn = await _database(settings)
    try:
        if args.action == "repos":
            for r in await github_q.list_repositories(conn, args.state, args.limit):
                gone = " removed" if r["removed"] else (" deleted" if r["deleted"] else "")
                detail = r["skip_reason"] or r["manifest_source"] or ""
                print(f"{r['full_name']}\t{r['state']}{gone}\tbackfill={r['backfill_state']}"
                      f" {r['backfill_published']}/{r['backfill_total'] or 0}\t{detail}"
                      + (f"\terror: {r['backfill_error'] or r['reconcile_error']}"
                         if r["backfill_error"] or r["reconcile_error"] else ""))
            return
        counts = await github_q.status_counts(conn)
        print("installations: " + (", ".join(f"{r['state']}={r['n']}" for r in counts["installations"]) or "none"))
        print("repositories:  " + (", ".join(f"{r['state']}={r['n']}" + (f" (+{r['gone']} gone)" if r["gone"] else "")
                                             for r in counts["repositories"]) or "none"))
        for r in counts["skip_reasons"]:
            print(f"  skipped {r['n']}: {r['skip_reason']}")
        print("backfills:     " + (", ".join(f"{r['state']}={r['n']}" for r in counts["backfills"]) or "none"))
        left_out = await skips_q.counts_by_code(conn)
        print("assets left out of releases: " + (", ".join(f"{r['code']}={r['n']}" for r in left_out) or "none")
              + ("  (python -m indexium_ops skipped)" if left_out else ""))
        runs = await github_q.recent_runs(conn, args.runs)
        print("reconciliation passes (newest first):" if runs else "reconciliation passes: none yet")
        for r in runs:
            took = f"{(r['finished_at'] - r['started_at']).total_seconds():.0f}s" if r["finished_at"] else "running"
            print(f"  #{r['id']} {r['started_at']:%Y-%m-%d %H:%M:%S} {r['status']} ({took}) on {r['holder']}:"
                  f" repos {r['repos_done']}/{r['repos_total']} ({r['repos_unchanged']} unchanged,"
                  f" {r['repos_added']} added, {r['repos_removed']} removed by listing),"
                  f" releases sent {r['releases_published']}, versions hidden {r['versions_hidden']},"
                  f" download counts {r['files_updated']}, API requests {r['api_requests']}"
                  f" ({r['not_modified']} x 304), errors {r['errors']}"
                  + (f"\n    last error: {r['last_error']}" if r["last_error"] else ""))
    finally:
        await conn.close()


async def skipped(settings: Settings, args: argparse.Namespace) -> None:
    """Release assets the indexer left out, newest first, each with its reason."""
    conn = await _database(settings)
    try:
        rows = await skips_q.left_out(conn, repo_full_name=args.repo, include_non_mod_files=args.all,
                                      limit=args.limit)
        if not rows:
            print("no release asset left out" + ("" if args.all else " (--all: also files that are not mods)"))
        for r in rows:
            release = "indexed without it" if r["release_indexed"] else "release not indexed"
            print(f"{r['updated_at']:%Y-%m-%d %H:%M:%S}  {r['repo_full_name']} {r['tag_name']}  {r['asset_name']}"
                  f"  [{r['code']}] {r['reason']}  ({release})")
    finally:
        await conn.close()


MOJANG_MANIFEST = "https://piston-meta.mojang.com/mc/game/version_manifest_v2.json"
_MANIFEST_MAX_BYTES = 16 * 1024 * 1024


def parse_version_manifest(doc: object) -> list[versions_q.MinecraftVersion]:
    """Mojang's ``version_manifest_v2.json`` (or the snapshot shipped in indexium_jar): its
    ``versions`` newest first, each with ``id``, ``type`` and ``releaseTime``."""
    items = doc.get("versions") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError("no 'versions' array")
    rows, seen = [], set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not item["id"].strip():
            raise ValueError(f"a version without an id: {str(item)[:80]}")
        vid = item["id"].strip()
        if vid in seen or len(vid) > 64:
            raise ValueError(f"duplicate or overlong version id {vid[:80]!r}")
        seen.add(vid)
        try:
            when = datetime.fromisoformat(str(item["releaseTime"]))
        except (KeyError, ValueError):
            raise ValueError(f"version {vid!r} has no valid releaseTime") from None
        if when.tzinfo is None:
            raise ValueError(f"version {vid!r} releaseTime has no time zone")
        target = item.get("releaseTarget")
        rows.append(versions_q.MinecraftVersion(vid, str(item.get("type") or "release"), when,
                                                target if isinstance(target, str) else None))
    if not any(r.type == "release" for r in rows):
        raise ValueError("no release versions")
    return rows


async def _fetch_manifest(url: str) -> object:
    import aiohttp  # only this command talks to the Internet

    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(timeout=timeout) as http, http.get(url) as resp:
        resp.raise_for_status()
        body = await resp.content.read(_MANIFEST_MAX_BYTES + 1)
    if len(body) > _MANIFEST_MAX_BYTES:
        raise ValueError(f"the manifest exceeds {_MANIFEST_MAX_BYTES} bytes")
    return json.loads(body)


async def minecraft_versions(settings: Settings, args: argparse.Namespace) -> None:
    """Replace the stored Minecraft version table; the indexer reads it when it starts."""
    try:
        doc = json.loads(Path(args.file).read_bytes()) if args.file else await _fetch_manifest(args.url)
        rows = parse_version_manifest(doc)
    except Exception as exc:
        raise SystemExit(f"indexium_ops: cannot use the version manifest: {exc}") from None
    conn = await _database(settings)
    try:
        async with conn.transaction():
            stored = {r["id"] for r in await versions_q.minecraft_versions(conn)}
            dropped = stored - {r.id for r in rows}
            if dropped and not args.force:
                raise SystemExit(
                    f"indexium_ops: the new list lacks {len(dropped)} stored version(s), e.g. "
                    f"{sorted(dropped)[:5]}; refusing (use --force to replace anyway)")
            n = await versions_q.replace_minecraft_versions(conn, rows)
    finally:
        await conn.close()
    latest = next(r.id for r in rows if r.type == "release")
    print(f"{n} Minecraft versions stored (newest release {latest}, {len(rows) - len(stored & {r.id for r in rows})} new); "
          "restart the indexer to use them")


# ---- quarantine: what the scan stage held back, and the operators' decisions ----------------------

async def quarantine(settings: Settings, args: argparse.Namespace) -> int:
    """``quarantine list|show|approve|reject``; every decision is recorded with who and when."""
    conn = await _database(settings)
    try:
        if args.action == "list":
            rows = await scan_q.list_quarantined(conn, limit=args.limit, include_rejected=args.all)
            for r in rows:
                print(f"{r['id']}\t{r['updated_at']:%Y-%m-%d %H:%M}\t{r['status']}\t{r['slug']} {r['version_number']}"
                      f"\tfindings={r['findings']} max={r['max_severity'] or 0}\t{(r['reason'] or '')[:120]}")
            print(f"{len(rows)} version(s) held")
            return 0
        version_id = await scan_q.resolve_version(conn, args.id)
        if version_id is None:
            print(f"{args.id}: no such version (or the prefix is ambiguous)", file=sys.stderr)
            return 1
        if args.action == "show":
            await _show_quarantine(conn, version_id)
            return 0
        return await _review(conn, settings, version_id, args)
    finally:
        await conn.close()


async def _show_quarantine(conn: asyncpg.Connection, version_id) -> None:
    v = await scan_q.version_state(conn, version_id)
    print(f"{v['slug']} {v['version_number']}  ({version_id})  status={v['status']}"
          f"{'  hidden' if v['hidden'] else ''}")
    for f in await scan_q.version_files(conn, version_id):
        print(f"  file {f['filename']}  {f['size']} bytes  scan={f['scan_status']}"
              f"{'  (' + f['scan_reason'] + ')' if f['scan_reason'] else ''}")
        print(f"       sha1={f['sha1'] or '-'}  sha256={f['sha256'] or '-'}")
    for s in await scan_q.version_findings(conn, version_id):
        where = " ".join(x for x in (s["entry_path"], s["class_name"], s["method"]) if x)
        print(f"  [{s['severity']:>2}] {s['rule']:<20} {s['location']:<16} {where}  {s['detail']}")
    for _, text in (await ownership_q.reasons(conn, [version_id])).get(version_id, []):
        # A re-upload can only be rejected; a claimed mod id is decided with the version.
        print(f"  held: {text}")
    for d in await scan_q.decisions(conn, version_id):
        print(f"  {d['created_at']:%Y-%m-%d %H:%M:%S}  {d['action']:<11} by {d['actor']}  {d['reason']}")


async def _review(conn: asyncpg.Connection, settings: Settings, version_id, args: argparse.Namespace) -> int:
    try:
        reviewed = await review.decide(conn, version_id, args.action, args.by, args.reason or "")
    except review.NotReviewable as exc:
        print(str(exc), file=sys.stderr)
        return 1
    nc = await _nats(settings)
    try:  # after commit, so API caches drop the version at once
        await review.publish(nc.jetstream(), reviewed)
    finally:
        await nc.drain()
    print(f"{reviewed.slug} {reviewed.version_number}: {reviewed.decision} by {args.by}; now {reviewed.status}")
    return 0


async def search_snapshot(settings: Settings, args: argparse.Namespace) -> None:
    """Write the search snapshot and put it in the object store; with --every, again and again
    (each write a process of its own: searchsnapshot.schedule)."""
    if args.every:
        await searchsnapshot.schedule(settings.nats_url, every_s=args.every, after_changes=args.after_changes,
                                      min_interval_s=args.min_interval, write_first=not args.wait_first,
                                      write_args=_write_args(args))
        return
    if args.nice:
        # A batch job beside the services it feeds (make run's one machine): its CPU bursts (a
        # write of 100,000 mods is seconds of one core) come after the requests' (a soak's API p95
        # jumped in each window holding a write). Only this process: PostgreSQL's reads for it are not.
        os.nice(args.nice)
    conn = await _database(settings)
    nc = await _nats(settings, "indexium-search-snapshot")
    try:
        directory = args.directory or (Path(settings.search_snapshot_writer_dir)
                                       if settings.search_snapshot_writer_dir else None)
        done = await searchsnapshot.write_once(conn, nc.jetstream(), directory, full=args.full,
                                               max_changes=args.max_changes, full_every=args.full_every)
        how = (f"from the previous snapshot, {done['caught_up']} mods re-read, write {done['incremental']} since "
               f"the last full load" if done["source"] == "previous" else f"full load: {done['reason']}")
        print(f"search snapshot put: {done['mods']} mods, {done['bytes'] / 2**20:.1f} MiB in {done['seconds']} s"
              f" ({how}; sha256 {done['digest'][:16]}, position {done['updated_at']}, stream seq "
              f"{done['stream_seq']}; niceness {os.nice(0)})", flush=True)
    finally:
        await conn.close()
        await nc.drain()


def _write_args(args: argparse.Namespace) -> tuple[str, ...]:
    """The writer's options, for each write the scheduler starts."""
    out = ["--max-changes", str(args.max_changes), "--full-every", str(args.full_every)]
    if args.full:
        out.append("--full")
    if args.nice:
        out += ["--nice", str(args.nice)]
    if args.directory is not None:
        out += ["--directory", str(args.directory)]
    return tuple(out)


def _niceness(text: str) -> int:
    """--nice: an increment os.nice takes from an unprivileged process (0-19)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 0 <= value <= 19:
        raise argparse.ArgumentTypeError(f"{value} is not in 0-19 (only lowering the priority is possible)")
    return value


def _command(sub, name: str, text: str, **kwargs) -> argparse.ArgumentParser:
    """A (sub-)command whose ``--help`` says what it does, and whose parent's list says it too."""
    return sub.add_parser(name, help=text, description=text, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m indexium_ops",
        description="Indexium's operator commands. They read DATABASE_URL and NATS_URL like the services; "
                    "without DATABASE_URL, beside `make run`, they use the local stack's (.run/state.json).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _command(sub, "setup", "apply migrations and create or update the streams, consumers and buckets "
                           "(one deploy step; safe to run concurrently)")
    dl = _command(sub, "dead-letters", "list, replay or purge dead letters (jobs a consumer gave up on)")
    dl_sub = dl.add_subparsers(dest="action", required=True, metavar="ACTION")
    ls = _command(dl_sub, "list", "list the open dead letters, oldest first, each with its reason")
    ls.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    rp = _command(dl_sub, "replay", "publish dead letters again, their original bytes on their original subject")
    rp.add_argument("ids", type=int, nargs="+", help="dead letter ids, as list prints them")
    pg = _command(dl_sub, "purge", "delete replayed dead letters")
    pg.add_argument("--all", action="store_true", help="also purge dead letters never replayed")
    gh = _command(sub, "github", "the GitHub App's state: installations, registrations, backfills, reconciliation")
    gh_sub = gh.add_subparsers(dest="action", required=True, metavar="ACTION")
    st = _command(gh_sub, "status", "counts of installations, repositories and backfills, skipped assets, "
                                    "and the latest reconciliation passes")
    st.add_argument("--runs", type=int, default=5, help="reconciliation passes to show (default 5)")
    rs = _command(gh_sub, "repos", "the App's repositories, each with its state, backfill and last error")
    rs.add_argument("--state", choices=("pending", "registered", "skipped"), help="only repositories in this state")
    rs.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    mv = _command(sub, "minecraft-versions", "the Minecraft version table the indexer uses")
    mv_sub = mv.add_subparsers(dest="action", required=True, metavar="ACTION")
    rf = _command(mv_sub, "refresh", "store Mojang's version manifest (newest first); restart the indexer after")
    src = rf.add_mutually_exclusive_group(required=True)
    src.add_argument("--file", help="a version_manifest_v2.json on disk")
    src.add_argument("--url", help=f"where to download it (Mojang: {MOJANG_MANIFEST})")
    rf.add_argument("--force", action="store_true", help="replace even if stored versions would disappear")
    sk = _command(sub, "skipped", "release assets the indexer left out, newest first, with the reason for each")
    sk.add_argument("--repo", help="one repository (owner/name)")
    sk.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    sk.add_argument("--all", action="store_true", help="also assets that are not mod files (zips, sources jars)")
    ss = _command(sub, "search-snapshot", "write the search index's snapshot and put it in the object store, "
                                          "where API replicas start from it (one writer; on a schedule)")
    ss.add_argument("--every", type=float, default=0, help="keep running: write again every this many seconds "
                    "(each write a process of its own)")
    ss.add_argument("--after-changes", type=int, default=0,
                    help="with --every: also write once this many catalogue events (the VERSIONS stream's "
                         "subjects) came since the last write began (0: on the schedule alone)")
    ss.add_argument("--min-interval", type=float, default=60.0,
                    help="with --after-changes: never two writes' starts closer than this many seconds (60)")
    ss.add_argument("--wait-first", action="store_true",
                    help="with --every: no write at start (one was just written), the first after the wait")
    ss.add_argument("--full", action="store_true", help="load the whole index from PostgreSQL (else: start from "
                    "the previous snapshot and re-read the mods changed since, when it can)")
    ss.add_argument("--max-changes", type=int, default=searchsnapshot.MAX_CHANGES,
                    help=f"more mods changed since the previous snapshot than this: a full load "
                         f"({searchsnapshot.MAX_CHANGES})")
    ss.add_argument("--full-every", type=int, default=searchsnapshot.FULL_EVERY,
                    help=f"every this many writes one is a full load ({searchsnapshot.FULL_EVERY}: a day of the "
                         f"CronJob's 10 minutes; 0: never for this reason)")
    ss.add_argument("--nice", type=_niceness, default=0,
                    help="lower each write's CPU priority by this much (os.nice, 0-19) so the services on the "
                         "same machine come first (make run: 10); in Kubernetes, the CronJob's own CPU limit "
                         "does this instead (0)")
    ss.add_argument("--directory", type=Path, default=None,
                    help="where the writer keeps the snapshot it starts from and writes the next "
                         "(default: INDEXIUM_SEARCH_SNAPSHOT_WRITER_DIR, else <temp dir>/"
                         "indexium-search-snapshot-writer)")
    qr = _command(sub, "quarantine", "versions the scan stage held back: list, show, approve, reject")
    qr_sub = qr.add_subparsers(dest="action", required=True, metavar="ACTION")
    ql = _command(qr_sub, "list", "the held versions, newest first, with their findings")
    ql.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")
    ql.add_argument("--all", action="store_true", help="also list rejected versions")
    qs = _command(qr_sub, "show", "one version: its files, hashes, findings and every decision on it")
    qs.add_argument("id", help="version id (or a unique prefix, as list prints it)")
    for name, text in (("approve", "make a held version public (recorded with who, when and why; "
                                   "the API's caches drop it at once)"),
                       ("reject", "keep a version hidden for good (recorded with who, when and why)")):
        qa = _command(qr_sub, name, text)
        qa.add_argument("id", help="version id (or a unique prefix)")
        qa.add_argument("--by", required=True, help="who decides (recorded with the time)")
        qa.add_argument("--reason", default="", help="why (recorded)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        settings = load(Settings, localstack.environment(os.environ, Path.cwd()))
    except (SettingsError, localstack.NotRunning) as exc:
        raise SystemExit(f"indexium_ops: {exc}") from None
    try:
        if args.command == "setup":
            for line in asyncio.run(setup(settings)):
                print(line)
        elif args.command == "minecraft-versions":
            asyncio.run(minecraft_versions(settings, args))
        elif args.command == "quarantine":
            raise SystemExit(asyncio.run(quarantine(settings, args)))
        elif args.command == "github":
            asyncio.run(github(settings, args))
        elif args.command == "skipped":
            asyncio.run(skipped(settings, args))
        elif args.command == "search-snapshot":
            asyncio.run(search_snapshot(settings, args))
        else:
            asyncio.run(dead_letters(settings, args))
    except Unreachable as exc:
        raise SystemExit(f"indexium_ops: {exc}") from None
