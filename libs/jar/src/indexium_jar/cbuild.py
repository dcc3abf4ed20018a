"""Compiling the optional C modules in place: the jar reader's directory walk
(``zip/_cdwalk.c``, libs/jar/build_cdwalk.py), the search's word similarity
(indexium_search's ``_fastsearch.c``, libs/search/build_fastsearch.py) and the scan's walk (the indexer's
``scan/_fastwalk.c``, services/indexer/build_fastwalk.py). Kept in indexium_jar, which the
development environment and the image always install (the API and the indexer depend on
it); indexium_search itself does not, only its build script imports this.

Each is an optimisation with a Python fallback giving the same results: `make env` builds
it where there is a C compiler and goes on without one; the image (deploy/Dockerfile)
builds it with ``--installed --require`` into the installed package (a non-editable
install holds no source tree), failing the build when it cannot compile, so production
never falls back to the slower walk unnoticed. Standard library only: it runs before
anything else is imported.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path


def arguments(description: str, default_into: Path, package: str) -> argparse.ArgumentParser:
    """The options every build script takes (--installed, --into, --require)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--installed", action="store_true",
                        help=f"build into the installed {package} package, not the source tree")
    parser.add_argument("--into", type=Path, default=default_into, help="the directory to build the module into")
    parser.add_argument("--require", action="store_true", help="exit 1 when the module cannot be built")
    return parser


def target(args: argparse.Namespace, package: str, module: str) -> Path | None:
    """Where the module is built (``args.into``, or the installed package's directory), or
    None when --installed names a package that is not installed."""
    into = args.into
    if args.installed:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            print(f"{package} is not installed")
            return None
        into = Path(list(spec.submodule_search_locations)[0])
    return into / (module + sysconfig.get_config_var("EXT_SUFFIX"))


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def up_to_date(built: Path, inputs: list[float]) -> bool:
    """The module is there and newer than every input's time."""
    return built.exists() and built.stat().st_mtime >= max(inputs)


def compile_first(cc: str, source: Path, built: Path, variants: list[list[str]],
                  env_flags: str = "") -> tuple[list[str] | None, str | None]:
    """Compile ``source`` beside ``built`` with the first of ``variants`` (extra arguments,
    in order of preference) that works: (the variant used, None), the module then waiting
    for :func:`install` or :func:`discard`; or (None, the last failure) with nothing left
    behind. ``env_flags`` names an environment variable of more flags."""
    tmp = _pending(built)
    base = [*cc.split(), "-O2", "-shared", "-fPIC", "-Wall", f"-I{sysconfig.get_paths()['include']}",
            *(os.environ.get(env_flags, "").split() if env_flags else ()), str(source), "-o", str(tmp)]
    failure = None
    for variant in variants:
        try:
            done = subprocess.run([*base, *variant], capture_output=True, text=True)
            failure = done.stderr[-2000:] if done.returncode != 0 else None
        except OSError as exc:
            failure = str(exc)
        if failure is None:
            return variant, None
    discard(built)
    return None, failure


def install(built: Path) -> None:
    """The compiled module takes the place of the old one (atomically: a running process
    that imported the old one keeps it)."""
    os.replace(_pending(built), built)


def discard(built: Path) -> None:
    _pending(built).unlink(missing_ok=True)


def _pending(built: Path) -> Path:
    return built.with_suffix(".tmp")


def build_plain(argv: list[str] | None, *, doc: str, script: str, package: str, module: str, what: str,
                env_flags: str) -> int:
    """The whole build of a module that needs nothing but Python's headers (``doc``: the
    script's docstring, its first paragraph the description; ``script``: its __file__;
    ``what``: how the fallback is named in the messages)."""
    source_dir = Path(script).resolve().parent / "src" / Path(*package.split("."))
    source = source_dir / f"{module}.c"
    args = arguments(doc.split("\n\n")[0], source_dir, package).parse_args(argv)
    built = target(args, package, module)
    if built is None:
        return 1
    inputs = [source.stat().st_mtime, Path(script).resolve().stat().st_mtime, Path(__file__).stat().st_mtime]
    if up_to_date(built, inputs):
        return 0
    unbuilt = 1 if args.require else 0
    cc = compiler()
    if cc is None:
        print(f"no C compiler: {what} in Python")
        return unbuilt
    _used, failure = compile_first(cc, source, built, [[]], env_flags=env_flags)
    if failure is not None:
        print(f"could not build {module}.c: {what} in Python:\n" + failure)
        return unbuilt
    install(built)
    return 0
