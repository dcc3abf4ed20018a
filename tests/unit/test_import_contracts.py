"""The import contracts in the root pyproject.toml hold, and the pure-jar one has teeth.

`lint-imports` reads ``[tool.importlinter]``; running it here makes ``make test`` report a
broken contract like any failing test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))
PURE_CONTRACT = "The jar reader's pure half does no I/O"


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def test_every_import_contract_is_kept():
    done = _run(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def _pure_contract() -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["name"] == PURE_CONTRACT]
    return contract


@pytest.mark.parametrize(
    ("module", "line"),
    [
        ("zip/spans.py", "import socket"),
        ("zip/zipfmt.py", "import asyncio"),
        ("manifests/fabric.py", "import aiohttp"),
        ("model.py", "from indexium_jar.http import policy"),
    ],
)
def test_the_pure_contract_breaks_on_a_forbidden_import(tmp_path: Path, module: str, line: str):
    # A copy of the package with one forbidden import added, checked against the same
    # contract as the tree: the contract must name it as broken.
    shutil.copytree(ROOT / "libs/jar/src/indexium_jar", tmp_path / "indexium_jar",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "indexium_jar" / module
    target.write_text(target.read_text() + f"\n{line}\n")
    contract = _pure_contract()
    (tmp_path / "contracts.toml").write_text(
        "[tool.importlinter]\n"
        'root_packages = ["indexium_jar"]\n'
        "include_external_packages = true\n\n"
        "[[tool.importlinter.contracts]]\n"
        f"name = {json.dumps(contract['name'])}\n"
        'type = "forbidden"\n'
        f"source_modules = {json.dumps(contract['source_modules'])}\n"
        f"forbidden_modules = {json.dumps(contract['forbidden_modules'])}\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = _run(tmp_path, "--config", "contracts.toml", env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{PURE_CONTRACT} BROKEN" in done.stdout, done.stdout
    # The copy, not the installed package, was analysed.
    assert f"indexium_jar.{module.removesuffix('.py').replace('/', '.')}" in done.stdout
