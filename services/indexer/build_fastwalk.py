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

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent / "src" / "indexium_indexer" / "scan"
SOURCE = HERE / "_fastwalk.c"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--installed", action="store_true",
                        help="build into the installed indexium_indexer.scan package, not the source tree")
    parser.add_argument("--into", type=Path, default=HERE, help="the directory to build the module into")
    parser.add_argument("--require", action="store_true", help="exit 1 when the module cannot be built")
    parser.add_argument("--without-libdeflate", action="store_true", help="inflate with zlib alone")
    args = parser.parse_args(argv)
    into = args.into
    if args.installed:
        spec = importlib.util.find_spec("indexium_indexer.scan")
        if spec is None or not spec.submodule_search_locations:
            print("indexium_indexer.scan is not installed")
            return 1
        into = Path(list(spec.submodule_search_locations)[0])
    target = into / ("_fastwalk" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    header = None if args.without_libdeflate or cc is None else _libdeflate_header(cc)
    inputs = [SOURCE.stat().st_mtime, Path(__file__).resolve().stat().st_mtime]
    if header is not None:  # installed after the last build: its ctime (dpkg keeps the package's mtime)
        inputs.append(max(header.stat().st_mtime, header.stat().st_ctime))
    if target.exists() and target.stat().st_mtime >= max(inputs):
        return 0
    unbuilt = 1 if args.require else 0
    if cc is None:
        print("no C compiler: the scan walks in Python (slower on jars of many classes)")
        return unbuilt
    tmp = target.with_suffix(".tmp")
    base = [*cc.split(), "-O2", "-shared", "-fPIC", "-Wall", f"-I{sysconfig.get_paths()['include']}",
            *os.environ.get("FASTWALK_CFLAGS", "").split(), str(SOURCE), "-o", str(tmp), "-lz"]
    attempts = [base]
    if header is not None:  # static first (nothing more at run time), then the shared library
        attempts[:0] = [[*base, "-DHAVE_LIBDEFLATE", "-l:libdeflate.a"], [*base, "-DHAVE_LIBDEFLATE", "-ldeflate"]]
    failure = None
    for cmd in attempts:
        try:
            done = subprocess.run(cmd, capture_output=True, text=True)
            failure = done.stderr[-2000:] if done.returncode != 0 else None
        except OSError as exc:
            failure = str(exc)
        if failure is None:
            break
    if failure is not None:
        print("could not build the scan's C walk; the scan walks in Python:\n" + failure)
        tmp.unlink(missing_ok=True)
        return unbuilt
    if header is not None and "-DHAVE_LIBDEFLATE" not in cmd:
        print("libdeflate's header is here but linking it failed: the scan's C walk inflates with zlib")
        if args.require:  # the image installs it: a walk without it is a build to look at
            tmp.unlink(missing_ok=True)
            return 1
    os.replace(tmp, target)
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
