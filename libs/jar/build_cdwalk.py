"""Build the jar reader's optional C directory walk (src/indexium_jar/zip/_cdwalk.c) in place.

Run by `make env`. Without a C compiler it says so and exits 0: CentralDirectory then walks
its records in Python (zip/zipfmt.py), with the same results, about twelve times slower on a
20,000-entry directory (2.1 vs 0.17 ms; docs/indexer.md). The image (deploy/Dockerfile) runs it with
``--installed --require`` (indexium_jar.cbuild).
"""

from __future__ import annotations

import sys
from pathlib import Path

from indexium_jar import cbuild

HERE = Path(__file__).resolve().parent / "src" / "indexium_jar" / "zip"
SOURCE = HERE / "_cdwalk.c"


def main(argv: list[str] | None = None) -> int:
    args = cbuild.arguments(__doc__.split("\n\n")[0], HERE, "indexium_jar.zip").parse_args(argv)
    target = cbuild.target(args, "indexium_jar.zip", "_cdwalk")
    if target is None:
        return 1
    inputs = [SOURCE.stat().st_mtime, Path(__file__).resolve().stat().st_mtime, Path(cbuild.__file__).stat().st_mtime]
    if cbuild.up_to_date(target, inputs):
        return 0
    unbuilt = 1 if args.require else 0
    cc = cbuild.compiler()
    if cc is None:
        print("no C compiler: the jar reader walks central directories in Python")
        return unbuilt
    _used, failure = cbuild.compile_first(cc, SOURCE, target, [[]], env_flags="CDWALK_CFLAGS")
    if failure is not None:
        print("could not build the jar reader's C directory walk; it walks in Python:\n" + failure)
        return unbuilt
    cbuild.install(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
