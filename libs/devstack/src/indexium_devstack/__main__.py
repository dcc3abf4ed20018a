"""python -m indexium_devstack run [--demo] [--root DIR]"""

import argparse
from pathlib import Path

from .stack import run

parser = argparse.ArgumentParser(prog="python -m indexium_devstack")
sub = parser.add_subparsers(dest="command", required=True)
r = sub.add_parser("run", help="run the whole system locally")
r.add_argument("--demo", action="store_true", help="serve sample mods and send webhooks for them")
r.add_argument("--root", type=Path, default=Path(".run"), help="where data and logs live")
args = parser.parse_args()
if args.command == "run":
    run(args.root.resolve(), demo=args.demo)
