"""Run the fake GitHub standalone: ``python -m indexium_devstack.fakegithub --port 8600 --demo``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from pathlib import Path

from .server import FakeGitHub


async def _main(args: argparse.Namespace) -> None:
    gh = FakeGitHub(
        port=args.port,
        cdn_port=args.cdn_port,
        webhook_url=args.webhook_url,
        webhook_secret=args.webhook_secret,
    )
    await gh.start()
    try:
        app_id, pem = gh.generate_app_key(args.app_id)
        if args.key_file:
            Path(args.key_file).write_text(pem)
        if args.demo:
            repos = gh.add_demo_mods()
            if args.webhook_url:
                for repo in repos:
                    for rel in repo.releases:
                        status = await gh.send_webhook(
                            args.webhook_url, "release", gh.release_payload(rel), args.webhook_secret
                        )
                        print(f"release {repo.full_name}@{rel.tag_name} → webhook {status}")
        print(f"github: {gh.base_url}   cdn: {gh.cdn_url}   app_id: {app_id}", flush=True)
        if args.key_file:
            print(f"app private key written to {args.key_file}", flush=True)
        for inst in gh.state.installations.values():
            print(f"installation {inst.id}: {[r.full_name for r in inst.repos]}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await gh.close()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m indexium_devstack.fakegithub")
    p.add_argument("--port", type=int, default=0, help="github host port (127.0.0.1)")
    p.add_argument("--cdn-port", type=int, default=0, help="CDN host port (localhost)")
    p.add_argument("--demo", action="store_true", help="add the sample mods")
    p.add_argument("--app-id", type=int, default=None)
    p.add_argument("--key-file", help="write the App private key PEM here")
    p.add_argument("--webhook-url", help="receiver for deliveries and redeliveries")
    p.add_argument("--webhook-secret", default=None)
    asyncio.run(_main(p.parse_args(argv)))


if __name__ == "__main__":
    main()
