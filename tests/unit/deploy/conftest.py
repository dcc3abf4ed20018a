"""Session fixtures for the deploy checks: the code's processes and every overlay rendered once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # deploy_facts, shared by the test modules

import deploy_facts as facts  # noqa: E402


def pytest_generate_tests(metafunc):
    """`overlay` runs a test once per overlay, `kustomization` once per kustomization dir."""
    if "overlay" in metafunc.fixturenames:
        metafunc.parametrize("overlay", facts.overlays())
    if "kustomization" in metafunc.fixturenames:
        dirs = facts.kustomizations()
        metafunc.parametrize("kustomization", dirs,
                             ids=[str(d.relative_to(facts.K8S)) for d in dirs])


@pytest.fixture(scope="session")
def processes() -> dict[str, facts.Process]:
    return facts.find_processes()


@pytest.fixture(scope="session")
def rendered(processes) -> dict[str, facts.Rendered]:
    return {name: facts.Rendered(name, facts.kustomize(facts.K8S / "overlays" / name), processes)
            for name in facts.overlays()}


@pytest.fixture
def objects(rendered, overlay) -> facts.Rendered:
    """The rendered overlay of a test parametrized by `overlay`."""
    return rendered[overlay]


@pytest.fixture(scope="session")
def operations_doc() -> str:
    return (facts.REPO / "docs" / "operations.md").read_text()
