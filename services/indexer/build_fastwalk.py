"""Build the scan's optional C walk (src/indexium_indexer/scan/_fastwalk.c) in place.

Run by `make env`. Without a C compiler or zlib's header it says so and exits 0: the scan
then walks in Python (zipstream.py), with the same results, about three times slower on
jars of many small classes (docs/scan.md).

Where libdeflate's header is (Debian's ``libdeflate-dev``, which `make env` installs when it
runs as root), the walk inflates classes with it, zlib kept for what it cannot take (an entry
without its size in the local header, a stream libdeflate rejects); linked statically when
the package's ``libdeflate.a`` is there, so the image's runtime stage needs nothing more.
``--without-libdeflate`` builds the zlib-only walk. The module's ``INFLATER`` says which.

The image (deploy/Dockerfile) runs it with ``--installed --require``: into the installed
package (a non-editable install holds no source tree), and failing the build when it cannot
compile, so production never falls back to the slower walk unnoticed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from indexium_jar import cbuild

HERE = Path(__file__).resolve().parent / "src" / "indexium_indexer" / "scan"
SOURCE = HERE / "_fastwalk.c"


def main(argv: list[str] | None = None) -> int:
    parser = cbuild.arguments(__doc__.split("\n\n")[0], HERE, "indexium_indexer.scan")
    parser.add_argument("--without-libdeflate", action="store_true", help="inflate with zlib alone")
    args = parser.parse_args(argv)
    target = cbuild.target(args, "indexium_indexer.scan", "_fastwalk")
    if target is None:
        return 1
    cc = cbuild.compiler()
    header = None if args.without_libdeflate or cc is None else _libdeflate_header(cc)
    inputs = [SOURCE.stat().st_mtime, Path(__file__).resolve().stat().st_mtime, Path(cbuild.__file__).stat().st_mtime]
    if header is not None:  # installed after the last build: its ctime (dpkg keeps the package's mtime)
        inputs.append(max(header.stat().st_mtime, header.stat().st_ctime))
    if cbuild.up_to_date(target, inputs):
        return 0
    unbuilt = 1 if args.require else 0
    if cc is None:
        print("no C compiler: the scan walks in Python (slower on jars of many classes)")
        return unbuilt
    # -pthread: walk_batch starts helper threads (glibc 2.34 and later need no flag; older ones do).
    variants = [["-pthread", "-lz"]]
    if header is not None:  # static first (nothing more at run time), then the shared library
        variants[:0] = [["-pthread", "-DHAVE_LIBDEFLATE", "-l:libdeflate.a", "-lz"],
                        ["-pthread", "-DHAVE_LIBDEFLATE", "-ldeflate", "-lz"]]
    used, failure = cbuild.compile_first(cc, SOURCE, target, variants, env_flags="FASTWALK_CFLAGS")
    if failure is not None:
        print("could not build the scan's C walk; the scan walks in Python:\n" + failure)
        return unbuilt
    if header is not None and "-DHAVE_LIBDEFLATE" not in used:
        print("libdeflate's header is here but linking it failed: the scan's C walk inflates with zlib")
        if args.require:  # the image installs it: a walk without it is a build to look at
            cbuild.discard(target)
            return 1
    cbuild.install(target)
    return 0


def _libdeflate_header(cc: str) -> Path | None:
    """Where the compiler finds ``libdeflate.h``, or None."""
    try:
        done = subprocess.run([*cc.split(), "-E", "-H", "-x", "c", "-", "-o", os.devnull],
                              input="#include <libdeflate.h>\n", capture_output=True, text=True)
    except OSError:
        return None
    if done.returncode != 0:
        return None
    for line in done.stderr.splitlines():  # -H: ". /usr/include/libdeflate.h"
        if line.startswith(". ") and line.endswith("libdeflate.h"):
            return Path(line[2:].strip())
    return None


if __name__ == "__main__":
    sys.exit(main())
