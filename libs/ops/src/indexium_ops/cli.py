"""Operator CLI: the setup step and the dead-letter working queue."""

from __future__ import annotations

import argparse
import asyncio
import sys

import asyncpg
import msgspec

from indexium_db import migrate
from indexium_db.queries import deadletters
from indexium_platform import natsutil
from indexium_platform.settings import Common, SettingsError, load


class Settings(Common, frozen=True, kw_only=True):
    port: int = msgspec.field(default=0, name="PORT")  # unused; keeps Common's shape
    # 3 in production (a NATS cluster), 1 locally.
    stream_replicas: int = msgspec.field(default=1, name="INDEXIUM_STREAM_REPLICAS")


async def setup(settings: Settings) -> list[str]:
    """Apply migrations and create/update streams and consumers. Safe to run concurrently."""
    done = []
    conn = await asyncpg.connect(settings.database_url)
    try:
        applied = await migrate.migrate(conn)
        done.append(f"migrations applied: {', '.join(applied) or 'none pending'}")
    finally:
        await conn.close()
    nc = await natsutil.connect(settings.nats_url, name="indexium-setup")
    try:
        done += await natsutil.ensure_all(nc.jetstream(), replicas=settings.stream_replicas)
    finally:
        await nc.drain()
    return done


async def dead_letters(settings: Settings, args: argparse.Namespace) -> None:
    conn = await asyncpg.connect(settings.database_url)
    try:
        if args.action == "list":
            rows = await deadletters.list_open(conn, limit=args.limit)
            for r in rows:
                print(f"{r['id']}\t{r['created_at']:%Y-%m-%d %H:%M:%S}\t{r['consumer']}\t{r['category']}"
                      f"\tattempts={r['attempts']}\t{r['error'][:120]}")
            print(f"{len(rows)} open dead letter(s)")
        elif args.action == "replay":
            nc = await natsutil.connect(settings.nats_url, name="indexium-ops")
            js = nc.jetstream()
            try:
                for dl_id in args.ids:
                    row = await deadletters.get(conn, dl_id)
                    if row is None:
                        print(f"{dl_id}: no such dead letter", file=sys.stderr)
                        continue
                    # Through the normal path: the original bytes on the original subject. A new
                    # Nats-Msg-Id so JetStream's duplicate window does not swallow the replay.
                    await js.publish(row["subject"], bytes(row["payload"]),
                                     headers={"Nats-Msg-Id": f"replay:{dl_id}:{row['msg_id']}"})
                    await deadletters.mark_replayed(conn, dl_id)
                    print(f"{dl_id}: replayed to {row['subject']}")
            finally:
                await nc.drain()
        elif args.action == "purge":
            n = await deadletters.purge(conn, replayed_only=not args.all)
            print(f"{n} dead letter(s) purged")
    finally:
        await conn.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m indexium_ops")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("setup", help="apply migrations and create/update streams")
    dl = sub.add_parser("dead-letters", help="list, replay or purge dead letters")
    dl_sub = dl.add_subparsers(dest="action", required=True)
    ls = dl_sub.add_parser("list")
    ls.add_argument("--limit", type=int, default=100)
    rp = dl_sub.add_parser("replay")
    rp.add_argument("ids", type=int, nargs="+")
    pg = dl_sub.add_parser("purge")
    pg.add_argument("--all", action="store_true", help="also purge dead letters never replayed")
    args = parser.parse_args(argv)
    try:
        settings = load(Settings)
    except SettingsError as exc:
        raise SystemExit(f"indexium_ops: {exc}") from None
    if args.command == "setup":
        for line in asyncio.run(setup(settings)):
            print(line)
    else:
        asyncio.run(dead_letters(settings, args))
