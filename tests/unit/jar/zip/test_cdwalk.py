"""The jar reader's C directory walk (zip/_cdwalk.c): built where there is a compiler, and
the same records, names, descriptor flags, end and errors as the Python walk it replaces,
over real directories, damaged ones and random bytes (its build script:
tests/unit/deploy/test_c_modules.py)."""

from __future__ import annotations

import io
import shutil
import struct
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from indexium_devstack.jars import Unseekable
from indexium_jar.errors import CorruptZip
from indexium_jar.zip import zipfmt
from indexium_jar.zip.records import CENTRAL_SIG
from indexium_jar.zip.zipfmt import CentralDirectory, locate_eocd, scan_directory_suffix

SIG = CENTRAL_SIG.to_bytes(4, "little")

needs_c = pytest.mark.skipif(zipfmt._cdwalk is None, reason="no C compiler here: the Python walk only")


def _walked(monkeypatch, with_c: bool, *args, **kw):
    """What opening the directory gives: (starts, index, streamed) or the error's text."""
    with monkeypatch.context() as m:
        if not with_c:
            m.setattr(zipfmt, "_cdwalk", None)
        try:
            d = CentralDirectory(*args, **kw)
        except CorruptZip as exc:
            return ("corrupt", str(exc))
        return d._starts, d._index, d._streamed, d._meta


def _both(monkeypatch, *args, **kw):
    c, py = _walked(monkeypatch, True, *args, **kw), _walked(monkeypatch, False, *args, **kw)
    assert c == py
    return c


def _directory(names: list[str], *, descriptors: bool = False, extra: bytes = b"") -> tuple[bytes, int, int]:
    out = Unseekable() if descriptors else io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for i, n in enumerate(names):
            info = zipfile.ZipInfo(n, date_time=(2024, 1, 1, 0, 0, 0))
            info.extra = extra if i % 3 == 0 else b""
            info.comment = b"c" * (i % 4)
            with zf.open(info, "w") as fh:
                fh.write(n.encode() * 2)
    data = (out.buf if descriptors else out).getvalue()
    info = locate_eocd(data, 0, len(data))
    return data, info.cd_offset, info.cd_offset + info.cd_size


def test_the_walk_is_built_where_there_is_a_compiler():
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler on this machine: the reader walks in Python")
    assert zipfmt._cdwalk is not None, "a C compiler is here but _cdwalk is not built: run `make env`"


@needs_c
@pytest.mark.parametrize("descriptors", [False, True])
def test_real_directories_walk_the_same(monkeypatch, descriptors):
    names = [f"com/example/p{i // 50}/C{i}.class" for i in range(400)] + ["fabric.mod.json", "a" * 32, "b" * 33, ""]
    names += ["META-INF/", "META-INF", "META-INF/jars/x.jar", "META-INF/mods.toml", "x/META-INF/y"]
    data, start, end = _directory(names, descriptors=descriptors, extra=b"\xfe\xca\x00\x00")
    starts, index, streamed, meta = _both(monkeypatch, data, start=start, end=end)
    assert len(starts) == len(names) and (len(streamed) == len(names)) == descriptors
    assert len(meta) == 3  # META-INF/, META-INF/jars/x.jar, META-INF/mods.toml
    assert b"fabric.mod.json" in index and b"a" * 32 in index and b"b" * 33 not in index
    # read in place inside a larger window, and joined to an already walked suffix
    suffix = scan_directory_suffix(data, 0, start, end)
    assert suffix is not None
    assert _both(monkeypatch, data, start=start, end=end, suffix=suffix)[0] == starts


@needs_c
def test_damaged_directories_fail_the_same(monkeypatch):
    data, start, end = _directory([f"x/{i}.txt" for i in range(30)])
    first = data.index(SIG, start)
    second = data.index(SIG, first + 4)
    cases = {
        "bad signature": data[:second] + b"PK\x01\x03" + data[second + 4 :],
        "name running past the end": data[:end - 2],
        "record cut short": data[:second + 20],
    }
    for what, damaged in cases.items():
        stop = min(end, len(damaged))
        assert _both(monkeypatch, damaged, start=start, end=stop)[0] == "corrupt", what
    # a name length pointing past the data: the name is clamped as a slice is, then the end is past
    longer = bytearray(data)
    struct.pack_into("<H", longer, second + 28, 60000)
    assert _both(monkeypatch, bytes(longer), start=start, end=end) == ("corrupt", "truncated central directory")


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(0, 400), st.integers(0, 400), st.randoms(use_true_random=False))
def test_random_bytes_walk_the_same(data, a, b, rng):
    # records with random lengths and flags among random bytes: every path of the loop
    pieces = [data]
    for _ in range(rng.randrange(0, 6)):
        nlen, elen, clen = rng.randrange(0, 40), rng.randrange(0, 8), rng.randrange(0, 8)
        name = (b"META-INF/"[: rng.randrange(0, 10)] + rng.randbytes(nlen))[:nlen + rng.randrange(0, 3)]
        pieces.append(SIG + bytes(4) + struct.pack("<H", rng.randrange(0, 65536)) + bytes(18)
                      + struct.pack("<HHH", nlen, elen, clen) + bytes(12) + name + rng.randbytes(elen + clen))
    rng.shuffle(pieces)
    blob = b"".join(pieces)
    start, end = sorted((a % (len(blob) + 1), b % (len(blob) + 1)))
    with pytest.MonkeyPatch.context() as m:
        assert _walked(m, True, blob, start=start, end=end) == _walked(m, False, blob, start=start, end=end)
