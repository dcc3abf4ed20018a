"""The same samples as Java source (tests/component/scan/java), compiled by javac and scanned.

Guards the hand-written class files of the test kit against drifting from what a real
compiler emits. Skipped where no JDK is installed.
"""

import shutil
import subprocess
from pathlib import Path

import pytest
from indexium_devstack import scankit as kit

from indexium_indexer.scan.archive import scan_archive
from indexium_indexer.scan.classfile import parse_class
from indexium_indexer.scan.rules import scan_class

SOURCES = Path(__file__).parent / "java"
pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="no javac on this machine")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, bytes]:
    out = tmp_path_factory.mktemp("classes")
    sources = [str(p) for p in SOURCES.rglob("*.java")]
    subprocess.run(["javac", "--release", "17", "-d", str(out), *sources], check=True, capture_output=True,
                   timeout=120)
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*.class")}


def rules_of(data: bytes) -> dict[str, object]:
    return {f.rule: f for f in scan_class(parse_class(data), "x.class", data)}


def test_clean_mod_compiled_by_javac_has_no_findings(compiled):
    for name, data in compiled.items():
        if name.startswith("com/example/clean/"):
            assert rules_of(data) == {}, name


def test_process_builder_compiled_by_javac(compiled):
    f = rules_of(compiled["com/example/pb/PbMod.class"])["process_builder"]
    assert (f.location, f.severity) == ("mod_initializer", 9)


def test_fractureiser_stage0_compiled_by_javac(compiled):
    found = rules_of(compiled["com/example/victim/VictimMod.class"])
    stage0 = found["fractureiser_stage0"]
    assert stage0.method == "_d1385bd3c36f464882460aa4f0484c53()V"
    assert stage0.location == "called_from_init"
    assert found["url_classloader"].severity == 12


def test_javac_classes_in_a_jar_nested_in_a_mod(compiled):
    inner = kit.zip_entries([(n, d, True) for n, d in compiled.items()], data_descriptors=True)
    report = scan_archive(iter([kit.nesting_jar(inner)]))
    assert report.failure is None
    paths = {f.path for f in report.findings if f.rule == "fractureiser_stage0"}
    assert paths == {"META-INF/jars/inner-1.0.0.jar!/com/example/victim/VictimMod.class"}
