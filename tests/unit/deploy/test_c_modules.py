"""The build scripts of the C modules that need only Python's headers (indexium_jar.cbuild
.build_plain): the jar reader's directory walk and the search's word similarity. Each builds
a module that loads, goes on without a compiler (`make env`: the Python fallback) and fails
with --require (the image), leaving nothing half-built."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _use_cdwalk(module) -> None:
    starts, index, streamed, meta = [], {}, [], []
    assert module.walk(b"PK\x01\x02" + bytes(42), 0, 46, 46, 32, starts, index, streamed, meta) == 46
    assert (starts, index, streamed, meta) == ([0], {b"": 0}, [], [])


def _use_fastsearch(module) -> None:
    class Named:
        def __init__(self, name: str) -> None:
            self.name = name

    found = module.similar_among("word", [Named("two words"), Named("x")], [0, 1], 0.0)
    assert found == {0: pytest.approx(0.8), 1: 0.0}
    assert callable(module.relevances) and callable(module.similar_among)


MODULES = [("libs/jar/build_cdwalk.py", "_cdwalk", _use_cdwalk),
           ("libs/search/build_fastsearch.py", "_fastsearch", _use_fastsearch)]


def _build(script: str, *args: str, cc: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if cc is not None:
        env["CC"] = cc
    return subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize(("script", "name", "use"), MODULES)
def test_builds_a_module_that_loads_into_the_given_directory(tmp_path, script, name, use):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler on this machine")
    done = _build(script, "--into", str(tmp_path), "--require")
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = tmp_path.glob(name + "*" + sysconfig.get_config_var("EXT_SUFFIX"))
    loader = importlib.machinery.ExtensionFileLoader(name, str(built))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    use(module)
    assert _build(script, "--into", str(tmp_path), "--require").returncode == 0  # up to date: nothing to do


@pytest.mark.parametrize(("script", "name", "use"), MODULES)
def test_without_a_compiler_make_env_goes_on_and_the_image_build_stops(tmp_path, script, name, use):
    relaxed = _build(script, "--into", str(tmp_path), cc="false")
    assert relaxed.returncode == 0 and "in Python" in relaxed.stdout
    required = _build(script, "--into", str(tmp_path), "--require", cc="false")
    assert required.returncode == 1 and "in Python" in required.stdout
    assert not list(tmp_path.iterdir()), "nothing half-built is left behind"
