"""services/indexer/build_fastwalk.py: `make env` builds the scan's C walk where there is a
compiler (and a test run must not quietly skip test_fastwalk where it could have been
built); the image's ``--require`` fails instead of falling back."""

import importlib.machinery
import importlib.util
import io
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import zipfile
from array import array
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


def _load(path: Path):
    loader = importlib.machinery.ExtensionFileLoader("_fastwalk", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("_fastwalk", loader))
    loader.exec_module(module)
    return module


def _builder():
    spec = importlib.util.spec_from_file_location("build_fastwalk", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_walk_inflates_with_libdeflate_where_its_header_is():
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or zipstream._fastwalk is None:
        pytest.skip("no C compiler on this machine")
    if _builder()._libdeflate_header(cc) is None:
        assert zipstream._fastwalk.INFLATER == "zlib"
        pytest.skip("no libdeflate header here (Debian's libdeflate-dev; `make env` installs it as root)")
    assert zipstream._fastwalk.INFLATER.startswith("libdeflate "), "rebuild: `make env`"


def _walk_jars() -> dict[str, bytes]:
    from indexium_devstack import scankit as kit

    def classes(n: int, *, descriptors: bool = False) -> list:
        out = []
        for i in range(n):
            cw = kit.ClassWriter(f"com/example/lb/C{i}")
            m = cw.method("m", "()V")
            m.println(f"class {i} " + "y" * (i % 300)).op("return")
            if i % 5 == 0:
                m = cw.method("check", "()V", kit.ACC_PUBLIC | kit.ACC_STATIC)
                m.new("java/net/URL").op("dup").ldc("https://example.org/v.json")
                m.invoke("invokespecial", "java/net/URL", "<init>", "(Ljava/lang/String;)V").op("return")
            out.append((f"com/example/lb/C{i}.class", cw.to_bytes(), i % 7 != 0))
        return out

    plain = kit.zip_entries(classes(300))
    wrong_size = bytearray(plain)  # a local header giving a smaller size than the class has
    at = wrong_size.find(b"com/example/lb/C40.class")
    struct.pack_into("<I", wrong_size, at - 30 + 22, struct.unpack_from("<I", wrong_size, at - 30 + 22)[0] - 9)
    larger = bytearray(plain)  # ... and a larger one
    at = larger.find(b"com/example/lb/C41.class")
    struct.pack_into("<I", larger, at - 30 + 22, struct.unpack_from("<I", larger, at - 30 + 22)[0] + 100)
    damaged = bytearray(plain)
    at = damaged.find(b"com/example/lb/C50.class")
    damaged[at + 24 : at + 27] = b"\xff\xff\xff"
    return {"plain": plain, "wrong-size": bytes(wrong_size), "larger": bytes(larger), "damaged": bytes(damaged),
            "descriptors": kit.zip_entries(classes(100), data_descriptors=True)}


def test_the_zlib_walk_and_the_libdeflate_walk_take_the_same_entries(tmp_path):
    """Both inflaters in one process, over whole jars and damaged ones: the same entries
    walked, the same classes passed on, byte for byte, and the same stops."""
    from indexium_indexer.scan import rules

    if zipstream._fastwalk is None or not zipstream._fastwalk.INFLATER.startswith("libdeflate"):
        pytest.skip("the walk in use does not inflate with libdeflate")
    done = _build("--into", str(tmp_path), "--require", "--without-libdeflate")
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = tmp_path.glob("_fastwalk*" + SUFFIX)
    zlib_walk = _load(built)
    assert zlib_walk.INFLATER == "zlib"
    zlib_walk.set_needles(rules.C_NEEDLES)
    stops = 0
    for name, data in _walk_jars().items():
        for limit in (8 * 1024 * 1024, 2000):
            keys = sizes = None
            if name == "descriptors":  # their sizes as the indexer sends them
                infos = sorted(zipfile.ZipFile(io.BytesIO(data)).infolist(), key=lambda i: i.header_offset)
                keys = array("Q", [i.header_offset for i in infos])
                sizes = array("Q", [i.compress_size for i in infos])
            runs = [module.walk_batch(data, 0, 0, keys, sizes, 10**6, 10**9, limit, 0)
                    for module in (zipstream._fastwalk, zlib_walk)]
            assert runs[0] == runs[1], name
            stops += runs[0][0] < data.rfind(b"PK\x01\x02")
            assert runs[0][5], name  # classes passed the prefilter
    assert stops >= 4  # the damaged class, the limit: both stop before the same entry
