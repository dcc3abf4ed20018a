"""Build the scan's optional C walk (src/indexium_indexer/scan/_fastwalk.c) in place.

Run by `make env`. Without a C compiler or zlib's header it says so and exits 0: the scan
then walks in Python (zipstream.py), with the same results, about three times slower on
jars of many small classes (docs/scan.md).

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
    args = parser.parse_args(argv)
    into = args.into
    if args.installed:
        spec = importlib.util.find_spec("indexium_indexer.scan")
        if spec is None or not spec.submodule_search_locations:
            print("indexium_indexer.scan is not installed")
            return 1
        into = Path(list(spec.submodule_search_locations)[0])
    target = into / ("_fastwalk" + sysconfig.get_config_var("EXT_SUFFIX"))
    if target.exists() and target.stat().st_mtime >= SOURCE.stat().st_mtime:
        return 0
    unbuilt = 1 if args.require else 0
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("no C compiler: the scan walks in Python (slower on jars of many classes)")
        return unbuilt
    tmp = target.with_suffix(".tmp")
    cmd = [*cc.split(), "-O2", "-shared", "-fPIC", "-Wall", f"-I{sysconfig.get_paths()['include']}",
           str(SOURCE), "-o", str(tmp), "-lz"]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True)
        failure = done.stderr[-2000:] if done.returncode != 0 else None
    except OSError as exc:
        failure = str(exc)
    if failure is not None:
        print("could not build the scan's C walk; the scan walks in Python:\n" + failure)
        tmp.unlink(missing_ok=True)
        return unbuilt
    os.replace(tmp, target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
