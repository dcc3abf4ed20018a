"""services/indexer/build_fastwalk.py: `make env` builds the scan's C walk where there is a
compiler (and a test run must not quietly skip test_fastwalk where it could have been
built); the image's ``--require`` fails instead of falling back."""

import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from indexium_indexer.scan import zipstream

SCRIPT = Path(__file__).resolve().parents[3] / "services" / "indexer" / "build_fastwalk.py"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")


def _build(*args: str, cc: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if cc is not None:
        env["CC"] = cc
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)


def test_the_walk_is_built_where_there_is_a_compiler():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the scan walks in Python")
    assert zipstream._fastwalk is not None, "a C compiler is here but _fastwalk is not built: run `make env`"


def test_builds_a_module_that_loads_into_the_given_directory(tmp_path):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler on this machine")
    done = _build("--into", str(tmp_path), "--require")
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = tmp_path.glob("_fastwalk*" + SUFFIX)
    loader = importlib.machinery.ExtensionFileLoader("_fastwalk", str(built))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("_fastwalk", loader))
    loader.exec_module(module)
    assert callable(module.walk_batch) and callable(module.cd_batch)


def test_without_a_compiler_make_env_goes_on_and_the_image_build_stops(tmp_path):
    relaxed = _build("--into", str(tmp_path), cc="false")
    assert relaxed.returncode == 0 and "walks in Python" in relaxed.stdout
    required = _build("--into", str(tmp_path), "--require", cc="false")
    assert required.returncode == 1 and "walks in Python" in required.stdout
    assert not list(tmp_path.iterdir()), "nothing half-built is left behind"
