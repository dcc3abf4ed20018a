"""The catalogue-scale rows of issue 38 at 1,000,000 mods: ``make bench BENCH=scale``.

    python bench/scale/run.py [--mods 1000000] [--data /tmp/indexium-scale] [--only peer,snapshot,replica]

The catalogue is seeded once under ``--data`` and kept (bench/api/searchprofile.py's seeding:
at 1,000,000 mods, tens of minutes and several GB on this machine); then, each in a process of
its own, on that catalogue:

* ``bench/api/peer.py``: our search beside tantivy (latency, load time, memory, answers);
* ``bench/api/snapshot.py``: a replica's index from PostgreSQL today and from the snapshot
  prototypes (pickle, the columnar file mmap'ed, fetched from NATS JetStream's object store);
* ``bench/api/replica.py``: the API as a process: start -> /readyz, uncached search p95 over HTTP
  beside the plain FTS baseline, RSS after a mixed load.

Not in ``make bench`` (which stays at 100,000 mods): it takes the better part of an hour.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

API = Path(__file__).resolve().parent.parent / "api"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mods", type=int, default=1_000_000)
    parser.add_argument("--data", default="/tmp/indexium-scale")
    parser.add_argument("--only", default="peer,snapshot,replica")
    args = parser.parse_args()
    for name in args.only.split(","):
        print(f"== bench/api/{name}.py --mods {args.mods} (load average {os.getloadavg()[0]:.2f})", flush=True)
        extra = {"snapshot": ["--events", "1000"], "replica": ["--load-timeout", "1800"]}.get(name, [])
        code = subprocess.call([sys.executable, str(API / f"{name}.py"), "--mods", str(args.mods),
                                "--data", args.data, *extra])
        if code:
            sys.exit(code)


if __name__ == "__main__":
    main()
