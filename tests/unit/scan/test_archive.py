"""Streaming zip walk + archive scan over bytes built here: descriptors, nesting, structure tricks, limits."""

import io
import struct
import zipfile
import zlib

import pytest
from indexium_devstack import scankit as kit

from indexium_indexer.scan.archive import ScanLimits, scan_archive
from indexium_indexer.scan.zipstream import Budget, Reader, ZipWalk


def chunks(data: bytes, size: int = 65536):
    return iter([data[i : i + size] for i in range(0, len(data), size)])


def scan(data: bytes, size: int = 65536, **limits):
    return scan_archive(chunks(data, size), ScanLimits(**limits))


def rules(report):
    return {f.rule for f in report.findings}


def names(data: bytes, size: int = 65536) -> list[str]:
    walk = ZipWalk(Reader(chunks(data, size)), budget=Budget(1 << 30, 10_000))
    out = []
    for e in walk.entries():
        out.append((e.name, b"".join(e.data()) if not e.is_dir else b""))
    assert walk.problems == []
    return out


@pytest.mark.parametrize("descriptors", [False, True])
@pytest.mark.parametrize("size", [1, 7, 65536])
def test_walk_yields_every_entry_with_its_data(descriptors, size):
    entries = [("a/", b"", False), ("a/stored.bin", bytes(range(256)) * 40, False), ("a/deflated.txt", b"hello " * 500, True),
               ("empty.txt", b"", True), ("PK-inside.bin", b"xxPK\x07\x08yyPK\x03\x04" * 50, False)]
    data = kit.zip_entries(entries, data_descriptors=descriptors)
    assert names(data, size) == [(n, d) for n, d, _ in entries]


def test_stored_entry_with_descriptor_survives_fake_descriptor_signatures():
    # Data holding a descriptor signature followed by wrong CRC/size must not end the entry.
    tricky = b"PK\x07\x08" + struct.pack("<III", 0, 4, 4) + b"z" * 100
    data = kit.zip_entries([("t.bin", tricky, False), ("after.txt", b"ok", False)], data_descriptors=True)
    assert names(data, 5) == [("t.bin", tricky), ("after.txt", b"ok")]


def test_clean_mod_is_clean_with_and_without_descriptors():
    for descriptors in (False, True):
        report = scan(kit.clean_mod_jar(data_descriptors=descriptors), 4096)
        assert report.failure is None and report.findings == []
        assert report.classes >= 2 and report.entries > 5


def test_bad_mods_are_found():
    assert "process_builder" in rules(scan(kit.process_builder_jar()))
    report = scan(kit.fractureiser_jar(data_descriptors=True), 333)
    assert "fractureiser_stage0" in rules(report)
    (f,) = [f for f in report.findings if f.rule == "fractureiser_stage0"]
    assert f.path == "com/example/victimmod/VictimMod.class"


@pytest.mark.parametrize("descriptors", [False, True])
def test_nested_bad_jar_is_found_with_its_path(descriptors):
    outer = kit.nesting_jar(kit.fractureiser_jar(data_descriptors=descriptors), data_descriptors=descriptors)
    report = scan(outer, 1000)
    assert report.nested_jars == 1
    (f,) = [f for f in report.findings if f.rule == "fractureiser_stage0"]
    assert f.path == "META-INF/jars/inner-1.0.0.jar!/com/example/victimmod/VictimMod.class"


def test_deflated_nested_jar_two_levels_deep():
    inner = kit.zip_entries([("a/B.class", kit.fractureiser_stage0("a/B"), True)])
    middle = kit.zip_entries([("META-INF/jars/inner.jar", inner, True)], data_descriptors=True)
    outer = kit.zip_entries([("META-INF/jars/middle.jar", middle, True)])
    report = scan(outer)
    assert report.nested_jars == 2
    assert any(f.path == "META-INF/jars/middle.jar!/META-INF/jars/inner.jar!/a/B.class" for f in report.findings)
    assert scan(outer, max_nesting=1).failure[0] == "nesting_too_deep"


def test_a_jar_named_entry_that_is_not_a_zip_is_noted():
    report = scan(kit.zip_entries([("lib/readme.jar", b"not a zip", True)]))
    assert report.failure is None and report.notes


def test_truncated_stream_fails():
    data = kit.clean_mod_jar()
    for cut in (10, len(data) // 2, len(data) - 5):
        report = scan(data[:cut])
        assert report.failure is not None and report.failure[0] == "corrupt_zip"


def test_data_before_the_first_entry_fails():
    assert scan(b"#!/bin/sh\nexec java -jar $0\n" + kit.clean_mod_jar()).failure[0] == "corrupt_zip"


def test_central_directory_pointing_elsewhere_is_a_structure_finding():
    data = bytearray(kit.zip_with([("a.txt", b"A" * 100), ("b.txt", b"B" * 100)], zipfile.ZIP_STORED))
    cd = data.rfind(b"PK\x01\x02")  # the last record: b.txt
    struct.pack_into("<I", data, cd + 42, 40)  # its local header offset now points inside a.txt's data
    report = scan(bytes(data))
    assert report.failure is None
    assert [f.rule for f in report.findings] == ["zip_structure"]
    assert "b.txt" in report.findings[0].detail


def test_bytes_after_the_archive_and_end_record_in_comment_are_findings():
    data = kit.zip_with([("a.txt", b"x")])
    assert rules(scan(data + b"trailing junk")) == {"zip_structure"}
    with_comment = io.BytesIO()
    with zipfile.ZipFile(with_comment, "w") as zf:
        zf.writestr("a.txt", b"x")
        zf.comment = b"PK\x05\x06" + b"\0" * 18
    assert rules(scan(with_comment.getvalue())) == {"zip_structure"}


def test_zip_bomb_stops_at_the_inflate_limit():
    bomb = kit.zip_entries([("bomb.class", b"\0" * (8 << 20), True)])
    assert len(bomb) < 20_000
    assert scan(bomb, max_inflated=1 << 20).failure[0] == "inflate_limit"
    assert scan(bomb, max_class_bytes=1 << 20).failure[0] == "class_too_large"


def test_unreadable_class_naming_dangerous_apis_is_suspicious():
    bad = b"\xca\xfe\xba\xbe\0\0\0\x3d\0\x05" + b"\x01\x00\x11java/lang/Runtime" + b"\xff\xff"
    report = scan(kit.zip_entries([("x/Bad.class", bad, True), ("x/Junk.class", b"\xca\xfe\xba\xbe junk", True)]))
    assert [(f.rule, f.severity) for f in report.findings] == [("malformed_class", 6)]


def test_directory_sizes_skip_entries_without_inflating_and_agree():
    data = kit.fractureiser_jar(data_descriptors=True)
    zf = zipfile.ZipFile(io.BytesIO(data))
    sizes = {i.header_offset: i.compress_size for i in zf.infolist()}
    with_sizes = scan_archive(chunks(data, 999), ScanLimits(), sizes)
    without = scan(data, 999)
    assert with_sizes.findings == without.findings and with_sizes.failure is None


def test_deflate_stream_longer_than_declared_is_corrupt():
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = raw.compress(b"abc" * 1000) + raw.flush()
    data = bytearray(kit.zip_with([("a.txt", b"abc" * 1000)]))
    struct.pack_into("<I", data, 18, 10)  # local header: compressed size 10 (too small)
    assert scan(bytes(data)).failure[0] == "corrupt_zip"
    assert len(body) > 10


def test_a_method_name_that_is_not_modified_utf8_is_a_malformed_class_not_a_failed_scan():
    # The parse decodes method names only when a rule asks; one that does not decode used to
    # escape as UnicodeDecodeError and fail the whole scan (and its retries).
    data = bytearray(kit.update_checker())
    at = data.find(b"\x01\x00\x05check")
    data[at + 3 : at + 5] = b"\xedA"
    report = scan(kit.zip_entries([("a/B.class", bytes(data), True), ("a/C.class", kit.runtime_exec_method(), True)]))
    assert report.failure is None
    assert [(f.rule, f.path, f.detail) for f in report.findings][0] == (
        "malformed_class", "a/B.class", "malformed class file (UnicodeDecodeError)")
    assert "runtime_exec" in rules(report)  # the scan went on past it


def test_the_inflate_threads_setting_reaches_the_scan_limits():
    from indexium_indexer.scan.app import limits
    from indexium_indexer.scan.settings import Settings
    from indexium_platform.settings import SettingsError, load

    assert limits(load(Settings, {})).inflate_threads == 2 == ScanLimits().inflate_threads
    assert limits(load(Settings, {"INDEXIUM_SCAN_INFLATE_THREADS": "1"})).inflate_threads == 1
    for bad in ("0", "9"):
        with pytest.raises(SettingsError, match="INDEXIUM_SCAN_INFLATE_THREADS"):
            load(Settings, {"INDEXIUM_SCAN_INFLATE_THREADS": bad})
